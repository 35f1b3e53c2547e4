// SPDX-License-Identifier: GPL-2.0
/* test_report.c - the renderers on hand-built snapshots: the interval line to the
 * column, the host-only rows, the largest line, labels, compare's verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/store/ntpfile.h"
#include "core/render/report.h"
#include "core/render/report_whatif.h"

static char *render(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static struct ntp_snapshot *snap_new(void)
{
	struct ntp_snapshot *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->sampling = 100;
	s->transport = NTP_TRANSPORT_TCP;
	s->seconds = 3.0;
	return s;
}

/* The host's interval line of docs/recording.md, byte for byte. */
static struct ntp_snapshot *host_only_snap(void)
{
	struct ntp_snapshot *s = snap_new();
	struct ntp_snap_group *g = &s->groups[0];

	s->role = NTP_ROLE_HOST;
	s->n_groups = 1;
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme6n1");
	g->host_only = 1;
	g->seen = g->sampled = 154;
	g->rate = 15500;
	g->e2e_mean_us = 73.40;
	g->e2e_p99_us = 80.73;
	g->stage[NTP_STAGE_HOST_BLOCK] = (struct ntp_snap_stage){ .present = 1, .mean_us = 0.73, .share = 0.01 };
	g->stage[NTP_STAGE_HOST_DRIVER] = (struct ntp_snap_stage){ .present = 1, .mean_us = 1.47, .share = 0.02 };
	g->stage[NTP_STAGE_NETWORK] = (struct ntp_snap_stage){ .present = 1, .mean_us = 71.2, .share = 0.97 };
	g->comp[NTP_COMP_HOST_RECV_RSP] = (struct ntp_snap_comp){ .n = 154, .mean_us = 4.2 };
	g->comp[NTP_COMP_NET_AND_TARGET] = (struct ntp_snap_comp){ .n = 154, .mean_us = 67.0 };
	return s;
}

static void interval(FILE *f, const void *s)
{
	ntp_interval_header(f);
	ntp_interval_lines(f, s, 3.0);
}

static void test_interval_line(void **state)
{
	struct ntp_snapshot *s = host_only_snap();
	char *out;

	(void)state;
	s->groups[0].stage[NTP_STAGE_NETWORK].share = 0.98;
	out = render(interval, s);
	assert_string_equal(out,
"                                                                          host                   target\n"
"    time  group                       n   cmds/s   mean us    p99 us   block  driver network  driver storage\n"
"    3.0s  read 4KiB nvme6n1         154    15.5k     73.40     80.73      1%      2%    98%*\n");
	free(out);
	/* Joined: every column, no star. */
	s->groups[0].host_only = 0;
	s->groups[0].stage[NTP_STAGE_NETWORK].share = 0.14;
	s->groups[0].stage[NTP_STAGE_TARGET_DRIVER] = (struct ntp_snap_stage){ .present = 1, .share = 0.01 };
	s->groups[0].stage[NTP_STAGE_STORAGE] = (struct ntp_snap_stage){ .present = 1, .share = 0.82 };
	out = render(interval, s);
	assert_non_null(strstr(out, "      1%      2%     14%      1%     82%\n"));
	free(out);
	/* Target-only: the network column is the target's receive path, marked. */
	s->role = NTP_ROLE_TARGET;
	s->groups[0].target_only = 1;
	s->groups[0].stage[NTP_STAGE_HOST_BLOCK].present = 0;
	s->groups[0].stage[NTP_STAGE_HOST_DRIVER].present = 0;
	out = render(interval, s);
	assert_non_null(strstr(out, "80.73                    14%~      1%     82%\n"));
	free(out);
	free(s);
}

static void report(FILE *f, const void *s)
{
	struct ntp_report_meta m = { .host_name = "h", .host_kernel = "6.1" };

	ntp_report_print(f, s, &m);
}

/* The host-only table (docs/stage-model.md): the receive path apart from "network and target". */
static void test_host_only_rows(void **state)
{
	struct ntp_snapshot *s = host_only_snap();
	char *out;

	(void)state;
	out = render(report, s);
	assert_non_null(strstr(out, "recorded on h (kernel 6.1), one command in 100 sampled\n"));
	assert_non_null(strstr(out, "=== 3.0 s, one command in 100 sampled ===\n"));
	assert_non_null(strstr(out, "== read 4KiB nvme6n1: 154 commands sampled (from about 15.5k commands/s), host side only\n"));
	/* 154 samples: a p99, not a p99.9 */
	assert_non_null(strstr(out, "latency (us): mean 73.40, p50 0.00, p99 80.73, p99.9 0.00 (n=154: too few)\n"));
	assert_non_null(strstr(out, "host receive path                        4.20"));
	assert_non_null(strstr(out, "network and target (not recorded)       67.00"));
	assert_non_null(strstr(out, "largest: network and target (not recorded), 91 % of the latency\n"));
	assert_non_null(strstr(out, "records: 0 host\n"));
	assert_null(strstr(out, " \n"));	/* no trailing blanks */
	free(out);
	free(s);
}

/* The meta a report was printed with (meta_report) */
static const struct ntp_report_meta *print_meta;

static void meta_report(FILE *f, const void *s)
{
	ntp_report_print(f, s, print_meta);
}

/* ntp_report_meta_init over memory that held anything gives the report
 * of a zeroed meta, its notes too (their text past n_notes is left as it
 * was, report.h) */
static void test_meta_init(void **state)
{
	struct ntp_report_meta *zeroed = calloc(1, sizeof(*zeroed)), *dirty = malloc(sizeof(*dirty));
	struct ntp_snapshot *s = host_only_snap();
	char *want, *got;

	(void)state;
	assert_non_null(zeroed);
	assert_non_null(dirty);
	memset(dirty, 0x5a, sizeof(*dirty));
	ntp_report_meta_init(dirty);
	ntp_report_note(zeroed, "a file cut short: %d records", 3);
	ntp_report_note(dirty, "a file cut short: %d records", 3);
	print_meta = zeroed;
	want = render(meta_report, s);
	print_meta = dirty;
	got = render(meta_report, s);
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "a file cut short: 3 records\n"));
	assert_int_equal(dirty->n_notes, 1);
	assert_int_equal(dirty->damaged[0], 0);
	assert_null(dirty->hostq);
	assert_int_equal(dirty->n_hosts, 0);
	for (unsigned i = 0; i < NTP_REPORT_MAX_HOSTS; i++)
		assert_null(dirty->hosts[i]);
	free(want);
	free(got);
	free(zeroed);
	free(dirty);
	free(s);
}

static void test_labels(void **state)
{
	char b[32];

	(void)state;
	ntp_size_label(4096, b, sizeof(b));
	assert_string_equal(b, "4KiB");
	ntp_size_label(1 << 20, b, sizeof(b));
	assert_string_equal(b, "1MiB");
	ntp_size_label(512, b, sizeof(b));
	assert_string_equal(b, "512B");
	ntp_size_label(6000, b, sizeof(b));
	assert_string_equal(b, "6000B");
	ntp_rate_label(13300, b, sizeof(b));
	assert_string_equal(b, "13.3k");
	ntp_rate_label(999, b, sizeof(b));
	assert_string_equal(b, "999");
	ntp_rate_label(2.5e6, b, sizeof(b));
	assert_string_equal(b, "2.50M");
	/* a rare group's rate is not "0" */
	ntp_rate_label(0.083, b, sizeof(b));
	assert_string_equal(b, "0.083");
	ntp_rate_label(0.4, b, sizeof(b));
	assert_string_equal(b, "0.4");
	ntp_rate_label(0, b, sizeof(b));
	assert_string_equal(b, "0");
}

static void report_detail(FILE *f, const void *s)
{
	struct ntp_report_meta m = { .host_name = "h", .host_kernel = "6.1", .detail = 1 };

	ntp_report_print(f, s, &m);
}

/* One command is "1 command"; --detail explains backpressure only where a
 * backpressure row reads above 0.00 (a fast drive's rows are all 0.00). */
static void test_one_command_and_bp_paragraph(void **state)
{
	struct ntp_snapshot *s = host_only_snap();
	char *out;

	(void)state;
	s->groups[0].seen = s->groups[0].sampled = 1;
	s->groups[0].rate = 0.4;
	for (int c = NTP_COMP_BP_WIRE; c <= NTP_COMP_BP_RSP; c++)
		s->groups[0].comp[c] = (struct ntp_snap_comp){ .n = 1, .mean_us = 0.001 };
	out = render(report_detail, s);
	assert_non_null(strstr(out, "== read 4KiB nvme6n1: 1 command sampled (from about 0.4 commands/s), host side only\n"));
	assert_null(strstr(out, "backpressure: waiting"));
	free(out);
	s->groups[0].comp[NTP_COMP_BP_RECV].mean_us = 12.5;
	out = render(report_detail, s);
	assert_non_null(strstr(out, "backpressure: waiting for the drive."));
	free(out);
	free(s);
}

struct pair { const struct ntp_snapshot *a, *b; };

static void compare(FILE *f, const void *arg)
{
	const struct pair *p = arg;

	ntp_compare_print(f, p->a, p->b, "a.ntp", "b.ntp");
}

static void joined(struct ntp_snapshot *s, double storage)
{
	struct ntp_snap_group *g = &s->groups[0];
	double st[NTP_STAGE_COUNT] = { 0.5, 1.3, 10.0, 1.0, storage };

	s->role = NTP_ROLE_BOTH;
	s->n_groups = 1;
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme0n1");
	g->seen = g->sampled = 1000;
	g->rate = 10000;
	g->e2e_mean_us = 0;
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		g->e2e_mean_us += st[i];
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		g->stage[i] = (struct ntp_snap_stage){ .present = 1, .mean_us = st[i],
						       .share = st[i] / g->e2e_mean_us };
}

/* The verdict names the stage whose mean grew most. */
static void test_compare_verdict(void **state)
{
	struct ntp_snapshot *a = snap_new(), *b = snap_new();
	struct pair p = { a, b };
	char *out;

	(void)state;
	joined(a, 60.0);
	joined(b, 180.0);
	b->groups[0].stage[NTP_STAGE_NETWORK].mean_us = 15.0;
	b->groups[0].e2e_mean_us += 5.0;
	out = render(compare, &p);
	assert_non_null(strstr(out, "verdict: storage (target block layer, drive) amplifies latency from A to B: "
				     "+120.00 us of the +125.00 us (96 %), 3.00x\n"));
	assert_non_null(strstr(out, "network (TCP/IP, NICs, wire)             10.00     15.00     +5.00   1.50x"));
	free(out);
	/* B faster: no amplification claimed. */
	p.a = b;
	p.b = a;
	out = render(compare, &p);
	assert_non_null(strstr(out, "verdict: no stage grows from A to B"));
	free(out);
	/* A group only in B is listed as such. */
	b->groups[0].len = 8192;
	out = render(compare, &p);
	assert_non_null(strstr(out, "== read 4KiB nvme0n1: only in B (1000 commands sampled)\n"));
	assert_non_null(strstr(out, "== read 8KiB nvme0n1: only in A (1000 commands sampled)\n"));
	free(out);
	free(a);
	free(b);
}

/* Host-only JSON: the network stage named "network and target (not
 * recorded)" holds what its text row holds, the host's receive path apart. */
static void test_json_host_only_network(void **state)
{
	struct ntp_snapshot *s = host_only_snap();
	struct ntp_report_meta m = { .host_name = "h", .host_kernel = "6.1" };
	json_object *o, *g, *v, *st = NULL, *x = NULL;

	(void)state;
	o = ntp_report_json(s, &m);
	assert_true(json_object_object_get_ex(o, "groups", &g));
	g = json_object_array_get_idx(g, 0);
	assert_true(json_object_object_get_ex(g, "stages", &v));
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		x = json_object_array_get_idx(v, i);
		json_object_object_get_ex(x, "stage", &st);
		if (!strcmp(json_object_get_string(st), "network"))
			break;
	}
	assert_string_equal(json_object_get_string(st), "network");
	assert_true(json_object_object_get_ex(x, "name", &st));
	assert_string_equal(json_object_get_string(st), "network and target (not recorded)");
	/* the model's stage, the receive path in it: the stage means add up
	 * to the end-to-end mean (docs/json-schema.md) */
	assert_true(json_object_object_get_ex(x, "mean_us", &st));
	assert_true(json_object_get_double(st) == 71.2);
	assert_true(json_object_object_get_ex(x, "host_receive_path_us", &st));
	assert_string_equal(json_object_to_json_string(st), "4.200");
	json_object_put(o);
	free(s);
}

/* NVMe/RDMA against NVMe/TCP: stages pair by their role, not their names,
 * so the verdict names the network, which grew most, with both sides' names. */
static void test_compare_by_role(void **state)
{
	struct ntp_snapshot *a = snap_new(), *b = snap_new();
	struct pair p = { a, b };
	char *out;

	(void)state;
	joined(a, 60.0);
	a->transport = NTP_TRANSPORT_RDMA;
	joined(b, 72.86);
	b->groups[0].stage[NTP_STAGE_NETWORK].mean_us = 30.26;
	b->groups[0].e2e_mean_us += 20.26;
	out = render(compare, &p);
	assert_non_null(strstr(out, "verdict: network (RDMA, NICs, wire) / network (TCP/IP, NICs, wire) amplifies "
				     "latency from A to B: +20.26 us of the +33.12 us (61 %), 3.03x\n"));
	assert_non_null(strstr(out, "host driver (nvme-rdma)                   1.30      1.30     +0.00   1.00x"));
	assert_non_null(strstr(out, "\n  in B: host driver (nvme-tcp)\n"));
	assert_non_null(strstr(out, "network (RDMA, NICs, wire)               10.00     30.26    +20.26   3.03x"));
	free(out);
	free(a);
	free(b);
}

/* Each group of B is compared once: A's second device of the same kind is
 * only in A, not compared again with the B group its first device matched. */
static void test_compare_pairs_once(void **state)
{
	struct ntp_snapshot *a = snap_new(), *b = snap_new();
	struct pair p = { a, b };
	char *out;

	(void)state;
	joined(a, 60.0);
	a->groups[1] = a->groups[0];
	strcpy(a->groups[1].dev, "nvme1n1");
	a->n_groups = 2;
	joined(b, 180.0);
	out = render(compare, &p);
	assert_non_null(strstr(out, "== read 4KiB nvme0n1: A 1000 commands sampled"));
	assert_non_null(strstr(out, "== read 4KiB nvme1n1: only in A (1000 commands sampled)\n"));
	assert_null(strstr(out, "(B's device: nvme0n1)"));
	free(out);
	/* Devices named differently on the two machines still pair up. */
	strcpy(b->groups[0].dev, "nvme4n1");
	a->n_groups = 1;
	out = render(compare, &p);
	assert_non_null(strstr(out, "(B's device: nvme4n1)\n"));
	assert_null(strstr(out, "only in"));
	free(out);
	free(a);
	free(b);
}

static void test_json(void **state)
{
	struct ntp_snapshot *s = snap_new();
	struct ntp_report_meta m = { .host_name = "h", .host_kernel = "6.1" };
	json_object *o, *g, *v;

	(void)state;
	joined(s, 60.0);
	ntp_report_note(&m, "x.ntp was cut short: %d records read", 5);
	o = ntp_report_json(s, &m);
	assert_true(json_object_object_get_ex(o, "groups", &g));
	assert_int_equal(json_object_array_length(g), 1);
	g = json_object_array_get_idx(g, 0);
	assert_true(json_object_object_get_ex(g, "stages", &v));
	assert_int_equal(json_object_array_length(v), NTP_STAGE_COUNT);
	assert_true(json_object_object_get_ex(g, "commands", &v));
	assert_null(v);		/* not counted: null, not 0 */
	assert_true(json_object_object_get_ex(o, "notes", &v));
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)),
			    "x.ntp was cut short: 5 records read");
	json_object_put(o);
	free(s);
}

/* Memory that ran out is said, in the text and in the JSON notes, and only then. */
static void test_oom_noted(void **state)
{
	struct ntp_snapshot *s = snap_new();
	struct ntp_report_meta m = { 0 };
	json_object *o, *v;
	char *out;

	(void)state;
	joined(s, 60.0);
	out = render(report, s);
	assert_null(strstr(out, "memory ran out"));
	free(out);
	o = ntp_report_json(s, &m);
	assert_true(json_object_object_get_ex(o, "notes", &v));
	assert_int_equal(json_object_array_length(v), 0);
	json_object_put(o);

	s->oom = 1;
	out = render(report, s);
	assert_non_null(strstr(out, "\nnote: memory ran out: quantiles may miss values\n"));
	free(out);
	s->oom_records = 7;
	out = render(report, s);
	assert_non_null(strstr(out, "\nnote: memory ran out: 7 records are left out (no memory for their group), "
				    "and quantiles may miss values\n"));
	free(out);
	o = ntp_report_json(s, &m);
	assert_true(json_object_object_get_ex(o, "notes", &v));
	assert_int_equal(json_object_array_length(v), 1);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 0)),
			    "memory ran out: 7 records are left out (no memory for their group), "
			    "and quantiles may miss values");
	json_object_put(o);
	free(s);
}

/* Several hosts: the text's "recorded on" line and a JSON note say how
 * many and name the first NTP_REPORT_MAX_HOSTS. */
static void many_hosts(FILE *f, const void *s)
{
	static const char *const names[] = { "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8" };
	struct ntp_report_meta m = { .host_name = "h1", .host_kernel = "6.1", .target_name = "t",
				     .target_kernel = "6.2", .n_hosts = 12 };

	memcpy(m.hosts, names, sizeof(names));
	ntp_report_print(f, s, &m);
}

static void test_many_hosts_named(void **state)
{
	static const char *const names[] = { "h1", "h2", "h3" };
	struct ntp_snapshot *s = host_only_snap();
	struct ntp_report_meta m = { .host_name = "h1", .host_kernel = "6.1", .n_hosts = 3 };
	json_object *o, *n;
	char *out;

	(void)state;
	out = render(many_hosts, s);
	assert_non_null(strstr(out, "recorded on 12 hosts (h1, h2, h3, h4, h5, h6, h7, h8 and 4 more; "
				    "kernel 6.1 on h1) with target t (kernel 6.2), one command in 100 sampled\n"));
	free(out);
	memcpy(m.hosts, names, sizeof(names));
	o = ntp_report_json(s, &m);
	assert_true(json_object_object_get_ex(o, "notes", &n));
	assert_int_equal(json_object_array_length(n), 1);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(n, 0)),
			    "3 hosts (h1, h2, h3): \"host\" is the first's");
	json_object_put(o);
	m.n_hosts = 1;
	o = ntp_report_json(s, &m);
	assert_true(json_object_object_get_ex(o, "notes", &n));
	assert_int_equal(json_object_array_length(n), 0);
	json_object_put(o);
	free(s);
}

static void report_plain(FILE *f, const void *s)
{
	struct ntp_report_meta m = { 0 };

	ntp_report_print(f, s, &m);
}

/* The threshold of a group's means (docs/stage-model.md, "Few samples"):
 * 1/sqrt(n) at most 10 %: 100 samples. */
static void test_mean_threshold(void **state)
{
	(void)state;
	assert_int_equal(NTP_MEAN_MIN_SAMPLES, 100);
	assert_false(ntp_mean_enough(0));
	assert_false(ntp_mean_enough(99));
	assert_true(ntp_mean_enough(100));
	assert_true(ntp_mean_enough(5000));
}

/* From fewer samples than a mean needs, the stage means and Little's-law
 * QDs carry '?', a line names n, and "largest:" the mark of the p99; from
 * enough, none of them. */
static void test_few_samples_marked(void **state)
{
	struct ntp_snapshot *s = snap_new();
	char *out;

	(void)state;
	joined(s, 60.0);
	s->groups[0].seen = s->groups[0].sampled = 12;
	out = render(report_plain, s);
	assert_non_null(strstr(out, "latency (us): mean 72.80?, p50"));
	assert_non_null(strstr(out, "storage (target block layer, drive)    60.00?    82%   0.00? "));
	assert_non_null(strstr(out, "(?: from 12 sampled commands, fewer than 100: a mean's standard error is "
				    "about 29 % of it (1/sqrt(n)), more with a long tail; docs/stage-model.md)\n"
				    "largest: storage (target block layer, drive), 82 % of the latency (n=12: too few)\n"));
	free(out);
	/* counted QDs are every command's: the means marked, not the QDs */
	s->groups[0].qd_counted = 1;
	out = render(report_plain, s);
	assert_non_null(strstr(out, "storage (target block layer, drive)    60.00?    82%    0.00 "));
	free(out);
	s->groups[0].qd_counted = 0;
	s->groups[0].seen = s->groups[0].sampled = 100;
	out = render(report_plain, s);
	assert_null(strchr(out, '?'));
	assert_non_null(strstr(out, "largest: storage (target block layer, drive), 82 % of the latency\n"));
	free(out);
	free(s);
}

/* JSON: "mean" in latency_us.too_few under the threshold, not from it. */
static void test_few_samples_json(void **state)
{
	struct ntp_snapshot *s = snap_new();
	struct ntp_report_meta m = { 0 };
	json_object *o, *g, *lat, *few;

	(void)state;
	joined(s, 60.0);
	for (uint64_t n = 99; n <= 100; n++) {
		s->groups[0].sampled = n;
		o = ntp_report_json(s, &m);
		assert_true(json_object_object_get_ex(o, "groups", &g));
		g = json_object_array_get_idx(g, 0);
		assert_true(json_object_object_get_ex(g, "latency_us", &lat));
		assert_true(json_object_object_get_ex(lat, "too_few", &few));
		assert_int_equal(json_object_array_length(few), n < 100 ? 3 : 1);
		if (n < 100)
			assert_string_equal(json_object_get_string(json_object_array_get_idx(few, 0)), "mean");
		else
			assert_string_equal(json_object_get_string(json_object_array_get_idx(few, 0)), "p99_9");
		json_object_put(o);
	}
	free(s);
}

static struct ntp_hostq tag_q = { .dev = "nvme0n1", .hw_queues = 1, .tags = 1 };

static void report_tags(FILE *f, const void *s)
{
	struct ntp_report_meta m = { .hostq = &tag_q, .n_hostq = 1 };

	ntp_report_print(f, s, &m);
}

/* The tag note (docs/stage-model.md, "What end to end spans"): rate x mean
 * 0.73 of 1 tag. Not when half the group's records or more start at the
 * bio's submission: the tag wait is then in end to end; still when only a
 * few do. */
static void test_tag_note_bio(void **state)
{
	struct ntp_snapshot *s = snap_new();
	char *out;

	(void)state;
	joined(s, 60.0);
	out = render(report_tags, s);
	assert_non_null(strstr(out, "note: nvme0n1 held 0.7 commands in flight on average (rate x mean), two thirds "
				    "or more of its 1 tags"));
	free(out);
	assert_true(s->groups[0].sampled >= 4);
	s->groups[0].bio_records = 1;
	out = render(report_tags, s);
	assert_non_null(strstr(out, "commands may have waited for a tag"));
	free(out);
	s->groups[0].bio_records = (s->groups[0].sampled + 1) / 2;
	out = render(report_tags, s);
	assert_null(strstr(out, "commands may have waited for a tag"));
	free(out);
	free(s);
}

/* Stage QDs by Little's law above the host's tags x hardware queues: a note
 * (text and JSON); none at or below the bound, none when counted, none
 * without the queues or with several hosts. */
static void test_qd_above_tags(void **state)
{
	struct ntp_snapshot *s = snap_new();
	struct ntp_hostq q = { .dev = "nvme0n1", .hw_queues = 1, .tags = 4 };
	struct ntp_report_meta m = { .hostq = &q, .n_hostq = 1 };
	struct ntp_snap_group *g = &s->groups[0];
	double qd[NTP_STAGE_COUNT] = { 2.93, 0.11, 0.15, 2.82, 0.97 };
	char buf[NTP_REPORT_NOTE_LEN];
	json_object *o, *n;

	(void)state;
	joined(s, 60.0);
	g->sampled = 12;
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		g->stage[i].avg_qd = qd[i];
	assert_true(ntp_group_qd_note(&m, g, buf, sizeof(buf)));
	assert_string_equal(buf, "the stages' avg QD (rate x mean) add up to 6.98, above the 4 the host's queues "
			    "hold in flight (4 tags x 1 hardware queue): the mean of the 12 commands sampled reads "
			    "above all commands' (too few)");
	o = ntp_report_json(s, &m);
	assert_true(json_object_object_get_ex(o, "notes", &n));
	assert_int_equal(json_object_array_length(n), 1);
	assert_non_null(strstr(json_object_get_string(json_object_array_get_idx(n, 0)),
			       "read 4KiB nvme0n1: the stages' avg QD"));
	json_object_put(o);
	q.hw_queues = 2;		/* 8: 6.98 fits */
	assert_false(ntp_group_qd_note(&m, g, buf, sizeof(buf)));
	q.hw_queues = 0;		/* unknown: no bound */
	assert_false(ntp_group_qd_note(&m, g, buf, sizeof(buf)));
	q.hw_queues = 1;
	m.n_hosts = 2;			/* each host has its own queues */
	assert_false(ntp_group_qd_note(&m, g, buf, sizeof(buf)));
	m.n_hosts = 1;
	g->qd_counted = 1;
	assert_false(ntp_group_qd_note(&m, g, buf, sizeof(buf)));
	g->qd_counted = 0;
	strcpy(q.dev, "nvme1n1");	/* another namespace's */
	assert_false(ntp_group_qd_note(&m, g, buf, sizeof(buf)));
	free(s);
}

/* The report's what-if: no prediction from fewer samples than the means
 * need; the run's rate unless the samples' span shows an idle part beyond
 * its noise. */
static void test_whatif_few_and_rate(void **state)
{
	struct ntp_snapshot *s = snap_new();
	struct ntp_wi_request rq = { .n_qd = 1, .qd = { 8 } };
	struct ntp_snap_group *g = &s->groups[0];
	struct ntp_wi_model m;

	(void)state;
	joined(s, 60.0);
	g->sampled = 8;
	g->commands = 10040;
	g->rate = 20080;
	g->busy_rate = 25300;	/* the span of 8 samples: 79 % of the run */
	ntp_wi_build_group(g, &rq, &m);
	assert_false(m.ok);
	assert_string_equal(m.why, "8 commands sampled, fewer than the 100 its means need (docs/stage-model.md): "
			    "record longer or at a lower -s");
	/* 8 samples: the span's sd is sqrt(2 / (7 x 10)) = 17 %: 79 % is noise */
	assert_true(ntp_wi_busy_share(g) == 0);
	g->sampled = 100;	/* 3 sd = 4.2 %: 79 % of the run is an idle fifth */
	assert_true(ntp_wi_busy_share(g) > 0.79 && ntp_wi_busy_share(g) < 0.80);
	ntp_wi_build_group(g, &rq, &m);
	assert_true(m.ok);
	assert_true(m.base_iops > 25299 && m.base_iops < 25301);
	g->busy_rate = 20080 / 0.97;	/* 3 % short at 100 samples: within the noise */
	assert_true(ntp_wi_busy_share(g) == 0);
	ntp_wi_build_group(g, &rq, &m);
	assert_true(m.ok);
	assert_true(m.base_iops > 20079 && m.base_iops < 20081);
	g->sampled = 10000;	/* 3 sd = 0.04 %: 3 % is real */
	assert_true(ntp_wi_busy_share(g) > 0.969 && ntp_wi_busy_share(g) < 0.971);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interval_line),
		cmocka_unit_test(test_host_only_rows),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_meta_init),
		cmocka_unit_test(test_one_command_and_bp_paragraph),
		cmocka_unit_test(test_compare_verdict),
		cmocka_unit_test(test_compare_pairs_once),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_compare_by_role),
		cmocka_unit_test(test_json_host_only_network),
		cmocka_unit_test(test_oom_noted),
		cmocka_unit_test(test_many_hosts_named),
		cmocka_unit_test(test_mean_threshold),
		cmocka_unit_test(test_few_samples_marked),
		cmocka_unit_test(test_few_samples_json),
		cmocka_unit_test(test_qd_above_tags),
		cmocka_unit_test(test_tag_note_bio),
		cmocka_unit_test(test_whatif_few_and_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
