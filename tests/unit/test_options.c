// SPDX-License-Identifier: GPL-2.0
/* test_options.c - options as data (src/cli/options.h): the shared collector
 * table parses the same way for ntprof record and ntprof-top, the errors name
 * the option, and every command's tables are whole (no duplicate, each entry
 * documented) for the man pages and completion generated from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cli/options.h"
#include "top/opts.h"

static int parse_record(struct ntp_capture_opts *cap, struct ntp_record_opts *ro, char **argv, int argc,
			char *err)
{
	void *bases[] = { cap, cap, cap, ro };

	ntp_capture_defaults(cap);
	memset(ro, 0, sizeof(*ro));
	return ntp_options_parse(argc, argv, ntp_record_optsets, bases, 4, NULL, NULL, " (help)", err, 512);
}

static void test_record_parse(void **state)
{
	char *argv[] = { "record", "-r", "both", "-t", "rdma", "-s", "7", "--session", "nvme2n1", "--size", "4K,128K",
			 "--io-type", "write", "-i", "0.5", "--exact-queues", "--kprobes", "-d", "3", "-o", "x.ntp",
			 "--btf", "b.btf", "extra", NULL };
	struct ntp_capture_opts cap;
	struct ntp_record_opts ro;
	char err[512];
	int first;

	(void)state;
	first = parse_record(&cap, &ro, argv, 24, err);
	assert_int_equal(first, 23);
	assert_string_equal(argv[first], "extra");
	assert_int_equal(cap.co.role, NTP_ROLE_BOTH);
	assert_int_equal(cap.co.transport, NTP_TRANSPORT_RDMA);
	assert_int_equal(cap.co.sampling, 7);
	assert_string_equal(cap.co.session, "nvme2n1");
	assert_int_equal(cap.co.n_sizes, 2);
	assert_int_equal(cap.co.sizes[1], 128 * 1024);
	assert_int_equal(cap.co.io_type, NTP_IO_WRITE);
	assert_true(cap.interval_s == 0.5);
	assert_true(cap.co.exact_queues);
	assert_int_equal(cap.co.flavour, NTP_FLAVOUR_KPROBE);
	assert_int_equal(ro.duration, 3);
	assert_string_equal(ro.out, "x.ntp");
	assert_string_equal(cap.co.btf_path, "b.btf");
}

static void test_errors(void **state)
{
	char *a1[] = { "record", "--kprobes", "--fentry", NULL };
	char *a2[] = { "record", "-i", "0.01", NULL };
	char *a3[] = { "record", "--bogus", NULL };
	char *a4[] = { "record", "--btf", NULL };
	char *a5[] = { "record", "-r", "middle", NULL };
	char *a6[] = { "record", "-hZ", NULL };
	char *a7[] = { "record", "-h=1", NULL };
	char *a8[] = { "record", "-Z", "-h", NULL };
	struct ntp_capture_opts cap;
	struct ntp_record_opts ro;
	char err[512];

	(void)state;
	assert_int_equal(parse_record(&cap, &ro, a1, 3, err), -1);
	assert_string_equal(err, "--kprobes and --fentry exclude each other");
	assert_int_equal(parse_record(&cap, &ro, a2, 3, err), -1);
	assert_string_equal(err, "option -i: '0.01' is not a number from 0.1 to 86400");
	assert_int_equal(parse_record(&cap, &ro, a3, 2, err), -1);
	assert_string_equal(err, "unknown option '--bogus' (help)");
	assert_int_equal(parse_record(&cap, &ro, a4, 2, err), -1);
	assert_string_equal(err, "option --btf needs a value");
	assert_int_equal(parse_record(&cap, &ro, a5, 3, err), -1);
	assert_string_equal(err, "option -r: 'middle' is not host, target or both");
	/* a short option is named by its letter, not by the word it is in */
	assert_int_equal(parse_record(&cap, &ro, a6, 2, err), -1);
	assert_string_equal(err, "unknown option '-Z' (help)");
	assert_int_equal(parse_record(&cap, &ro, a7, 2, err), -1);
	assert_string_equal(err, "option -h takes no value");
	assert_int_equal(parse_record(&cap, &ro, a8, 3, err), -1);
	assert_string_equal(err, "unknown option '-Z' (help)");
}

/* "-X=" names X, also when the next word holds an '=' too; a value
 * missing in a cluster names the letter */
static void test_short_named(void **state)
{
	char *a1[] = { "record", "-h=", "-s=3", NULL };
	char *a2[] = { "record", "--offline", "-hj", NULL };
	char *a3[] = { "record", "-h", "-=", NULL };
	struct ntp_capture_opts cap;
	struct ntp_record_opts ro;
	char err[512];

	(void)state;
	assert_int_equal(parse_record(&cap, &ro, a1, 3, err), -1);
	assert_string_equal(err, "option -h takes no value");
	assert_int_equal(parse_record(&cap, &ro, a2, 3, err), -1);
	assert_string_equal(err, "option -j needs a value");
	assert_int_equal(parse_record(&cap, &ro, a3, 3, err), -1);
	assert_string_equal(err, "unknown option '-=' (help)");
}

/* -j - found before parsing, wherever it is, read as getopt reads it */
static void test_json_stdout(void **state)
{
	const struct ntp_optcmd *rep = ntp_optcmd_find("ntprof", "report");
	char *yes1[] = { "report", "--bogus", "-j", "-", NULL };
	char *yes2[] = { "report", "f.ntp", "--json=-", NULL };
	char *yes3[] = { "report", "-dj", "-", NULL };
	char *yes4[] = { "report", "--js", "-", "-x", NULL };
	char *no1[] = { "report", "-j", "out.json", "-", NULL };
	char *no2[] = { "report", "-j", "-", "-j", "x.json", NULL };
	char *no3[] = { "report", "--", "-j", "-", NULL };
	char *no4[] = { "report", "--what-if-qd", "-j", "-", NULL };	/* -j is --what-if-qd's value */
	char *rec[] = { "record", "-d", "1", "-j", "-", NULL };

	(void)state;
	assert_non_null(rep);
	assert_true(ntp_options_json_stdout(4, yes1, rep->sets, rep->n_sets));
	assert_true(ntp_options_json_stdout(3, yes2, rep->sets, rep->n_sets));
	assert_true(ntp_options_json_stdout(3, yes3, rep->sets, rep->n_sets));
	assert_true(ntp_options_json_stdout(4, yes4, rep->sets, rep->n_sets));
	assert_false(ntp_options_json_stdout(4, no1, rep->sets, rep->n_sets));
	assert_false(ntp_options_json_stdout(5, no2, rep->sets, rep->n_sets));
	assert_false(ntp_options_json_stdout(4, no3, rep->sets, rep->n_sets));
	assert_false(ntp_options_json_stdout(4, no4, rep->sets, rep->n_sets));
	assert_true(ntp_options_json_stdout(5, rec, ntp_record_optsets, 4));
	/* POSIXLY_CORRECT: getopt stops at the first operand, and so does the scan */
	setenv("POSIXLY_CORRECT", "1", 1);
	assert_false(ntp_options_json_stdout(3, yes2, rep->sets, rep->n_sets));
	assert_true(ntp_options_json_stdout(4, yes1, rep->sets, rep->n_sets));
	unsetenv("POSIXLY_CORRECT");
}

/* ntprof-top parses the same collector options with the same table. */
static void test_top_shares_the_table(void **state)
{
	char *argv[] = { "ntprof-top", "-r", "target", "-i", "0.25", "--session", "nvme1n1", "-b", "-n", "5",
			 "--replay", "h.ntp", "t.ntp", NULL };
	struct top_opts o;

	(void)state;
	assert_int_equal(top_parse_opts(13, argv, &o), 0);
	assert_int_equal(o.src.cap.co.role, NTP_ROLE_TARGET);
	assert_int_equal(o.src.interval_ms, 250);
	assert_string_equal(o.src.cap.co.session, "nvme1n1");
	assert_int_equal(o.iterations, 5);
	assert_int_equal(o.src.n_replay, 2);
	assert_string_equal(o.src.replay_files[0], "h.ntp");
	assert_string_equal(o.src.replay_files[1], "t.ntp");
	assert_ptr_equal(ntp_top_optsets[0].defs, ntp_record_optsets[0].defs);
}

/* ntprof-top's what-if options: the run's QD as report's --what-if-qd-was
 * takes it (1..1024), the tags marked as given. */
static void test_top_whatif(void **state)
{
	char *argv[] = { "ntprof-top", "--what-if-qd-was", "32", "--what-if-tags", "64", "--what-if-servers",
			 "storage=4", NULL };
	char *bad[] = { "ntprof-top", "--what-if-qd-was", "0", NULL };
	char *big[] = { "ntprof-top", "--what-if-qd-was", "1025", NULL };
	struct top_opts o;

	(void)state;
	assert_int_equal(top_parse_opts(7, argv, &o), 0);
	assert_int_equal(o.wi.base_qd, 32);
	assert_int_equal(o.wi.tags, 64);
	assert_string_equal(o.wi.tags_from, "--what-if-tags");
	assert_int_equal(o.wi.servers[NTP_STAGE_STORAGE], 4);
	assert_int_equal(top_parse_opts(3, bad, &o), -1);
	assert_int_equal(top_parse_opts(3, big, &o), -1);
}

/* Every command's tables: names and letters unique, each with its help. */
static void test_tables_whole(void **state)
{
	(void)state;
	assert_true(ntp_n_optcmds >= 2);
	for (size_t c = 0; c < ntp_n_optcmds; c++) {
		const struct ntp_optcmd *cmd = &ntp_optcmds[c];
		const struct ntp_optdef *all[128];
		size_t n = 0;

		for (size_t s = 0; s < cmd->n_sets; s++)
			for (const struct ntp_optdef *d = cmd->sets[s].defs; d->name || d->letter; d++) {
				assert_non_null(d->help);
				assert_true(d->help[0] != '\0');
				assert_true(n < 128);
				all[n++] = d;
			}
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++) {
				if (all[i]->name && all[j]->name)
					assert_string_not_equal(all[i]->name, all[j]->name);
				if (all[i]->letter)
					assert_int_not_equal(all[i]->letter, all[j]->letter);
			}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_parse),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_short_named),
		cmocka_unit_test(test_json_stdout),
		cmocka_unit_test(test_top_shares_the_table),
		cmocka_unit_test(test_top_whatif),
		cmocka_unit_test(test_tables_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
