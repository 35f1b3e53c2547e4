// SPDX-License-Identifier: GPL-2.0
/*
 * metrics.c - the Prometheus text exposition format (what node_exporter's
 * textfile collector and `promtool check metrics` parse): every family has
 * HELP and TYPE, base units (seconds) in the name, counters end in _total,
 * labels are snake_case with escaped values. Metric names and labels are
 * listed in docs/recording.md, "Prometheus".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "metrics.h"
#include "../store/ntpfile.h"
#include "report.h"

void ntp_metrics_init(struct ntp_metrics_state *st)
{
	memset(st, 0, sizeof(*st));
}

static struct ntp_metrics_group *find(struct ntp_metrics_state *st, const struct ntp_snap_group *g)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (st->g[i].io == g->io && st->g[i].len == g->len &&
		    !strncmp(st->g[i].dev, g->dev, NTP_DEV_LEN))
			return &st->g[i];
	if (st->n == NTP_METRICS_MAX_GROUPS) {
		st->dropped_groups++;
		return NULL;
	}
	struct ntp_metrics_group *m = &st->g[st->n++];

	m->io = g->io;
	m->len = g->len;
	memcpy(m->dev, g->dev, NTP_DEV_LEN);
	m->dev[NTP_DEV_LEN - 1] = '\0';
	return m;
}

void ntp_metrics_add(struct ntp_metrics_state *st, const struct ntp_snapshot *s)
{
	for (uint32_t i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *g = &s->groups[i];
		struct ntp_metrics_group *m = find(st, g);

		if (!m)
			continue;
		m->host_only = g->host_only;
		m->sampled += g->sampled;
		if (g->commands) {
			m->commands += g->commands;
			m->counted = 1;
		}
	}
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(FILE *f, const char *v, size_t max)
{
	for (size_t i = 0; i < max && v[i]; i++) {
		if (v[i] == '\\' || v[i] == '"')
			fprintf(f, "\\%c", v[i]);
		else if (v[i] == '\n')
			fputs("\\n", f);
		else
			fputc(v[i], f);
	}
}

struct out {
	FILE *f;
	const struct ntp_snapshot *s;
};

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{role=..,transport=..[,namespace=..,io_type=..,size_bytes=..][,extra]} value */
static void sample(const struct out *o, const char *name, const char *dev, uint8_t io, uint32_t len,
		   const char *extra, double v)
{
	FILE *f = o->f;

	fprintf(f, "%s{role=\"%s\",transport=\"%s\"", name, ntp_role_name(o->s->role),
		ntp_transport_name(o->s->transport));
	if (dev) {
		fputs(",namespace=\"", f);
		label_value(f, dev, NTP_DEV_LEN);
		fprintf(f, "\",io_type=\"%s\",size_bytes=\"%u\"", ntp_io_name(io), len);
	}
	if (extra)
		fprintf(f, ",%s", extra);
	fprintf(f, "} %.9g\n", v);
}

static const char *stage_label(int st, int host_only)
{
	if (st == NTP_STAGE_NETWORK && host_only)
		return "network_and_target";
	return ntp_stage_key((enum ntp_stage)st);
}

static int counters(FILE *f, const struct ntp_metrics_state *st, const struct ntp_snapshot *s);

int ntp_metrics_render(FILE *f, const struct ntp_metrics_state *st, const struct ntp_snapshot *s)
{
	const struct out o = { f, s };
	char extra[96];

	family(f, "ntprof_interval_seconds", "gauge", "Length of the interval the gauges cover.");
	sample(&o, "ntprof_interval_seconds", NULL, 0, 0, NULL, s->seconds);
	family(f, "ntprof_sampling_ratio", "gauge", "Fraction of the commands sampled (1/N for -s N).");
	sample(&o, "ntprof_sampling_ratio", NULL, 0, 0, NULL, s->sampling ? 1.0 / s->sampling : 0);

	family(f, "ntprof_latency_seconds", "gauge",
	       "End-to-end latency of the sampled commands over the last interval.");
	for (uint32_t i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *g = &s->groups[i];

		if (!g->sampled)
			continue;
		sample(&o, "ntprof_latency_seconds", g->dev, g->io, g->len, "statistic=\"mean\"", g->e2e_mean_us / 1e6);
		sample(&o, "ntprof_latency_seconds", g->dev, g->io, g->len, "statistic=\"p99\"", g->e2e_p99_us / 1e6);
	}
	family(f, "ntprof_stage_latency_seconds", "gauge",
	       "Time the sampled commands spent in each stage over the last interval.");
	for (uint32_t i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *g = &s->groups[i];

		for (int k = 0; g->sampled && k < NTP_STAGE_COUNT; k++) {
			const struct ntp_snap_stage *sg = &g->stage[k];

			if (!sg->present)
				continue;
			snprintf(extra, sizeof(extra), "stage=\"%s\",statistic=\"mean\"", stage_label(k, g->host_only));
			sample(&o, "ntprof_stage_latency_seconds", g->dev, g->io, g->len, extra, sg->mean_us / 1e6);
			snprintf(extra, sizeof(extra), "stage=\"%s\",statistic=\"p99\"", stage_label(k, g->host_only));
			sample(&o, "ntprof_stage_latency_seconds", g->dev, g->io, g->len, extra, sg->p99_us / 1e6);
		}
	}
	family(f, "ntprof_stage_queue_depth", "gauge",
	       "Average number of commands in each stage over the last interval (counted, or by Little's law).");
	for (uint32_t i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *g = &s->groups[i];

		for (int k = 0; g->sampled && k < NTP_STAGE_COUNT; k++) {
			if (!g->stage[k].present)
				continue;
			snprintf(extra, sizeof(extra), "stage=\"%s\",method=\"%s\"", stage_label(k, g->host_only),
				 g->qd_counted ? "counted" : "little");
			sample(&o, "ntprof_stage_queue_depth", g->dev, g->io, g->len, extra, g->stage[k].avg_qd);
		}
	}
	family(f, "ntprof_commands_per_second", "gauge",
	       "Commands of the group per second over the last interval (counted in the kernel, else estimated from the sample).");
	for (uint32_t i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *g = &s->groups[i];

		sample(&o, "ntprof_commands_per_second", g->dev, g->io, g->len, NULL, g->rate);
	}

	return counters(f, st, s);
}

/* The counters: of the groups from st, of the records from s (cumulative) */
static int counters(FILE *f, const struct ntp_metrics_state *st, const struct ntp_snapshot *s)
{
	const struct out o = { f, s };

	family(f, "ntprof_sampled_commands_total", "counter", "Sampled commands of the group in the statistics.");
	for (uint32_t i = 0; i < st->n; i++)
		sample(&o, "ntprof_sampled_commands_total", st->g[i].dev, st->g[i].io, st->g[i].len, NULL,
		       (double)st->g[i].sampled);
	family(f, "ntprof_commands_total", "counter", "Commands of the group counted in the kernel, sampled or not.");
	for (uint32_t i = 0; i < st->n; i++)
		if (st->g[i].counted)
			sample(&o, "ntprof_commands_total", st->g[i].dev, st->g[i].io, st->g[i].len, NULL,
			       (double)st->g[i].commands);
	family(f, "ntprof_records_total", "counter", "Records received from each side.");
	sample(&o, "ntprof_records_total", NULL, 0, 0, "side=\"host\"", (double)s->host_records);
	sample(&o, "ntprof_records_total", NULL, 0, 0, "side=\"target\"", (double)s->target_records);
	family(f, "ntprof_joined_records_total", "counter", "Host records joined with their target record.");
	sample(&o, "ntprof_joined_records_total", NULL, 0, 0, NULL, (double)s->matched);
	family(f, "ntprof_lost_events_total", "counter",
	       "Records lost before ntprof had them (kernel or SPDK ring buffer full, SPDK commands in flight past "
	       "the stop).");
	sample(&o, "ntprof_lost_events_total", NULL, 0, 0, NULL, (double)s->lost_events);
	return ferror(f) ? -1 : 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int ntp_metrics_render_end(FILE *f, const struct ntp_metrics_state *st, const struct ntp_snapshot *run)
{
	return counters(f, st, run);
}

/* Renders (gauges too, or the counters only) into a temporary file beside
 * path and renames it over path. */
static int write_file(const char *path, const struct ntp_metrics_state *st, const struct ntp_snapshot *s,
		      int gauges, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *tmp;
	FILE *f;
	int fd, e;

	/* A dot file in the same directory: rename() is atomic there, and
	 * node_exporter reads only *.prom. */
	if (asprintf(&tmp, "%.*s.%s.XXXXXX", (int)dlen, path, path + dlen) < 0)
		return fail(err, errlen, "%s: %s", path, strerror(ENOMEM));
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		free(tmp);
		return fail(err, errlen, "%s: cannot create a file beside it: %s", path, strerror(e));
	}
	f = fdopen(fd, "w");
	if (!f) {
		e = errno;
		close(fd);
		goto out_err;
	}
	/* mkstemp makes 0600; the collector may run as another user. */
	(void)fchmod(fd, 0644);
	if ((gauges ? ntp_metrics_render(f, st, s) : ntp_metrics_render_end(f, st, s)) < 0 || fflush(f) != 0) {
		e = errno ? errno : EIO;
		fclose(f);
		goto out_err;
	}
	if (fclose(f) != 0) {
		e = errno;
		goto out_err;
	}
	if (rename(tmp, path) < 0) {
		e = errno;
		goto out_err;
	}
	free(tmp);
	return 0;
out_err:
	unlink(tmp);
	free(tmp);
	return fail(err, errlen, "%s: %s", path, strerror(e));
}

int ntp_metrics_write(const char *path, struct ntp_metrics_state *st, const struct ntp_snapshot *s,
		      char *err, size_t errlen)
{
	ntp_metrics_add(st, s);
	return write_file(path, st, s, 1, err, errlen);
}

int ntp_metrics_write_end(const char *path, const struct ntp_metrics_state *st, const struct ntp_snapshot *run,
			  char *err, size_t errlen)
{
	return write_file(path, st, run, 0, err, errlen);
}
