// SPDX-License-Identifier: GPL-2.0
/* test_keys.c - ntprof-top's key table and dispatch, as pure functions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ui/keys.h"

static const char ns_list[][NTP_DEV_LEN] = { "nvme1n1", "nvme2n1" };
static const struct ntp_view_ctx ctx = {
	.ns = ns_list, .n_ns = 2, .n_visible = 3, .n_hist = 5, .oldest = 10, .newest = 14,
};

static unsigned press(struct ntp_view *v, int key)
{
	return ntp_view_apply(v, ntp_key_action(v, key), &ctx);
}

static void test_table_is_consistent(void **state)
{
	(void)state;
	/* Every key bound once per mode; every binding documented (or continuing one); q everywhere. */
	for (int i = 0; i < ntp_n_bindings; i++) {
		assert_true(ntp_bindings[i].modes);
		assert_true(ntp_bindings[i].act != NTP_ACT_NONE);
		if (ntp_bindings[i].keyname)
			assert_non_null(ntp_bindings[i].help);
		else
			assert_true(i > 0);
		for (int j = i + 1; j < ntp_n_bindings; j++)
			assert_false(ntp_bindings[i].key == ntp_bindings[j].key &&
				     (ntp_bindings[i].modes & ntp_bindings[j].modes));
	}
	for (unsigned m = NTP_MODE_MAIN; m <= NTP_MODE_HELP; m <<= 1) {
		struct ntp_view v;

		ntp_view_init(&v, 1000, 100);
		v.mode = m;
		assert_int_equal(ntp_key_action(&v, 'q'), NTP_ACT_QUIT);
		assert_int_equal(press(&v, 'q'), NTP_REACT_QUIT);
	}
}

static void test_help_toggles_and_returns(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	assert_int_equal(press(&v, 'd'), NTP_REACT_REDRAW);
	assert_int_equal(v.mode, NTP_MODE_DETAIL);
	press(&v, '?');
	assert_int_equal(v.mode, NTP_MODE_HELP);
	/* In help, data keys do nothing. */
	assert_int_equal(press(&v, 't'), 0);
	assert_int_equal(v.io, -1);
	press(&v, NTP_KEY_F1);
	assert_int_equal(v.mode, NTP_MODE_DETAIL);
	press(&v, 'h');
	press(&v, NTP_KEY_ESC);
	assert_int_equal(v.mode, NTP_MODE_DETAIL);
	press(&v, NTP_KEY_ESC);
	assert_int_equal(v.mode, NTP_MODE_MAIN);
	assert_int_equal(press(&v, NTP_KEY_ESC), 0);	/* not bound in the main screen */
}

static void test_namespace_cycle(void **state)
{
	struct ntp_view v;
	struct ntp_view_ctx none = ctx;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	v.selected = 2;
	press(&v, 'n');
	assert_string_equal(v.ns, "nvme1n1");
	assert_int_equal(v.selected, 0);
	assert_string_equal(v.msg, "namespace: nvme1n1");
	press(&v, 'n');
	assert_string_equal(v.ns, "nvme2n1");
	press(&v, 'n');
	assert_string_equal(v.ns, "");
	assert_string_equal(v.msg, "namespace: all");
	press(&v, 'N');
	assert_string_equal(v.ns, "nvme2n1");
	/* A namespace that vanished: next starts from the first. */
	strcpy(v.ns, "nvme9n9");
	press(&v, 'n');
	assert_string_equal(v.ns, "nvme1n1");
	none.n_ns = 0;
	ntp_view_apply(&v, NTP_ACT_NS_NEXT, &none);
	assert_string_equal(v.ns, "");
	assert_string_equal(v.msg, "no namespace seen yet");
}

static void test_io_type_and_selection(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	press(&v, 't');
	assert_int_equal(v.io, NTP_IO_READ);
	press(&v, 't');
	assert_int_equal(v.io, NTP_IO_WRITE);
	press(&v, 't');
	assert_int_equal(v.io, -1);
	press(&v, NTP_KEY_UP);
	assert_int_equal(v.selected, 0);
	press(&v, NTP_KEY_DOWN);
	press(&v, NTP_KEY_DOWN);
	press(&v, NTP_KEY_DOWN);
	assert_int_equal(v.selected, 2);	/* three visible groups */
	press(&v, NTP_KEY_UP);
	assert_int_equal(v.selected, 1);
}

static void test_sampling_and_interval(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	assert_int_equal(press(&v, 's'), NTP_REACT_REDRAW | NTP_REACT_SAMPLING);
	assert_int_equal(v.sampling, 1000);
	press(&v, 's');
	assert_int_equal(v.sampling, 1);
	press(&v, 's');
	assert_int_equal(v.sampling, 10);
	v.sampling = 37;	/* -s 37: next step up */
	press(&v, 's');
	assert_int_equal(v.sampling, 100);
	v.sampling_fixed = 1;
	assert_int_equal(press(&v, 's'), NTP_REACT_REDRAW);
	assert_int_equal(v.sampling, 100);
	assert_string_equal(v.msg, "sampling is fixed by the recording (1 in 100)");

	assert_int_equal(press(&v, '+'), NTP_REACT_REDRAW | NTP_REACT_INTERVAL);
	assert_int_equal(v.interval_ms, 2000);
	press(&v, '-');
	press(&v, '-');
	press(&v, '-');
	assert_int_equal(v.interval_ms, 250);
	assert_int_equal(press(&v, '-'), NTP_REACT_REDRAW);
	assert_int_equal(v.interval_ms, 250);
	v.interval_ms = 30000;
	assert_int_equal(press(&v, '+'), NTP_REACT_REDRAW);
	v.interval_ms = 1500;	/* -i 1.5 */
	press(&v, '+');
	assert_int_equal(v.interval_ms, 2000);
}

static void test_pause_and_step(void **state)
{
	struct ntp_view v;
	struct ntp_view_ctx empty = ctx;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	press(&v, NTP_KEY_LEFT);
	assert_false(v.paused);
	assert_string_equal(v.msg, "pause first (Space) to step through intervals");
	empty.n_hist = 0;
	ntp_view_apply(&v, NTP_ACT_PAUSE, &empty);
	assert_false(v.paused);
	press(&v, ' ');
	assert_true(v.paused);
	assert_int_equal(v.shown, 14);
	for (int i = 0; i < 6; i++)
		press(&v, NTP_KEY_LEFT);
	assert_int_equal(v.shown, 10);
	assert_string_equal(v.msg, "interval 10 is the oldest kept");
	press(&v, NTP_KEY_RIGHT);
	assert_int_equal(v.shown, 11);
	/* The shown interval fell out of the ring while paused. */
	v.shown = 3;
	press(&v, NTP_KEY_RIGHT);
	assert_int_equal(v.shown, 11);
	v.shown = 14;
	press(&v, NTP_KEY_RIGHT);
	assert_int_equal(v.shown, 14);
	assert_string_equal(v.msg, "interval 14 is the newest");
	press(&v, ' ');
	assert_false(v.paused);
}

static void test_side_effects_are_reactions(void **state)
{
	struct ntp_view v;

	(void)state;
	ntp_view_init(&v, 1000, 100);
	assert_int_equal(press(&v, 'w'), NTP_REACT_REDRAW | NTP_REACT_RECORD);
	assert_int_equal(press(&v, 'S'), NTP_REACT_REDRAW | NTP_REACT_SNAPSHOT);
	assert_int_equal(press(&v, NTP_KEY_CTRL_L), NTP_REACT_REDRAW | NTP_REACT_CLEAR);
	assert_int_equal(press(&v, 'x'), 0);
	assert_int_equal(press(&v, NTP_KEY_NONE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_is_consistent),
		cmocka_unit_test(test_help_toggles_and_returns),
		cmocka_unit_test(test_namespace_cycle),
		cmocka_unit_test(test_io_type_and_selection),
		cmocka_unit_test(test_sampling_and_interval),
		cmocka_unit_test(test_pause_and_step),
		cmocka_unit_test(test_side_effects_are_reactions),
	};

	return cmocka_run_group_tests_name("keys", tests, NULL, NULL);
}
