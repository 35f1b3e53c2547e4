// SPDX-License-Identifier: GPL-2.0
/* test_totals.c - counters since a recording's start, and between readings
 * (core/totals.h): what ntprof-top's w writes into its recording. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "core/totals.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_since),
		cmocka_unit_test(test_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
