// SPDX-License-Identifier: GPL-2.0
/* test_metrics.c - the Prometheus text of `ntprof record --metrics`
 * (src/core/render/metrics.c): exact sample lines from a hand-built snapshot, the
 * counters accumulating over intervals, label escaping, the grammar and the
 * naming rules line by line, and the atomic replacement of the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/render/metrics.h"
#include "top_fixture.h"

static char *render(const struct ntp_metrics_state *st, const struct ntp_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(ntp_metrics_render(f, st, s), 0);
	fclose(f);
	return buf;
}

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

#define LINE(text, l) do { if (!has_line(text, l)) fail_msg("missing line: %s\n%s", l, text); } while (0)

/* The text exposition format, line by line: HELP and TYPE once per family
 * and before its samples; a sample is name{label="value",...} number; names
 * and label names in the allowed alphabet; counters end in _total and gauges
 * do not; no series twice. Returns NULL or what is wrong. */
static const char *lint(const char *text, char *why, size_t wlen)
{
	regex_t sample, label;
	char fam_help[64][64] = { 0 }, fam_type[64][64] = { 0 }, types[64][16] = { 0 };
	int nh = 0, nt = 0;
	char *copy = strdup(text), *save = NULL, *series[512];
	int nseries = 0;
	const char *bad = NULL;

	assert_int_equal(regcomp(&sample, "^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (-?[0-9.]+(e[-+]?[0-9]+)?|NaN|[-+]Inf)$",
				 REG_EXTENDED), 0);
	assert_int_equal(regcomp(&label, "^[a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\n]|\\\\[\\\\\"n])*\"(,|$)", REG_EXTENDED), 0);
	for (char *l = strtok_r(copy, "\n", &save); l && !bad; l = strtok_r(NULL, "\n", &save)) {
		char name[64], type[16];
		regmatch_t m[6];

		if (sscanf(l, "# HELP %63s", name) == 1) {
			for (int i = 0; i < nh; i++)
				if (!strcmp(fam_help[i], name))
					bad = "HELP twice";
			if (nh < 64)
				strcpy(fam_help[nh++], name);
			continue;
		}
		if (sscanf(l, "# TYPE %63s %15s", name, type) == 2) {
			if (strcmp(type, "gauge") && strcmp(type, "counter"))
				bad = "unknown TYPE";
			for (int i = 0; i < nt; i++)
				if (!strcmp(fam_type[i], name))
					bad = "TYPE twice";
			if (nt < 64) {
				strcpy(types[nt], type);
				strcpy(fam_type[nt++], name);
			}
			int counter = !strcmp(type, "counter");
			int total = strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "_total");

			if (counter != total)
				bad = "a counter's name must end in _total, a gauge's must not";
			continue;
		}
		if (l[0] == '#') {
			bad = "unknown comment";
			break;
		}
		if (regexec(&sample, l, 6, m, 0)) {
			bad = "not a sample line";
			break;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(m[1].rm_eo - m[1].rm_so), l + m[1].rm_so);
		int typed = 0, helped = 0;

		for (int i = 0; i < nt; i++)
			typed |= !strcmp(fam_type[i], name);
		for (int i = 0; i < nh; i++)
			helped |= !strcmp(fam_help[i], name);
		if (!typed || !helped)
			bad = "a sample before its family's HELP and TYPE";
		if (m[3].rm_so >= 0) {
			const char *p = l + m[3].rm_so, *end = l + m[3].rm_eo;

			while (p < end && !bad) {
				regmatch_t lm[1];
				char one[256];

				snprintf(one, sizeof(one), "%.*s", (int)(end - p), p);
				if (regexec(&label, one, 1, lm, 0))
					bad = "bad label";
				else
					p += lm[0].rm_eo;
			}
		}
		size_t key = (size_t)m[4].rm_so;	/* name{labels} and the space */

		for (int i = 0; i < nseries; i++)
			if (strlen(series[i]) > key && !strncmp(series[i], l, key))
				bad = "a series twice";
		if (nseries < 512)
			series[nseries++] = l;
		if (bad)
			snprintf(why, wlen, "%s: %s", bad, l);
	}
	if (bad && !why[0])
		snprintf(why, wlen, "%s", bad);
	regfree(&sample);
	regfree(&label);
	free(copy);
	return bad ? why : NULL;
}

static void test_lines(void **state)
{
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_metrics_state *st = malloc(sizeof(*st));
	char *t;

	(void)state;
	fixture_snapshot(s, 0);
	s->groups[0].commands = 12200;
	s->host_records = 276;
	s->target_records = 153;
	s->matched = 153;
	ntp_metrics_init(st);
	ntp_metrics_add(st, s);
	t = render(st, s);
	LINE(t, "# TYPE ntprof_latency_seconds gauge");
	LINE(t, "ntprof_latency_seconds{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\",statistic=\"mean\"} 8.234e-05");
	LINE(t, "ntprof_latency_seconds{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\",statistic=\"p99\"} 9.125e-05");
	LINE(t, "ntprof_stage_latency_seconds{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\",stage=\"storage\",statistic=\"mean\"} 5.967e-05");
	LINE(t, "ntprof_stage_latency_seconds{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"write\","
		"size_bytes=\"131072\",stage=\"network\",statistic=\"p99\"} 0.0001602");
	/* host-only data: the network stage holds the target too, and says so */
	LINE(t, "ntprof_stage_latency_seconds{role=\"both\",transport=\"tcp\",namespace=\"nvme6n1\",io_type=\"read\","
		"size_bytes=\"4096\",stage=\"network_and_target\",statistic=\"mean\"} 7.12e-05");
	assert_null(strstr(t, "namespace=\"nvme6n1\",io_type=\"read\",size_bytes=\"4096\",stage=\"storage\""));
	/* Little's law: 59.67 us x 12200/s */
	LINE(t, "ntprof_stage_queue_depth{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\",stage=\"storage\",method=\"little\"} 0.727974");
	LINE(t, "ntprof_commands_per_second{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\"} 12200");
	LINE(t, "# TYPE ntprof_sampled_commands_total counter");
	LINE(t, "ntprof_sampled_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme6n1\",io_type=\"read\","
		"size_bytes=\"4096\"} 154");
	/* only the group the kernel counted has a command counter */
	LINE(t, "ntprof_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\"} 12200");
	assert_null(strstr(t, "ntprof_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme6n1\""));
	LINE(t, "ntprof_records_total{role=\"both\",transport=\"tcp\",side=\"target\"} 153");
	LINE(t, "ntprof_lost_events_total{role=\"both\",transport=\"tcp\"} 0");
	LINE(t, "ntprof_sampling_ratio{role=\"both\",transport=\"tcp\"} 0.01");
	free(t);
	free(s);
	free(st);
}

static void test_counters_accumulate(void **state)
{
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_metrics_state *st = malloc(sizeof(*st));
	char *t;

	(void)state;
	ntp_metrics_init(st);
	for (uint64_t k = 0; k < 5; k++) {
		fixture_snapshot(s, k);
		s->groups[0].commands = 1000 + k;
		if (k == 3)	/* a group absent from one interval keeps its counters */
			s->n_groups = 1;
		ntp_metrics_add(st, s);
	}
	t = render(st, s);
	LINE(t, "ntprof_sampled_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\"} 610");
	LINE(t, "ntprof_sampled_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme6n1\",io_type=\"read\","
		"size_bytes=\"4096\"} 616");
	LINE(t, "ntprof_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		"size_bytes=\"4096\"} 5010");
	LINE(t, "ntprof_lost_events_total{role=\"both\",transport=\"tcp\"} 2");	/* the snapshot's, cumulative */
	free(t);
	free(s);
	free(st);
}

static void test_grammar_and_escaping(void **state)
{
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_metrics_state *st = malloc(sizeof(*st));
	char why[512] = "", *t;

	(void)state;
	fixture_snapshot(s, 4);
	strcpy(s->groups[1].dev, "a\"b\\c\nd");
	s->groups[0].qd_counted = 1;
	s->role = NTP_ROLE_HOST;
	s->transport = NTP_TRANSPORT_RDMA;
	ntp_metrics_init(st);
	ntp_metrics_add(st, s);
	t = render(st, s);
	if (lint(t, why, sizeof(why)))
		fail_msg("%s\n%s", why, t);
	LINE(t, "ntprof_commands_per_second{role=\"host\",transport=\"rdma\",namespace=\"a\\\"b\\\\c\\nd\","
		"io_type=\"write\",size_bytes=\"131072\"} 3100");
	assert_non_null(strstr(t, "stage=\"storage\",method=\"counted\"}"));
	/* and the checker is not blind */
	assert_non_null(lint("ntprof_x{a=\"1\"} 1\n", why, sizeof(why)));
	assert_non_null(lint("# HELP ntprof_x x\n# TYPE ntprof_x counter\nntprof_x 1\n", why, sizeof(why)));
	assert_non_null(lint("# HELP ntprof_x x\n# TYPE ntprof_x gauge\nntprof_x{a=b} 1\n", why, sizeof(why)));
	assert_non_null(lint("# HELP ntprof_x x\n# TYPE ntprof_x gauge\nntprof_x{a=\"1\"} 1\nntprof_x{a=\"1\"} 2\n",
			     why, sizeof(why)));
	free(t);
	free(s);
	free(st);
}

/* Prometheus' own linter, when Debian's prometheus package is installed. */
static void test_promtool(void **state)
{
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_metrics_state *st = malloc(sizeof(*st));
	char path[] = "/tmp/ntp-promtool-XXXXXX", cmd[128], *t;
	int fd, rc;

	(void)state;
	if (system("command -v promtool >/dev/null 2>&1")) {
		free(s);
		free(st);
		skip();
	}
	fixture_snapshot(s, 6);
	s->groups[0].commands = 700;
	s->groups[1].qd_counted = 1;
	ntp_metrics_init(st);
	ntp_metrics_add(st, s);
	t = render(st, s);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, strlen(t)), (ssize_t)strlen(t));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	rc = system(cmd);
	unlink(path);
	assert_int_equal(rc, 0);
	free(t);
	free(s);
	free(st);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_write_atomic(void **state)
{
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_metrics_state *st = malloc(sizeof(*st));
	char dir[] = "/tmp/ntp-metrics-XXXXXX", path[64], err[256], buf[65536];
	struct stat sb;
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ntprof.prom", dir);
	ntp_metrics_init(st);
	fixture_snapshot(s, 0);
	assert_int_equal(ntp_metrics_write(path, st, s, err, sizeof(err)), 0);
	fixture_snapshot(s, 1);
	assert_int_equal(ntp_metrics_write(path, st, s, err, sizeof(err)), 0);
	/* the file alone (no temporary left), readable by a collector of another user */
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644);
	f = fopen(path, "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	/* two intervals added: 122 + 122 sampled */
	LINE(buf, "ntprof_sampled_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		  "size_bytes=\"4096\"} 244");
	unlink(path);
	rmdir(dir);
	/* a directory that is not there: one line naming the file */
	assert_int_equal(ntp_metrics_write("/nonexistent-dir/x.prom", st, s, err, sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent-dir/x.prom: cannot create a file beside it: No such file or directory");
	free(s);
	free(st);
}

/* At the end of the run the file keeps the counters and drops the last
 * interval's gauges: a collector reading it once the recorder is gone
 * exports nothing of an interval as current */
static void test_write_end(void **state)
{
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_metrics_state *st = malloc(sizeof(*st));
	char dir[] = "/tmp/ntp-metrics-XXXXXX", path[64], err[256], buf[65536], why[256];
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ntprof.prom", dir);
	ntp_metrics_init(st);
	fixture_snapshot(s, 0);
	assert_int_equal(ntp_metrics_write(path, st, s, err, sizeof(err)), 0);
	assert_int_equal(ntp_metrics_write_end(path, st, s, err, sizeof(err)), 0);
	assert_int_equal(count_entries(dir), 1);
	f = fopen(path, "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	if (strstr(buf, " gauge\n") || strstr(buf, "ntprof_interval_seconds") || strstr(buf, "ntprof_latency_seconds"))
		fail_msg("a gauge left at the end:\n%s", buf);
	LINE(buf, "ntprof_sampled_commands_total{role=\"both\",transport=\"tcp\",namespace=\"nvme1n1\",io_type=\"read\","
		  "size_bytes=\"4096\"} 122");
	LINE(buf, "# TYPE ntprof_records_total counter");
	if (lint(buf, why, sizeof(why)))
		fail_msg("%s\n%s", why, buf);
	unlink(path);
	rmdir(dir);
	free(s);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_counters_accumulate),
		cmocka_unit_test(test_grammar_and_escaping),
		cmocka_unit_test(test_write_atomic),
		cmocka_unit_test(test_write_end),
		cmocka_unit_test(test_promtool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
