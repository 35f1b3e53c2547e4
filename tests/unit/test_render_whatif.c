// SPDX-License-Identifier: GPL-2.0
/*
 * test_render_whatif.c - ntprof-top's what-if off the UI thread
 * (core/whatif_work.h): the fit is made again only when its input changed
 * (ntp_wi_input_same), and the screen never shows a prediction under
 * another QD than the one it was made for. Also the header's interval
 * setting (shown only when the interval is not about it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/model/whatif_work.h"
#include "ui/render.h"
#include "top_fixture.h"

/* The interval's p99s (end to end and each stage's) times f. */
static void scale_p99(struct ntp_snapshot *s, double f)
{
	struct ntp_snap_group *g = &s->groups[0];

	g->e2e_p99_us *= f;
	for (int st = 0; st < NTP_STAGE_COUNT; st++)
		g->stage[st].p99_us *= f;
}

#define N 12
static struct ntp_snapshot snap[N];
static const struct ntp_snapshot *ptr[N];

/* The input of the newest of the first n intervals. */
static void input_at(int n, const struct ntp_wi_params *p, struct ntp_wi_input *in)
{
	for (int i = 0; i < N; i++)
		ptr[i] = &snap[i];
	ntp_wi_input_of(ptr, n, &snap[n - 1], &snap[n - 1].groups[0], p, in);
}

/* Loads 1, 2, 8, then 8 again (a little noise), then 32. */
static void history(void)
{
	fixture_level_interval(&snap[0], 0, 1, 1);
	fixture_level_interval(&snap[1], 1, 2, 1);
	fixture_level_interval(&snap[2], 2, 8, 1);
	fixture_level_interval(&snap[3], 3, 8, 1.03);
	fixture_level_interval(&snap[4], 4, 8, 0.98);
	fixture_level_interval(&snap[5], 5, 32, 1);
	fixture_level_interval(&snap[6], 6, 8, 1.15);	/* the load's data moved */
	fixture_level_interval(&snap[7], 7, 8, 1);
}

static void test_input_same(void **state)
{
	static struct ntp_wi_input a, b;
	struct ntp_wi_params p = { 0 };

	(void)state;
	history();
	input_at(3, &p, &a);
	assert_int_equal(a.n_fit, 2);
	/* one more interval of a level seen, within the noise: the same */
	input_at(4, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 1);
	input_at(5, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 1);
	/* a new level */
	input_at(6, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	/* the base's QD moved (32, then 8 again) */
	input_at(6, &p, &a);
	input_at(7, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	/* a level's data moved past NTP_WI_REFIT_TOL, the base (QD 8) and the
	 * levels' QDs as they were: the QD 2 level's rate and means by 15 % */
	input_at(5, &p, &a);
	fixture_level_interval(&snap[1], 1, 2, 1.15);
	input_at(5, &p, &b);
	assert_int_equal(b.n_fit, a.n_fit);
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	/* within it (5 %): the same */
	fixture_level_interval(&snap[1], 1, 2, 1.05);
	input_at(5, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 1);
	history();
	/* a level evicted: the same intervals without the oldest */
	input_at(5, &p, &a);
	b = a;
	b.n_fit--;
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	/* a parameter (the run's QD given), another group */
	b = a;
	b.p.base_qd = 8;
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	b = a;
	b.base.len = 8192;
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	b = a;
	assert_int_equal(ntp_wi_input_same(&a, &b), 1);
}

/* The fit is calibrated on the base interval's own rate, means and p99s,
 * not on its level's average: with ten intervals at the base's load, a
 * base whose p99 is 4x, or whose means are 35 % higher, is a new input,
 * though its level moved by less than the tolerance (or, the p99, not at
 * all). */
static void test_input_same_base_own_data(void **state)
{
	static struct ntp_wi_input a, b;
	struct ntp_wi_params p = { 0 };

	(void)state;
	fixture_level_interval(&snap[0], 0, 1, 1);
	fixture_level_interval(&snap[1], 1, 2, 1);
	for (int i = 2; i < N; i++)
		fixture_level_interval(&snap[i], (uint64_t)i, 8, 1);
	input_at(N - 1, &p, &a);
	input_at(N, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 1);
	/* the newest interval's tail grew, its means did not */
	scale_p99(&snap[N - 1], 4);
	input_at(N, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	/* only one stage's p99 */
	fixture_level_interval(&snap[N - 1], N - 1, 8, 1);
	snap[N - 1].groups[0].stage[NTP_STAGE_NETWORK].p99_us *= 2;
	input_at(N, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	/* its rate and means 35 % off (the same QD: rate x mean kept) */
	fixture_level_interval(&snap[N - 1], N - 1, 8, 1.35);
	input_at(N, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 0);
	/* within the tolerance: the same */
	fixture_level_interval(&snap[N - 1], N - 1, 8, 1.04);
	scale_p99(&snap[N - 1], 1.05);
	input_at(N, &p, &b);
	assert_int_equal(ntp_wi_input_same(&a, &b), 1);
}

/* A pass that takes long (held): S's wait gives up after its time and
 * says not done; stop does not wait for the pass (an old stop joined the
 * worker here and never returned); the worker, let go, ends the pass and
 * frees itself. */
static void test_worker_long_pass(void **state)
{
	static struct ntp_wi_input in;
	struct ntp_wi_params p = { 0 };
	struct ntp_wi_work *w = ntp_wi_work_start();
	struct timespec t0, t1;

	(void)state;
	assert_non_null(w);
	history();
	input_at(3, &p, &in);
	pthread_mutex_lock(&w->mu);
	w->hold = 1;
	pthread_mutex_unlock(&w->mu);
	assert_int_equal(ntp_wi_work_want(w, &in, 16), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ntp_wi_work_wait_ms(w, 50), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) >= 45000000L);
	ntp_wi_work_stop(w);
	/* held, the worker has not freed it: let it go */
	pthread_mutex_lock(&w->mu);
	w->hold = 0;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	/* a short pass, done at once */
	w = ntp_wi_work_start();
	assert_non_null(w);
	assert_int_equal(ntp_wi_work_want(w, &in, 16), 1);
	assert_int_equal(ntp_wi_work_wait_ms(w, 10000), 1);
	ntp_wi_work_stop(w);
}

static void test_worker_refits_on_change_only(void **state)
{
	static struct ntp_wi_input in;
	static struct ntp_wi_shown sh;
	struct ntp_wi_params p = { 0 };
	struct ntp_wi_work *w = ntp_wi_work_start();
	unsigned long fits, preds;

	(void)state;
	assert_non_null(w);
	history();
	input_at(3, &p, &in);
	assert_int_equal(ntp_wi_work_want(w, &in, 16), 1);
	ntp_wi_work_wait(w);
	ntp_wi_work_counts(w, &fits, &preds);
	assert_int_equal(fits, 1);
	assert_int_equal(preds, 1);
	/* the same input again, and one more interval of the same level:
	 * nothing to do */
	assert_int_equal(ntp_wi_work_want(w, &in, 16), 0);
	input_at(4, &p, &in);
	assert_int_equal(ntp_wi_work_want(w, &in, 16), 0);
	input_at(5, &p, &in);
	assert_int_equal(ntp_wi_work_want(w, &in, 16), 0);
	ntp_wi_work_wait(w);
	ntp_wi_work_counts(w, &fits, &preds);
	assert_int_equal(fits, 1);
	assert_int_equal(preds, 1);
	ntp_wi_work_get(w, &sh);
	assert_int_equal(sh.index, 2);	/* still the fit of interval 2 */
	assert_int_equal(sh.pending, 0);
	/* and S's JSON is fitted on that input, not on the one asked last */
	assert_non_null(ntp_wi_work_fitted(w));
	assert_int_equal(ntp_wi_work_fitted(w)->index, 2);
	/* another QD: a prediction, no fit */
	assert_int_equal(ntp_wi_work_want(w, &in, 32), 1);
	ntp_wi_work_wait(w);
	ntp_wi_work_counts(w, &fits, &preds);
	assert_int_equal(fits, 1);
	assert_int_equal(preds, 2);
	ntp_wi_work_get(w, &sh);
	assert_int_equal(sh.qd, 32);
	assert_int_equal(sh.p.qd, 32);
	/* a new level: a fit */
	input_at(6, &p, &in);
	assert_int_equal(ntp_wi_work_want(w, &in, 32), 1);
	ntp_wi_work_wait(w);
	ntp_wi_work_counts(w, &fits, &preds);
	assert_int_equal(fits, 2);
	ntp_wi_work_get(w, &sh);
	assert_int_equal(sh.index, 5);
	assert_int_equal(ntp_wi_work_fitted(w)->index, 5);
	assert_true(sh.m.ok);
	assert_int_equal(sh.m.st[NTP_STAGE_STORAGE].servers, 4);
	ntp_wi_work_stop(w);
}

/* The predicted line's QD on the screen, 0 if none. */
static unsigned shown_qd(const char *text)
{
	const char *p = strstr(text, "predicted QD ");
	unsigned qd = 0;

	return p && sscanf(p, "predicted QD %u", &qd) == 1 ? qd : 0;
}

/* Key presses: at every redraw the prediction on the screen is the one
 * made for the QD it is labelled with, and a QD asked for but not
 * computed yet is said to be computing. */
static void test_key_qd_never_disagrees(void **state)
{
	static struct ntp_wi_input in;
	static struct ntp_wi_shown sh;
	struct ntp_wi_params par = { .tags = 16, .hw_queues = 2, .tags_from = "sysfs" };
	struct ntp_top_info info = { .host = "tb-host", .source = "replay run.ntp", .glyphs = NTP_GLYPHS_UTF8 };
	struct ntp_history h = { ptr, 6 };
	struct ntp_view_ctx ctx = { .n_visible = 1, .n_hist = 6, .oldest = 0, .newest = 5 };
	struct ntp_wi_work *w = ntp_wi_work_start();
	struct ntp_screen scr;
	struct ntp_view v;
	char want[64];

	(void)state;
	assert_non_null(w);
	history();
	for (int i = 0; i < N; i++)
		ptr[i] = &snap[i];
	info.wi = &par;
	ntp_view_init(&v, 1000, 1);
	ntp_view_apply(&v, NTP_ACT_WHATIF, &ctx);
	assert_int_equal(ntp_screen_init(&scr, 30, 120), 0);
	for (int step = 0; step < 24; step++) {
		const char *k = step < 6 ? ">" : step < 12 ? "]" : step < 18 ? "<" : "[";
		char *text;
		unsigned qd;

		ntp_view_apply(&v, ntp_key_action(&v, *k), &ctx);
		ntp_wi_input_of(ptr, h.n, &snap[5], &snap[5].groups[0], &par, &in);
		in.p.base_qd = v.wi_qd_was;
		ntp_wi_work_want(w, &in, v.wi_qd);
		/* at once, and once the worker is done */
		for (int pass = 0; pass < 2; pass++) {
			if (pass)
				ntp_wi_work_wait(w);
			ntp_wi_work_get(w, &sh);
			par.shown = &sh;
			ntp_render(&scr, &v, &h, &info);
			text = ntp_screen_to_text(&scr);
			qd = shown_qd(text);
			if (qd) {
				assert_true(sh.valid && sh.pred_ok);
				assert_int_equal(qd, sh.qd);
				assert_int_equal(qd, sh.p.qd);
			} else {
				assert_true(strstr(text, "no prediction") || strstr(text, "computing"));
			}
			/* a prediction at another QD than the view's is said to be on its way */
			snprintf(want, sizeof(want), "computing QD %u ...", v.wi_qd);
			if (qd && qd != v.wi_qd)
				assert_non_null(strstr(text, want));
			if (pass) {
				/* done: the view's QD and the run's QD as asked */
				assert_null(strstr(text, "computing"));
				if (qd)
					assert_int_equal(qd, v.wi_qd);
				if (qd && v.wi_qd_was) {
					snprintf(want, sizeof(want), "measured  QD %-4u", v.wi_qd_was);
					assert_non_null(strstr(text, want));
				}
			}
			free(text);
		}
	}
	ntp_screen_free(&scr);
	ntp_wi_work_stop(w);
}

/* The setting beside the interval only when the interval is not about it
 * (within 20 %): a live interval a little off 1 s is 1 s. */
static void test_header_setting_about(void **state)
{
	static struct ntp_snapshot t[1];
	struct ntp_history th = { (const struct ntp_snapshot *const[]){ t }, 1 };
	struct ntp_top_info info = { .host = "tb-host", .source = "live", .glyphs = NTP_GLYPHS_UTF8 };
	static const struct {
		double seconds;
		unsigned setting;
		int shown;
	} c[] = {
		{ 0.932, 1000, 0 }, { 0.87, 1000, 0 }, { 1.07, 1000, 0 }, { 1.0, 1000, 0 },
		{ 1.0, 250, 1 }, { 1.0, 2000, 1 }, { 1.0, 500, 1 }, { 0.4, 1000, 1 }, { 1.9, 2000, 0 },
	};
	struct ntp_screen s;
	struct ntp_view v;

	(void)state;
	fixture_snapshot(t, 100);
	assert_int_equal(ntp_screen_init(&s, 24, 80), 0);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *text;

		t->seconds = c[i].seconds;
		ntp_view_init(&v, c[i].setting, 100);
		ntp_render(&s, &v, &th, &info);
		text = ntp_screen_to_text(&s);
		if (c[i].shown)
			assert_non_null(strstr(text, "(setting "));
		else
			assert_null(strstr(text, "(setting "));
		free(text);
	}
	ntp_screen_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_input_same),
		cmocka_unit_test(test_input_same_base_own_data),
		cmocka_unit_test(test_worker_refits_on_change_only),
		cmocka_unit_test(test_worker_long_pass),
		cmocka_unit_test(test_key_qd_never_disagrees),
		cmocka_unit_test(test_header_setting_about),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
