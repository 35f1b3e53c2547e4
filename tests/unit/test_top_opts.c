// SPDX-License-Identifier: GPL-2.0
/* test_top_opts.c - ntprof-top's command line (src/top/opts.c): an option
 * given twice takes the last value, --what-if-servers too (as in ntprof
 * report, docs/options.md); an option the mode run has no use for is refused
 * (docs/top.md); a replay checks -r, -t and -s against its recording. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "top/opts.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

/* The last --what-if-servers is the one taken: the stages the first one
 * named are not kept (report parses only its last string). */
static void test_servers_last_wins(void **state)
{
	char *argv[] = { "ntprof-top", "--what-if-servers", "storage=4", "--what-if-servers", "network=2", NULL };
	char *one[] = { "ntprof-top", "--what-if-servers", "storage=4,network=delay", NULL };
	/* a bad value given before the one taken is not looked at, as in report */
	char *bad_first[] = { "ntprof-top", "--what-if-servers", "nosuch=1", "--what-if-servers", "storage=2", NULL };
	char *bad_last[] = { "ntprof-top", "--what-if-servers", "storage=2", "--what-if-servers", "storage=0", NULL };
	struct top_opts o;

	(void)state;
	assert_int_equal(top_parse_opts(ARGC(argv), argv, &o), 0);
	assert_int_equal(o.wi.servers[NTP_STAGE_NETWORK], 2);
	assert_int_equal(o.wi.servers[NTP_STAGE_STORAGE], 0);
	assert_int_equal(top_parse_opts(ARGC(one), one, &o), 0);
	assert_int_equal(o.wi.servers[NTP_STAGE_STORAGE], 4);
	assert_int_equal(o.wi.servers[NTP_STAGE_NETWORK], -1);
	assert_int_equal(top_parse_opts(ARGC(bad_first), bad_first, &o), 0);
	assert_int_equal(o.wi.servers[NTP_STAGE_STORAGE], 2);
	assert_int_equal(top_parse_opts(ARGC(bad_last), bad_last, &o), -1);
}

/* Defaults stay what they were when nothing is given. */
static void test_defaults(void **state)
{
	char *argv[] = { "ntprof-top", NULL };
	struct top_opts o;

	(void)state;
	unsetenv("COLUMNS");
	assert_int_equal(top_parse_opts(ARGC(argv), argv, &o), 0);
	assert_int_equal(o.src.cap.co.role, NTP_ROLE_HOST);
	assert_int_equal(o.src.cap.co.transport, NTP_TRANSPORT_TCP);
	assert_int_equal(o.src.cap.co.sampling, 1000);
	assert_true(o.src.cap.co.attach_timeout_s == 10);
	assert_true(o.src.speed == 1);
	assert_int_equal(o.width, 100);
	assert_string_equal(o.theme, "default");
	assert_string_equal(o.dir, ".");
	assert_int_equal(o.given, 0);
}

/* Each refused: the option is named on one line (stderr), -1 (exit 2). */
static void test_mode_refusals(void **state)
{
	char *refused[][8] = {
		{ "ntprof-top", "--replay", "a.ntp", "--kprobes", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--fentry", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--exact-queues", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--btf", "x.btf", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--attach-timeout", "3", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--spdk-host", "perf", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--spdk-target", "tgt", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--target-session", "nqn.x:1", NULL },
		{ "ntprof-top", "--speed", "2", NULL },
		{ "ntprof-top", "--width", "80", NULL },
		{ "ntprof-top", "-b", "--json", "--width", "80", NULL },
		{ "ntprof-top", "-b", "--theme", "light", NULL },
		{ "ntprof-top", "-b", "--dir", "/tmp", NULL },
		{ "ntprof-top", "-b", "--what-if-servers", "storage=2", NULL },
		{ "ntprof-top", "-b", "--what-if-tags", "4", NULL },
		{ "ntprof-top", "-b", "--what-if-qd-was", "4", NULL },
	};
	char *ok[][12] = {
		/* what a replay filters by, and its interval */
		{ "ntprof-top", "--replay", "a.ntp", "--session", "nvme1n1", "--io-type", "read", NULL },
		{ "ntprof-top", "--replay", "a.ntp", "--size", "4K", "-i", "0.5", "--speed", "0", NULL },
		{ "ntprof-top", "-b", "--width", "80", "--no-color", "--ascii", NULL },
		{ "ntprof-top", "--theme", "light", "--dir", "/tmp", "--what-if-tags", "4", NULL },
	};
	struct top_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int argc = 0;

		while (refused[i][argc])
			argc++;
		assert_int_equal(top_parse_opts(argc, refused[i], &o), -1);
	}
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int argc = 0;

		while (ok[i][argc])
			argc++;
		assert_int_equal(top_parse_opts(argc, ok[i], &o), 0);
	}
}

/* A replay's -r, -t, -s say what the recording holds: else refused. */
static void test_replay_checks(void **state)
{
	char *r_target[] = { "ntprof-top", "--replay", "a.ntp", "-r", "target", NULL };
	char *r_both[] = { "ntprof-top", "--replay", "a.ntp", "-r", "both", NULL };
	char *r_host[] = { "ntprof-top", "--replay", "a.ntp", "-r", "both", "-r", "host", NULL };
	char *t_rdma[] = { "ntprof-top", "--replay", "a.ntp", "-t", "rdma", NULL };
	char *s_10[] = { "ntprof-top", "--replay", "a.ntp", "-s", "10", NULL };
	char *s_7[] = { "ntprof-top", "--replay", "a.ntp", "-s", "7", NULL };
	char *none[] = { "ntprof-top", "--replay", "a.ntp", NULL };
	struct ntp_file_info host = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 10 };
	struct ntp_file_info both = host;
	struct top_opts o;

	(void)state;
	both.role = NTP_ROLE_BOTH;
	assert_int_equal(top_parse_opts(ARGC(none), none, &o), 0);
	assert_int_equal(top_check_replay(&o, &host), 0);
	assert_int_equal(top_parse_opts(ARGC(r_target), r_target, &o), 0);
	assert_int_equal(top_check_replay(&o, &host), -1);
	assert_int_equal(top_check_replay(&o, &both), 0);
	assert_int_equal(top_parse_opts(ARGC(r_both), r_both, &o), 0);
	assert_int_equal(top_check_replay(&o, &host), -1);
	assert_int_equal(top_check_replay(&o, &both), 0);
	assert_int_equal(top_parse_opts(ARGC(r_host), r_host, &o), 0);
	assert_int_equal(top_check_replay(&o, &host), 0);
	assert_int_equal(top_parse_opts(ARGC(t_rdma), t_rdma, &o), 0);
	assert_int_equal(top_check_replay(&o, &host), -1);
	assert_int_equal(top_parse_opts(ARGC(s_10), s_10, &o), 0);
	assert_int_equal(top_check_replay(&o, &host), 0);
	assert_int_equal(top_parse_opts(ARGC(s_7), s_7, &o), 0);
	assert_int_equal(top_check_replay(&o, &host), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_servers_last_wins),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_mode_refusals),
		cmocka_unit_test(test_replay_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
