// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - the text report (docs/stage-model.md) and the per-interval line
 * (docs/recording.md),
 * rendered from a snapshot. Layout:
 *
 *   recorded on HOST (kernel K), one command in N sampled
 *   === D s, one command in N sampled ===
 *   throughput (...): read X kIOPS, Y MB/s
 *   == read 4KiB nvme0n1: S commands sampled (from about R commands/s), all with the target's side
 *   latency (us): mean, p50, p99, p99.9
 *   stage table (mean, share, avg QD by Little's law, or counted with
 *   --exact-queues, a bar of '#': 24 for 100 %)
 *   largest: ...
 *   [--detail: the component table]
 *   records: H host, T target; M matched (P % of the host's)
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include "esc.h"
#include "../store/ntpfile.h"
#include "report.h"
#include "report_int.h"

#define BAR_FULL 24	/* '#' for a 100 % share: an 82 % share is 20 of them */

void ntp_report_meta_init(struct ntp_report_meta *m)
{
	/* the strings are read up to n_notes and damaged's NUL: their 74 KB
	 * stay as they are, pages of a caller's stack a memset would fault
	 * in one by one (docs/performance.md, "Memory written for nobody") */
	memset(m, 0, offsetof(struct ntp_report_meta, notes));
	m->damaged[0] = '\0';
	memset(&m->hostq, 0, sizeof(*m) - offsetof(struct ntp_report_meta, hostq));
}

void ntp_report_note(struct ntp_report_meta *m, const char *fmt, ...)
{
	va_list ap;

	if (m->n_notes >= NTP_REPORT_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(m->notes[m->n_notes++], sizeof(m->notes[0]), fmt, ap);
	va_end(ap);
}

const char *ntp_io_name(uint8_t io)
{
	switch (io) {
	case NTP_IO_READ:
		return "read";
	case NTP_IO_WRITE:
		return "write";
	default:
		return "other";
	}
}

void ntp_size_label(uint32_t bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 20) && !(bytes & ((1u << 20) - 1)))
		snprintf(buf, len, "%uMiB", bytes >> 20);
	else if (bytes >= 1024 && !(bytes & 1023))
		snprintf(buf, len, "%uKiB", bytes >> 10);
	else
		snprintf(buf, len, "%uB", bytes);
}

void ntp_group_label(const struct ntp_snap_group *g, char *buf, size_t len)
{
	char sz[16];

	ntp_size_label(g->len, sz, sizeof(sz));
	/* no device: target records whose completion was not seen, and whose
	 * namespace no other record told (model.c group_resolve) */
	if (!g->dev[0] && !g->len && g->io != NTP_IO_OTHER)
		snprintf(buf, len, "%s, size and namespace unknown", ntp_io_name(g->io));
	else if (!g->dev[0])
		snprintf(buf, len, "%s %s, namespace unknown", ntp_io_name(g->io), sz);
	else
		snprintf(buf, len, "%s %s %s", ntp_io_name(g->io), sz, ntp_esc(g->dev));
}

void ntp_rate_label(double v, char *buf, size_t len)
{
	if (v >= 999.95e3)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 999.5)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v > 0 && v < 0.95)	/* a rare group's: not "0" */
		snprintf(buf, len, "%.2g", v);
	else
		snprintf(buf, len, "%.0f", v);
}

static double pct(double share)
{
	return 100.0 * share;
}

unsigned ntp_stage_rows(const struct ntp_snapshot *s, const struct ntp_snap_group *g,
			struct ntp_stage_row *rows, unsigned max)
{
	unsigned n = 0;
	double e2e = g->e2e_mean_us;

	for (int st = 0; st < NTP_STAGE_COUNT && n < max; st++) {
		const struct ntp_snap_stage *x = &g->stage[st];

		if (!x->present)
			continue;
		if (st == NTP_STAGE_NETWORK && g->host_only && n + 1 < max) {
			/* host-only data (docs/stage-model.md): the host's receive path apart from what it cannot see. */
			double rest = g->comp[NTP_COMP_NET_AND_TARGET].n
				      ? g->comp[NTP_COMP_NET_AND_TARGET].mean_us *
					g->comp[NTP_COMP_NET_AND_TARGET].n / (double)(g->sampled ? g->sampled : 1)
				      : 0;
			double recv = x->mean_us - rest;
			/* --exact-queues: the kernel summed the receive paths apart */
			double qd_recv = g->qd_counted ? g->qd_host_recv : recv * 1e-6 * g->rate;
			double qd_rest = g->qd_counted ? x->avg_qd - g->qd_host_recv : rest * 1e-6 * g->rate;

			rows[n++] = (struct ntp_stage_row){ "host receive path", recv,
				e2e ? recv / e2e : 0, qd_recv, st, NTP_PART_HOST_RECV };
			rows[n++] = (struct ntp_stage_row){ "network and target (not recorded)", rest,
				e2e ? rest / e2e : 0, qd_rest, st, NTP_PART_NET_AND_TARGET };
			continue;
		}
		if (st == NTP_STAGE_NETWORK && g->target_only) {
			rows[n++] = (struct ntp_stage_row){
				g->comp[NTP_COMP_DATA_XFER].n ? "target receive path, data transfer"
							      : "target receive path",
				x->mean_us, x->share, x->avg_qd, st, NTP_PART_TARGET_RECV };
			continue;
		}
		rows[n++] = (struct ntp_stage_row){
			ntp_stage_name(st, s->transport, s->impl_host, s->impl_target, g->host_only),
			x->mean_us, x->share, x->avg_qd, st, NTP_PART_WHOLE };
	}
	return n;
}

static void bar(FILE *f, double share)
{
	long n = lround(share * BAR_FULL);

	if (n > BAR_FULL)
		n = BAR_FULL;
	if (n > 0)
		fputc(' ', f);
	for (long i = 0; i < n; i++)
		fputc('#', f);
}

static void print_throughput(FILE *f, const struct ntp_snapshot *s)
{
	double iops[3] = { 0 }, mbps[3] = { 0 };
	int any[3] = { 0 }, counted = 1, first = 1;

	for (unsigned i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *g = &s->groups[i];
		unsigned io = g->io < 3 ? g->io : 2;

		iops[io] += g->iops;
		mbps[io] += g->mbps;
		any[io] = 1;
		if (!g->commands)
			counted = 0;
	}
	fprintf(f, "throughput (%s):", counted ? "commands counted in the kernel"
					       : "estimated from the sampled commands");
	for (int io = 0; io < 3; io++) {
		char r[32];

		if (!any[io])
			continue;
		if (iops[io] >= 999.95e3)
			snprintf(r, sizeof(r), "%.2f MIOPS", iops[io] / 1e6);
		else if (iops[io] >= 999.5)
			snprintf(r, sizeof(r), "%.1f kIOPS", iops[io] / 1e3);
		else
			snprintf(r, sizeof(r), "%.0f IOPS", iops[io]);
		fprintf(f, "%s %s %s, %.1f MB/s", first ? "" : ";", ntp_io_name((uint8_t)io), r, mbps[io]);
		first = 0;
	}
	if (first)
		fprintf(f, " none");
	fputc('\n', f);
}

int ntp_mean_enough(uint64_t n)
{
	return n >= NTP_MEAN_MIN_SAMPLES;
}

int ntp_group_qd_note(const struct ntp_report_meta *m, const struct ntp_snap_group *g, char *buf, size_t len)
{
	const struct ntp_hostq *q = NULL;
	double sum = 0;
	unsigned bound;

	/* Little's-law QDs only (counted ones are every command's), of one
	 * host's queues (several hosts' commands share a group), whose host
	 * block layer starts at the request: from the bio's submission it
	 * holds the wait for a tag too, in flight but holding none
	 * (docs/stage-model.md, "Stage QDs above what can be in flight") */
	if (!m || !m->hostq || m->n_hosts > 1 || g->qd_counted || g->target_only || !g->sampled ||
	    g->bio_records)
		return 0;
	for (unsigned i = 0; i < m->n_hostq && !q; i++)
		if (!strncmp(m->hostq[i].dev, g->dev, NTP_DEV_LEN))
			q = &m->hostq[i];
	if (!q || !q->tags || !q->hw_queues)
		return 0;
	bound = q->tags * q->hw_queues;
	for (int st = 0; st < NTP_STAGE_COUNT; st++)
		sum += g->stage[st].present ? g->stage[st].avg_qd : 0;
	/* as printed: 4.00 of 4 is not above */
	if (round(sum * 100) <= bound * 100.0)
		return 0;
	snprintf(buf, len, "the stages' avg QD (rate x mean) add up to %.2f, above the %u the host's queues "
		 "hold in flight (%u tag%s x %u hardware queue%s): the mean of the %llu command%s sampled reads "
		 "above all commands'%s", sum, bound, q->tags, q->tags == 1 ? "" : "s", q->hw_queues,
		 q->hw_queues == 1 ? "" : "s", (unsigned long long)g->sampled, g->sampled == 1 ? "" : "s",
		 ntp_mean_enough(g->sampled) ? "" : " (too few)");
	return 1;
}

void ntp_pct_label(char *buf, size_t len, const char *name, double us, uint64_t n, double q)
{
	if (ntp_pct_enough(n, q))
		snprintf(buf, len, "%s %.2f", name, us);
	else
		snprintf(buf, len, "%s %.2f (n=%llu: too few)", name, us, (unsigned long long)n);
}

/* A p99 column: the value, '?' after it from fewer than 100 samples. */
static void p99_cell(FILE *f, int width, double us, uint64_t n)
{
	if (ntp_pct_enough(n, 0.99))
		fprintf(f, " %*.2f", width, us);
	else
		fprintf(f, " %*.2f?", width - 1, us);
}

static void print_components(FILE *f, const struct ntp_snap_group *g)
{
	/* the paragraph only where a backpressure row reads above 0.00 */
	int bp = g->comp[NTP_COMP_BP_WIRE].mean_us >= 0.005 || g->comp[NTP_COMP_BP_RECV].mean_us >= 0.005 ||
		 g->comp[NTP_COMP_BP_RSP].mean_us >= 0.005;
	int few = 0;

	fprintf(f, "components, in path order (L: commands in each, by Little's law)\n");
	fprintf(f, "%-40s %8s %9s %7s %9s %9s  (us)\n", "component", "n", "mean", "L", "p50", "p99");
	for (int i = 0; i < NTP_COMP_COUNT; i++) {
		enum ntp_component c = ntp_component_path_order[i];
		const struct ntp_snap_comp *x = &g->comp[c];

		if (!x->n)
			continue;
		fprintf(f, "%-40s %8llu %9.2f %7.2f %9.2f", ntp_component_name(c),
			(unsigned long long)x->n, x->mean_us, x->avg_qd, x->p50_us);
		p99_cell(f, 9, x->p99_us, x->n);
		fputc('\n', f);
		few |= !ntp_pct_enough(x->n, 0.99);
		/* records from the bio's submission: the wait for a tag, part
		 * of the row above (a mean, no histogram: docs/what-if.md) */
		if (c == NTP_COMP_HOST_BLK_SUB && g->bio_records)
			fprintf(f, "%-40s %8llu %9.2f %7.2f %9s %9s\n", "  of it, waiting for a tag",
				(unsigned long long)g->bio_records,
				(double)g->tag_wait_sum_ns / 1e3 / (double)g->bio_records,
				(double)g->tag_wait_sum_ns * 1e-9 * g->rate / (double)(g->sampled ? g->sampled : 1),
				"-", "-");
	}
	fprintf(f, "%-40s %8llu %9.2f %7.2f %9.2f", "end to end",
		(unsigned long long)g->sampled, g->e2e_mean_us, g->e2e_mean_us * 1e-6 * g->rate,
		g->e2e_p50_us);
	p99_cell(f, 9, g->e2e_p99_us, g->sampled);
	fputc('\n', f);
	if (few || !ntp_pct_enough(g->sampled, 0.99))
		fprintf(f, "(?: p99 of fewer than 100 samples: the largest seen, not a percentile)\n");
	if (bp)
		fprintf(f, "backpressure: waiting for the drive. Where the command waited (on the wire, in the\n"
			   "target's receive path, its response held) while its target queue's worker was\n"
			   "blocked submitting to the drive: storage, not network or target driver time\n"
			   "(docs/backpressure.md)\n");
}

/* A group without a command to break down. Every host record lacking the
 * driver's timestamps (the stages of a host-only record need nothing else,
 * src/core/model/stage.c), or no target record in a recording of both sides: the
 * hooks of another transport than the connection's, most likely
 * (docs/recording.md, "The transport check"). */
static void no_breakdown(FILE *f, const struct ntp_snapshot *s, const struct ntp_snap_group *g)
{
	const char *tr = s->transport == NTP_TRANSPORT_RDMA ? "NVMe/RDMA" : "NVMe/TCP";

	if (g->seen && s->impl_host == NTP_IMPL_LINUX && g->host_only && g->incomplete_records >= g->seen)
		fprintf(f, "no record has the %s driver's timestamps: recorded with the wrong -t?\n", tr);
	else if (g->seen && s->impl_host == NTP_IMPL_LINUX && s->impl_target == NTP_IMPL_LINUX &&
		 s->role == NTP_ROLE_BOTH && !g->host_only && !g->target_only && !s->target_records)
		fprintf(f, "no command to break down: no target record (recorded with the wrong -t, or the "
			"target is not on this machine: -r host?)\n");
	else
		fprintf(f, "no command to break down\n");
}

static void print_group(FILE *f, const struct ntp_snapshot *s, const struct ntp_snap_group *g,
			const struct ntp_report_meta *m)
{
	char label[64], rate[32], p99[80], p999[80], note[NTP_REPORT_NOTE_LEN];
	struct ntp_stage_row rows[NTP_STAGE_COUNT + 1];
	unsigned n, largest = 0;
	int few;

	ntp_group_label(g, label, sizeof(label));
	ntp_rate_label(g->rate, rate, sizeof(rate));
	fprintf(f, "== %s: %llu command%s sampled (from %s%s commands/s%s)", label,
		(unsigned long long)g->seen, g->seen == 1 ? "" : "s", g->commands ? "" : "about ", rate,
		g->commands ? ", counted" : "");
	if (!g->seen) {
		/* a group of the totals alone (model.c groups_from_totals):
		 * sparse sampling picked none of its commands */
		fprintf(f, "\nno command sampled (one in %u): the kernel's count only\n", s->sampling);
		return;
	}
	fprintf(f, ", ");
	if (g->host_only)
		fprintf(f, "host side only\n");
	else if (g->target_only)
		fprintf(f, "target side only\n");
	else if (g->sampled + g->incomplete_records >= g->seen)
		fprintf(f, "all with the target's side\n");
	else
		fprintf(f, "%llu with the target's side, the stages are of those\n",
			(unsigned long long)g->sampled);
	if (!g->sampled) {
		no_breakdown(f, s, g);
		return;
	}
	few = !ntp_mean_enough(g->sampled);
	snprintf(note, sizeof(note), " (n=%llu: too few)", (unsigned long long)g->sampled);
	ntp_pct_label(p99, sizeof(p99), "p99", g->e2e_p99_us, g->sampled, 0.99);
	ntp_pct_label(p999, sizeof(p999), "p99.9", g->e2e_p999_us, g->sampled, 0.999);
	fprintf(f, "latency (us): mean %.2f%s, p50 %.2f, %s, %s\n", g->e2e_mean_us, few ? "?" : "", g->e2e_p50_us,
		p99, p999);
	fprintf(f, "%-36s %8s %6s %7s%s\n", "stage", "mean us", "share", "avg QD",
		g->qd_counted ? " (counted)" : "");
	n = ntp_stage_rows(s, g, rows, NTP_STAGE_COUNT + 1);
	for (unsigned i = 0; i < n; i++) {
		/* '?': a mean, or a QD by Little's law, of fewer samples than a
		 * mean needs (ntp_mean_enough); counted QDs are every command's */
		if (few)
			fprintf(f, "%-36s %7.2f? %5.0f%% %*.2f%s", rows[i].name, rows[i].mean_us,
				pct(rows[i].share), g->qd_counted ? 7 : 6, rows[i].avg_qd, g->qd_counted ? "" : "?");
		else
			fprintf(f, "%-36s %8.2f %5.0f%% %7.2f", rows[i].name, rows[i].mean_us,
				pct(rows[i].share), rows[i].avg_qd);
		bar(f, rows[i].share);
		fputc('\n', f);
		if (rows[i].mean_us > rows[largest].mean_us)
			largest = i;
	}
	if (n && few)
		fprintf(f, "(?: from %llu sampled commands, fewer than %d: a mean's standard error is about %.0f %% "
			"of it (1/sqrt(n)), more with a long tail; docs/stage-model.md)\n",
			(unsigned long long)g->sampled, NTP_MEAN_MIN_SAMPLES, 100.0 / sqrt((double)g->sampled));
	if (n)
		fprintf(f, "largest: %s, %.0f %% of the latency%s\n", rows[largest].name,
			pct(rows[largest].share), few ? note : "");
	if (g->qd_counted) {
		double little = 0, counted = 0;

		for (int st = 0; st < NTP_STAGE_COUNT; st++) {
			little += g->stage[st].avg_qd_little;
			counted += g->stage[st].avg_qd;
		}
		fprintf(f, "avg QD counted in the kernel from every command's stage times (%llu commands",
			(unsigned long long)g->qd_summed);
		if (g->qd_incomplete)
			fprintf(f, "; %llu lacked a timestamp and are left out",
				(unsigned long long)g->qd_incomplete);
		fprintf(f, "): %.2f in all; by Little's law %.2f\n", counted, little);
	}
	if (ntp_group_qd_note(m, g, note, sizeof(note)))
		fprintf(f, "note: %s\n", note);
	if (g->fallback_records)
		fprintf(f, "note: %llu records lacked the target's response time; its storage "
			"completion stands in (a difference under a microsecond when both are seen)\n",
			(unsigned long long)g->fallback_records);
	if (g->missed_records)
		fprintf(f, "note: %llu records were closed after a missed completion\n",
			(unsigned long long)g->missed_records);
	if (g->incomplete_records)
		fprintf(f, "note: %llu records lacked a timestamp the stages need, or had times one clock cannot give, and are left out\n",
			(unsigned long long)g->incomplete_records);
	if (m->detail) {
		fputc('\n', f);
		print_components(f, g);
	}
}

int ntp_snapshot_note(const struct ntp_snapshot *s, unsigned i, char *buf, size_t len)
{
	/* the notes in order: records of neither side, then memory */
	if (s->other_side_records && i-- == 0) {
		snprintf(buf, len, "records of neither side (host 1, target 2) left out: %llu",
			 (unsigned long long)s->other_side_records);
		return 1;
	}
	if (!s->oom || i > 0)
		return 0;
	if (s->oom_records)
		snprintf(buf, len, "memory ran out: %llu records are left out (no memory for their group), "
			 "and quantiles may miss values", (unsigned long long)s->oom_records);
	else
		snprintf(buf, len, "memory ran out: quantiles may miss values");
	return 1;
}

int ntp_report_hosts(const struct ntp_report_meta *m, int esc, char *buf, size_t len)
{
	unsigned named = m->n_hosts < NTP_REPORT_MAX_HOSTS ? m->n_hosts : NTP_REPORT_MAX_HOSTS;
	size_t k;

	if (m->n_hosts < 2 || len == 0)
		return 0;
	k = (size_t)snprintf(buf, len, "%u hosts (", m->n_hosts);
	for (unsigned i = 0; i < named && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", esc ? ntp_esc(m->hosts[i]) : m->hosts[i]);
	if (k < len && m->n_hosts > named)
		k += (size_t)snprintf(buf + k, len - k, " and %u more", m->n_hosts - named);
	if (k < len)
		snprintf(buf + k, len - k, ")");
	return 1;
}

/*
 * The host's tags nearly all held (docs/stage-model.md, "What end to end
 * spans"): a request holds its tag from its allocation, where end to end
 * starts, to its completion, so a namespace's commands in flight (each
 * group's counted rate x mean end to end, Little's law over the whole
 * recording) cannot exceed its tags (the header's host queue table,
 * docs/ntp-format.md). At two thirds of them or more, commands may have
 * waited for a tag before their request existed: outside end to end.
 * Above them, the sampled means read high: no tag note then. Groups whose
 * records start at the bio's submission (H_BIO_SUBMIT) have the wait
 * measured: no note for a namespace where half of the sampled records or
 * more have it (the stamp is missing on some records, e.g. of a bio the
 * kernel made without one; a few stamped ones do not make the rest's end
 * to end start before the tag).
 * Several hosts' namespaces of one name share a group: no note then.
 */
static void print_tag_note(FILE *f, const struct ntp_snapshot *s, const struct ntp_report_meta *m)
{
	for (unsigned q = 0; q < m->n_hostq && m->hostq && m->n_hosts < 2; q++) {
		const struct ntp_hostq *h = &m->hostq[q];
		double held = 0, tags = (double)h->tags * h->hw_queues;
		uint64_t bio = 0, sampled = 0;

		for (unsigned i = 0; i < s->n_groups; i++) {
			const struct ntp_snap_group *g = &s->groups[i];

			if (!g->target_only && g->sampled && !strncmp(g->dev, h->dev, NTP_DEV_LEN)) {
				held += g->rate * g->e2e_mean_us * 1e-6;
				bio += g->bio_records;
				sampled += g->sampled;
			}
		}
		/* above the tags is not a tag wait but means that read high
		 * (ntp_group_qd_note says so per group, rounded alike) */
		if (bio * 2 < sampled && tags > 0 && held >= tags * 2 / 3 && round(held * 100) <= tags * 100)
			fprintf(f, "note: %s held %.1f commands in flight on average (rate x mean), two thirds or more "
				"of its %u tags (%u hardware queue%s x %u): commands may have waited for a tag before "
				"end to end starts (docs/stage-model.md)\n", ntp_esc(h->dev), held,
				h->tags * h->hw_queues, h->hw_queues, h->hw_queues == 1 ? "" : "s", h->tags);
	}
}

void ntp_report_print(FILE *f, const struct ntp_snapshot *s, const struct ntp_report_meta *m)
{
	int have_host = s->role != NTP_ROLE_TARGET;
	char note[NTP_REPORT_NOTE_LEN];

	if (m->host_name || m->target_name) {
		fprintf(f, "recorded on ");
		/* names from the files' headers: escaped (core/esc.h) */
		if (m->host_name && ntp_report_hosts(m, 1, note, sizeof(note)))
			/* "N hosts (a, b ...; kernel K on a)": the first's kernel */
			fprintf(f, "%.*s; kernel %s on %s)", (int)strlen(note) - 1, note,
				m->host_kernel ? ntp_esc(m->host_kernel) : "?", ntp_esc(m->host_name));
		else if (m->host_name)
			fprintf(f, "%s (kernel %s)", ntp_esc(m->host_name),
				m->host_kernel ? ntp_esc(m->host_kernel) : "?");
		if (m->target_name)
			fprintf(f, "%s%s (kernel %s)", m->host_name ? " with target " : "",
				ntp_esc(m->target_name), m->target_kernel ? ntp_esc(m->target_kernel) : "?");
		fprintf(f, ", one command in %u sampled\n", s->sampling);
	}
	for (unsigned i = 0; i < m->n_notes; i++)
		fprintf(f, "note: %s\n", ntp_esc(m->notes[i]));
	if (!m->no_duration_line)
		fprintf(f, "=== %.1f s, one command in %u sampled ===\n", s->seconds, s->sampling);
	print_throughput(f, s);
	for (unsigned i = 0; i < s->n_groups; i++) {
		fputc('\n', f);
		print_group(f, s, &s->groups[i], m);
	}
	print_tag_note(f, s, m);
	if (s->lost_events)
		fprintf(f, "note: records lost before reaching the recording: %llu "
			"(" NTP_LOST_WHY ")\n",
			(unsigned long long)s->lost_events);
	if (s->overflow_records)
		fprintf(f, "note: %llu records of groups beyond the first %d are left out\n",
			(unsigned long long)s->overflow_records, NTP_SNAP_MAX_GROUPS);
	for (unsigned i = 0; ntp_snapshot_note(s, i, note, sizeof(note)); i++)
		fprintf(f, "note: %s\n", note);
	/* SPDK reads its sockets itself: only the kernel socket hooks give its
	 * records a packet arrival (docs/spdk.md, "The socket hooks") */
	for (int t = 0; t < 2 && s->n_groups; t++) {
		uint64_t n = s->spdk_tcp[t], split = s->spdk_split[t];

		if (!n || split == n || (t ? s->role == NTP_ROLE_HOST : s->role == NTP_ROLE_TARGET))
			continue;
		if (!split)
			fprintf(f, "note: no SPDK %s record has a packet arrival from the socket hooks (not hooked, "
				"or no socket traffic): its receive path reads 0, its time is in the wire%s\n",
				t ? "target" : "host",
				t ? "; the response counts as sent when SPDK queued it" :
				    "; the capsule counts as sent when SPDK queued it");
		else
			fprintf(f, "note: %llu of %llu SPDK %s records lack the socket hooks' arrival: their "
				"receive path reads 0, its time is in the wire\n", (unsigned long long)(n - split),
				(unsigned long long)n, t ? "target" : "host");
	}
	fputc('\n', f);
	if (s->role == NTP_ROLE_BOTH) {
		/* rounded down to 0.1: 7696 of 7705 must not read "100 %" */
		double pct = s->host_records ? floor(1000.0 * (double)s->matched / (double)s->host_records) / 10.0 : 0.0;

		fprintf(f, "records: %llu host, %llu target; %llu matched (%.*f %% of the host's)\n",
			(unsigned long long)s->host_records, (unsigned long long)s->target_records,
			(unsigned long long)s->matched, pct == floor(pct) ? 0 : 1, pct);
	}
	else if (have_host)
		fprintf(f, "records: %llu host\n", (unsigned long long)s->host_records);
	else
		fprintf(f, "records: %llu target\n", (unsigned long long)s->target_records);
}

/* ---- the per-interval line (docs/recording.md) ---- */

void ntp_interval_header(FILE *f)
{
	ntp_interval_header_qd(f, 0);
}

void ntp_interval_header_qd(FILE *f, int counted_qd)
{
	fprintf(f, "%74s%s%19s%s\n", "", "host", "", "target");
	fprintf(f, "%8s  %-24s%5s %8s %9s %9s %7s %7s %7s %7s %7s%s\n", "time", "group", "n", "cmds/s",
		"mean us", "p99 us", "block", "driver", "network", "driver", "storage",
		counted_qd ? "  QD (counted)" : "");
}

/* The network column marks what it holds when one side is missing: '*'
 * network and target (host-only), '~' the target's receive path only
 * (target-only), as the report's rows name them (ntp_stage_rows). */
static size_t share_cell(char *buf, size_t len, const struct ntp_snap_group *g, int st)
{
	const char *mark = st != NTP_STAGE_NETWORK ? "" : g->host_only ? "*" : g->target_only ? "~" : "";
	char c[16];

	if (!g->stage[st].present)
		return (size_t)snprintf(buf, len, "%8s", "");
	snprintf(c, sizeof(c), "%.0f%%%s", pct(g->stage[st].share), mark);
	return (size_t)snprintf(buf, len, "%8s", c);
}

void ntp_interval_lines(FILE *f, const struct ntp_snapshot *s, double elapsed_s)
{
	for (unsigned i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *g = &s->groups[i];
		char t[16], label[64], rate[32], line[256];
		size_t n;

		if (!g->seen)
			continue;	/* a group idle in this interval */

		snprintf(t, sizeof(t), "%.1fs", elapsed_s);
		ntp_group_label(g, label, sizeof(label));
		ntp_rate_label(g->rate, rate, sizeof(rate));
		/* '?': a p99 of fewer than 100 samples (ntp_pct_enough) */
		n = (size_t)snprintf(line, sizeof(line), "%8s  %-24s%5llu %8s %9.2f %*.2f%s", t, label,
				     (unsigned long long)g->sampled, rate, g->e2e_mean_us,
				     ntp_pct_enough(g->sampled, 0.99) ? 9 : 8, g->e2e_p99_us,
				     ntp_pct_enough(g->sampled, 0.99) ? "" : "?");
		for (int st = 0; st < NTP_STAGE_COUNT && n < sizeof(line); st++)
			n += share_cell(line + n, sizeof(line) - n, g, st);
		if (g->qd_counted && n < sizeof(line)) {
			double qd = 0;

			for (int st = 0; st < NTP_STAGE_COUNT; st++)
				qd += g->stage[st].present ? g->stage[st].avg_qd : 0;
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%15.2f", qd);
		}
		/* No trailing blanks where the target's columns stay empty. */
		while (n > 0 && line[n - 1] == ' ')
			line[--n] = '\0';
		fprintf(f, "%s\n", line);
	}
}
