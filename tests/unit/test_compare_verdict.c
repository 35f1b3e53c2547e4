// SPDX-License-Identifier: GPL-2.0
/* test_compare_verdict.c - compare's verdict (docs/reports.md, "The verdict"):
 * a uniform slowdown names no stage, a stage named only when its growth beyond
 * the other stages' factor is beyond its sampling noise and most of the
 * latency's growth; the JSON's kind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "core/render/report.h"


static char *compare(const struct ntp_snapshot *a, const struct ntp_snapshot *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ntp_compare_print(f, a, b, "a.ntp", "b.ntp");
	fclose(f);
	return buf;
}

/* A joined group of these stage means over n commands, each stage's p50 and
 * p99 at 0.8 and 3 times its mean (a right-skewed spread), the end to end's too. */
static struct ntp_snapshot *group(const double st[NTP_STAGE_COUNT], uint64_t n)
{
	struct ntp_snapshot *s = calloc(1, sizeof(*s));
	struct ntp_snap_group *g;

	assert_non_null(s);
	s->sampling = 1;
	s->transport = NTP_TRANSPORT_TCP;
	s->seconds = 10.0;
	s->role = NTP_ROLE_BOTH;
	s->n_groups = 1;
	g = &s->groups[0];
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme0n1");
	g->seen = g->sampled = n;
	g->rate = (double)n / s->seconds;
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		g->e2e_mean_us += st[i];
	g->e2e_p50_us = 0.8 * g->e2e_mean_us;
	g->e2e_p99_us = 3 * g->e2e_mean_us;
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		g->stage[i] = (struct ntp_snap_stage){ .present = 1, .mean_us = st[i], .p50_us = 0.8 * st[i],
						       .p99_us = 3 * st[i], .share = st[i] / g->e2e_mean_us };
	return s;
}

static const char *verdict_kind(const struct ntp_snapshot *a, const struct ntp_snapshot *b, char *stage_out,
				size_t len, int *amplifies)
{
	static char kind[32];
	json_object *o = ntp_compare_json(a, b, "a.ntp", "b.ntp"), *g, *v, *x;

	assert_true(json_object_object_get_ex(o, "groups", &g));
	g = json_object_array_get_idx(g, 0);
	assert_true(json_object_object_get_ex(g, "verdict", &v));
	assert_true(json_object_object_get_ex(v, "kind", &x));
	snprintf(kind, sizeof(kind), "%s", x ? json_object_get_string(x) : "null");
	assert_true(json_object_object_get_ex(v, "amplifies", &x));
	*amplifies = json_object_get_boolean(x);
	/* never left out: null when no stage grew beyond the others */
	assert_true(json_object_object_get_ex(v, "beyond_others", &x));
	stage_out[0] = '\0';
	if (x) {
		json_object *k;

		assert_true(json_object_object_get_ex(x, "stage", &k));
		snprintf(stage_out, len, "%s", json_object_get_string(k));
	}
	json_object_put(o);
	return kind;
}

/* compare's text holds line, its JSON verdict is of kind (its stage too,
 * unless NULL; amplifies too, unless -1) */
static void expect_verdict(const struct ntp_snapshot *a, const struct ntp_snapshot *b, const char *line,
			   const char *kind, const char *stage, int amplifies)
{
	char *out = compare(a, b), st[32];
	int amp;

	assert_non_null(strstr(out, line));
	free(out);
	assert_string_equal(verdict_kind(a, b, st, sizeof(st), &amp), kind);
	if (stage)
		assert_string_equal(st, stage);
	if (amplifies >= 0)
		assert_int_equal(amp, amplifies);
}

/* Each stage's p50 and p99 at its mean, the end to end's too (fixed
 * delays, or a tail beyond the p99): no spread from the quantiles. */
static void no_spread(struct ntp_snapshot *s)
{
	struct ntp_snap_group *g = &s->groups[0];

	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		g->stage[i].p50_us = g->stage[i].p99_us = g->stage[i].mean_us;
	g->e2e_p50_us = g->e2e_p99_us = g->e2e_mean_us;
}

/* A uniform slowdown seen on the test bed (one load, recorded twice):
 * every stage 1.35-1.47x but the host driver, the median unmoved; the
 * network grew most in microseconds, as the largest stage must under a
 * uniform scaling, and is not named. */
static void test_uniform_seen(void **state)
{
	static const double sa[NTP_STAGE_COUNT] = { 226.37, 15.99, 253.82, 43.96, 16.32 };
	static const double sb[NTP_STAGE_COUNT] = { 306.58, 33.06, 362.57, 61.16, 24.00 };
	struct ntp_snapshot *a = group(sa, 20000), *b = group(sb, 20000);
	char *out, st[32];
	int amp;

	(void)state;
	out = compare(a, b);
	assert_null(strstr(out, "amplifies"));
	/* the host driver's 2.07x is beyond its noise at 20000 commands, and
	 * said, but is 5 % of the growth */
	assert_non_null(strstr(out, "verdict: a uniform slowdown (CPU, contention), no stage stands out: the other "
				     "stages grew 1.40x, host driver (nvme-tcp) 2.07x: +10.74 us beyond their factor, "
				     "5 % of the +230.91 us\n"));
	free(out);
	assert_string_equal(verdict_kind(a, b, st, sizeof(st), &amp), "uniform");
	assert_string_equal(st, "host_driver");
	assert_false(amp);
	/* at 70 commands a side not judged (fewer than NTP_MEAN_MIN_SAMPLES) */
	a->groups[0].sampled = b->groups[0].sampled = 70;
	out = compare(a, b);
	assert_non_null(strstr(out, "verdict: too few samples to judge (A 70, B 70 commands sampled, fewer than "
				     "100); network (TCP/IP, NICs, wire) grows most, +108.75 us (1.43x)\n"));
	free(out);
	assert_string_equal(verdict_kind(a, b, st, sizeof(st), &amp), "too_few");
	assert_false(amp);
	free(a);
	free(b);
}

/* Every stage exactly 1.4x: uniform, whatever the number of commands. */
static void test_uniform_exact(void **state)
{
	double sa[NTP_STAGE_COUNT] = { 2.5, 5.0, 20.0, 7.5, 80.0 }, sb[NTP_STAGE_COUNT];
	struct ntp_snapshot *a, *b;

	(void)state;
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		sb[i] = 1.4 * sa[i];
	a = group(sa, 1000000);
	b = group(sb, 1000000);
	expect_verdict(a, b, "verdict: every stage grew about 1.40x: a uniform slowdown (CPU, contention), "
			     "no stage stands out\n", "uniform", NULL, 0);
	free(a);
	free(b);
}

/* The QD1 -> QD8 compare of examples/: the host block layer 35x while the
 * other stages shrank: named, as before. */
static void test_one_stage(void **state)
{
	static const double sa[NTP_STAGE_COUNT] = { 43.52, 70.50, 831.96, 225.04, 101.46 };
	static const double sb[NTP_STAGE_COUNT] = { 1539.27, 42.99, 678.68, 111.15, 41.76 };
	struct ntp_snapshot *a = group(sa, 3731), *b = group(sb, 1821);

	(void)state;
	expect_verdict(a, b, "verdict: host block layer amplifies latency from A to B: +1495.75 us of the "
			     "+1141.37 us (131 %), 35.37x\n", "stage", "host_block", 1);
	free(a);
	free(b);
}

/* Storage 1.5x under a 1.1x slowdown of the rest: its own growth is most
 * of the latency's, so it is named; the network 2x under 1.4x is not (a
 * quarter of the growth) but said. */
static void test_mixed(void **state)
{
	double sa[NTP_STAGE_COUNT] = { 2.5, 5.0, 20.0, 7.5, 80.0 }, sb[NTP_STAGE_COUNT];
	struct ntp_snapshot *a, *b;

	(void)state;
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		sb[i] = (i == NTP_STAGE_STORAGE ? 1.5 : 1.1) * sa[i];
	a = group(sa, 2000);
	b = group(sb, 2000);
	expect_verdict(a, b, "verdict: storage (target block layer, drive) amplifies latency from A to B: ",
		       "stage", "storage", -1);
	free(a);
	free(b);
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		sb[i] = (i == NTP_STAGE_NETWORK ? 2.0 : 1.4) * sa[i];
	a = group(sa, 2000);
	b = group(sb, 2000);
	expect_verdict(a, b, "verdict: a uniform slowdown (CPU, contention), no stage stands out: the other "
			     "stages grew 1.40x, network (TCP/IP, NICs, wire) 2.00x: +12.00 us beyond their "
			     "factor, 21 % of the +58.00 us\n", "uniform", "network", 0);
	free(a);
	free(b);
}

/* A growth of the end to end within its sampling noise is no growth: the
 * stage that grew most is said, not "amplifies". */
static void test_within_noise(void **state)
{
	double sa[NTP_STAGE_COUNT] = { 2.5, 5.0, 20.0, 7.5, 80.0 }, sb[NTP_STAGE_COUNT];
	struct ntp_snapshot *a, *b;
	char st[32];
	int amp;

	(void)state;
	memcpy(sb, sa, sizeof(sb));
	sb[NTP_STAGE_STORAGE] = 83.0;
	a = group(sa, 200);
	b = group(sb, 200);
	expect_verdict(a, b, "verdict: latency does not grow from A to B beyond its sampling noise "
			     "(mean +3.00 us); storage (target block layer, drive) grows most, +3.00 us (1.04x)\n",
		       "no_growth", NULL, 0);
	/* the same +3 us over a million commands a side is a growth, and storage's */
	a->groups[0].sampled = b->groups[0].sampled = 1000000;
	assert_string_equal(verdict_kind(a, b, st, sizeof(st), &amp), "stage");
	assert_true(amp);
	free(a);
	free(b);
}

/* Two stages grown (network 1.8x, storage 2x), the other three flat: both
 * named against the flat ones' factor, not a "uniform slowdown" (each
 * against the others, the other grown one among them, stood out of
 * neither). */
static void test_two_stages(void **state)
{
	static const double sa[NTP_STAGE_COUNT] = { 21.0, 5.0, 50.0, 7.5, 20.0 };
	double sb[NTP_STAGE_COUNT];
	struct ntp_snapshot *a, *b;
	json_object *o, *g, *v, *x;
	char *out, st[32];
	int amp;

	(void)state;
	memcpy(sb, sa, sizeof(sb));
	sb[NTP_STAGE_NETWORK] = 90.0;
	sb[NTP_STAGE_STORAGE] = 40.0;
	a = group(sa, 20000);
	b = group(sb, 20000);
	out = compare(a, b);
	assert_non_null(strstr(out, "verdict: network (TCP/IP, NICs, wire) and storage (target block layer, drive) "
				     "amplify latency from A to B: +40.00 us (1.80x) and +20.00 us (2.00x) of the "
				     "+60.00 us (100 %); the other stages grew 1.00x\n"));
	free(out);
	assert_string_equal(verdict_kind(a, b, st, sizeof(st), &amp), "stage");
	assert_string_equal(st, "network");
	assert_true(amp);
	o = ntp_compare_json(a, b, "a.ntp", "b.ntp");
	assert_true(json_object_object_get_ex(o, "groups", &g));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(g, 0), "verdict", &v));
	assert_true(json_object_object_get_ex(v, "named", &x));
	assert_int_equal(json_object_array_length(x), 2);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(x, 1), "stage", &g));
	assert_string_equal(json_object_get_string(g), "storage");
	json_object_put(o);
	free(a);
	free(b);
}

/* One command a side: nothing judged, whatever grew (each side's p99 is its
 * p50: no spread from the quantiles); the means marked '?'. */
static void test_too_few(void **state)
{
	double sa[NTP_STAGE_COUNT] = { 2.5, 5.0, 20.0, 7.5, 80.0 }, sb[NTP_STAGE_COUNT];
	struct ntp_snapshot *a, *b;
	char *out;

	(void)state;
	memcpy(sb, sa, sizeof(sb));
	sb[NTP_STAGE_STORAGE] = 180.0;
	a = group(sa, 1);
	b = group(sb, 1);
	no_spread(a);
	no_spread(b);
	out = compare(a, b);
	assert_null(strstr(out, "amplif"));
	/* the means marked as the report marks them */
	assert_non_null(strstr(out, "\nmean (too few samples) "));
	assert_non_null(strstr(out, "\nstorage (target block layer, drive)     80.00?   180.00?   +100.00   2.25x"));
	assert_non_null(strstr(out, "\n(?: from fewer than 100 sampled commands (A 1, B 1)"));
	free(out);
	expect_verdict(a, b, "verdict: too few samples to judge (A 1, B 1 commands sampled, fewer than 100); "
			     "storage (target block layer, drive) grows most, +100.00 us (2.25x)\n", "too_few", NULL, 0);
	free(a);
	free(b);
}

/* A p99 equal to its p50 (a tail beyond the p99, or fixed delays) gives
 * no spread from the quantiles: the mean floors it, and +3 us of 115 over
 * 150 commands a side is within the noise. */
static void test_zero_spread(void **state)
{
	double sa[NTP_STAGE_COUNT] = { 2.5, 5.0, 20.0, 7.5, 80.0 }, sb[NTP_STAGE_COUNT];
	struct ntp_snapshot *a, *b;
	char st[32];
	int amp;

	(void)state;
	memcpy(sb, sa, sizeof(sb));
	sb[NTP_STAGE_STORAGE] = 83.0;
	a = group(sa, 150);
	b = group(sb, 150);
	no_spread(a);
	no_spread(b);
	assert_string_equal(verdict_kind(a, b, st, sizeof(st), &amp), "no_growth");
	assert_false(amp);
	free(a);
	free(b);
}

/* Storage 20 -> 22 us, the other stages (a twentieth of the latency) 3x:
 * their factor is no common slowdown to measure storage against; the
 * stage grown most is said. */
static void test_no_factor(void **state)
{
	static const double sa[NTP_STAGE_COUNT] = { 0.2, 0.2, 0.4, 0.3, 20.0 };
	static const double sb[NTP_STAGE_COUNT] = { 0.6, 0.6, 1.2, 0.9, 22.0 };
	struct ntp_snapshot *a = group(sa, 20000), *b = group(sb, 20000);

	(void)state;
	expect_verdict(a, b, "verdict: storage (target block layer, drive) grows most, +2.00 us (1.10x) of the "
			     "+4.20 us; the other stages hold too little of A's latency to tell a common "
			     "slowdown\n", "no_factor", "", 0);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uniform_seen),
		cmocka_unit_test(test_uniform_exact),
		cmocka_unit_test(test_one_stage),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_within_noise),
		cmocka_unit_test(test_two_stages),
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_zero_spread),
		cmocka_unit_test(test_no_factor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
