// SPDX-License-Identifier: GPL-2.0
/* test_totals.c - counters since a recording's start, and between readings
 * (core/totals.h): what ntprof-top's w writes into its recording; and the
 * groups the model makes from such rows alone (core/model.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/model.h"
#include "core/model/totals.h"

static struct ntp_total row(const char *dev, uint32_t len, uint64_t cmds)
{
	struct ntp_total t;

	memset(&t, 0, sizeof(t));
	t.key.side = NTP_SIDE_HOST;
	t.key.io = NTP_IO_READ;
	t.key.len = len;
	snprintf(t.key.dev, sizeof(t.key.dev), "%s", dev);
	t.count.commands = cmds;
	t.count.bytes = cmds * len;
	return t;
}

static void test_since(void **state)
{
	struct ntp_total base[2] = { row("nvme0n1", 4096, 1000), row("nvme1n1", 4096, 50) };
	struct ntp_total cur[3] = { row("nvme1n1", 4096, 80), row("nvme0n1", 4096, 1700), row("nvme0n1", 8192, 9) };
	struct ntp_total out[3];

	(void)state;
	ntp_totals_since(cur, 3, base, 2, out);
	assert_int_equal(out[0].count.commands, 30);
	assert_int_equal(out[0].count.bytes, 30 * 4096);
	assert_int_equal(out[1].count.commands, 700);
	assert_int_equal(out[2].count.commands, 9);	/* a group born after the start: whole */
	/* a counter below its base (a reset) gives 0, not a wrapped number */
	cur[0].count.commands = 10;
	ntp_totals_since(cur, 1, base, 2, out);
	assert_int_equal(out[0].count.commands, 0);
}

static void test_at(void **state)
{
	struct ntp_total prev[1] = { row("nvme0n1", 4096, 1000) };
	struct ntp_total cur[2] = { row("nvme0n1", 4096, 3000), row("nvme2n1", 512, 100) };
	struct ntp_total out[2];

	(void)state;
	assert_int_equal(ntp_totals_at(prev, 1, 10, cur, 2, 20, 15, out), 2);
	assert_int_equal(out[0].count.commands, 2000);
	assert_int_equal(out[1].count.commands, 50);	/* absent before: zero then */
	ntp_totals_at(prev, 1, 10, cur, 2, 20, 25, out);
	assert_int_equal(out[0].count.commands, 4000);	/* past the last reading, at its rate */
	ntp_totals_at(prev, 1, 10, cur, 2, 20, 5, out);
	assert_int_equal(out[0].count.commands, 1000);
	ntp_totals_at(NULL, 0, 0, cur, 2, 20, 20, out);
	assert_int_equal(out[0].count.commands, 3000);
}

/* A totals row whose device name fills the field with no NUL (a damaged
 * file) makes no group from the counts alone: not a new one at each close
 * (the 31 bytes kept never match the row again), filling the table. */
static void test_unterminated_dev(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1000 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_total t[2] = { row("nvme1n1", 4096, 100), row("", 4096, 100) };

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	memset(t[1].key.dev, 'x', sizeof(t[1].key.dev));
	ntp_model_set_start(m, 10000000000ull);
	for (int i = 1; i <= 3; i++) {
		t[0].count.commands = 100u * (unsigned)i;
		t[1].count.commands = 100u * (unsigned)i;
		ntp_model_set_totals(m, t, 2, 10000000000ull + (uint64_t)i * 1000000000ull);
		ntp_model_close_interval(m, 10000000000ull + (uint64_t)i * 1000000000ull, s);
		assert_int_equal(s->n_groups, 1);
		assert_string_equal(s->groups[0].dev, "nvme1n1");
	}
	free(s);
	ntp_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_since),
		cmocka_unit_test(test_at),
		cmocka_unit_test(test_unterminated_dev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
