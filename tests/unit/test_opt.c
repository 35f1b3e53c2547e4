// SPDX-License-Identifier: GPL-2.0
/* test_opt.c - the option values shared by ntprof and ntprof-top (core/opt.c):
 * what each accepts, and a one-line error naming the option for what it does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/opt.h"
#include "ntprof_event.h"

static void test_size(void **state)
{
	char err[NTP_OPT_ERR_LEN];
	unsigned v;

	(void)state;
	assert_int_equal(ntp_opt_size("--size", "512", &v, err), 0);
	assert_int_equal(v, 512);
	assert_int_equal(ntp_opt_size("--size", "4K", &v, err), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ntp_opt_size("--size", "4KiB", &v, err), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ntp_opt_size("--size", "128kB", &v, err), 0);
	assert_int_equal(v, 128 << 10);
	assert_int_equal(ntp_opt_size("--size", "1M", &v, err), 0);
	assert_int_equal(v, 1 << 20);
	assert_int_equal(ntp_opt_size("--size", "1024M", &v, err), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(ntp_opt_size("--size", "1025M", &v, err), -1);
	assert_string_equal(err, "option --size: '1025M' is not a size such as 512, 4K or 1M");
	/* 2^54 K wraps to 0 bytes in 64 bits: refused, not 0 */
	assert_int_equal(ntp_opt_size("--size", "18014398509481984K", &v, err), -1);
	assert_int_equal(ntp_opt_size("--size", "0", &v, err), -1);
	assert_int_equal(ntp_opt_size("--size", "-4K", &v, err), -1);
	assert_int_equal(ntp_opt_size("--size", "K", &v, err), -1);
	assert_int_equal(ntp_opt_size("--size", "4X", &v, err), -1);
	assert_int_equal(ntp_opt_size("--size", "", &v, err), -1);
	assert_string_equal(err, "option --size needs a value");
}

static void test_sizes(void **state)
{
	char err[NTP_OPT_ERR_LEN];
	uint32_t s[3];
	unsigned n = 0;

	(void)state;
	assert_int_equal(ntp_opt_sizes("--size", "4K,128K", s, 3, &n, err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(s[0], 4096);
	assert_int_equal(s[1], 128 << 10);
	/* a repeated option appends, up to the maximum */
	assert_int_equal(ntp_opt_sizes("--size", "8K,16K", s, 3, &n, err), -1);
	assert_string_equal(err, "option --size: at most 3 sizes");
	n = 0;
	assert_int_equal(ntp_opt_sizes("--size", ",", s, 3, &n, err), -1);
	assert_string_equal(err, "option --size: needs at least one size");
	assert_int_equal(ntp_opt_sizes("--size", "4K,3Q", s, 3, &n, err), -1);
	assert_string_equal(err, "option --size: '3Q' is not a size such as 512, 4K or 1M");
}

static void test_numbers(void **state)
{
	char err[NTP_OPT_ERR_LEN];
	unsigned u;
	double d;

	(void)state;
	assert_int_equal(ntp_opt_u32("-s", "1000", 1, 1u << 30, &u, err), 0);
	assert_int_equal(u, 1000);
	assert_int_equal(ntp_opt_u32("-s", "0", 1, 1u << 30, &u, err), -1);
	assert_string_equal(err, "option -s: '0' is not a whole number from 1 to 1073741824");
	assert_int_equal(ntp_opt_u32("-s", "-1", 0, 10, &u, err), -1);
	assert_int_equal(ntp_opt_u32("-s", "1x", 0, 10, &u, err), -1);
	assert_int_equal(ntp_opt_double("-i", "0.5", 0.1, 3600, &d, err), 0);
	assert_true(d == 0.5);
	assert_int_equal(ntp_opt_double("-i", "nan", 0.1, 3600, &d, err), -1);
	assert_string_equal(err, "option -i: 'nan' is not a number from 0.1 to 3600");
	assert_int_equal(ntp_opt_double("-i", "", 0.1, 3600, &d, err), -1);
}

static void test_names(void **state)
{
	char err[NTP_OPT_ERR_LEN], dev[NTP_DEV_LEN];
	uint8_t b;
	int io;

	(void)state;
	assert_int_equal(ntp_opt_role("-r", "both", &b, err), 0);
	assert_int_equal(b, NTP_ROLE_BOTH);
	assert_int_equal(ntp_opt_role("-r", "middle", &b, err), -1);
	assert_string_equal(err, "option -r: 'middle' is not host, target or both");
	assert_int_equal(ntp_opt_transport("-t", "rdma", &b, err), 0);
	assert_int_equal(b, NTP_TRANSPORT_RDMA);
	assert_int_equal(ntp_opt_transport("-t", "fc", &b, err), -1);
	assert_int_equal(ntp_opt_io_type("--io-type", "write", &io, err), 0);
	assert_int_equal(io, NTP_IO_WRITE);
	assert_int_equal(ntp_opt_io_type("--io-type", "trim", &io, err), -1);
	assert_int_equal(ntp_opt_session("--session", "nvme0n1", dev, err), 0);
	assert_string_equal(dev, "nvme0n1");
	assert_int_equal(ntp_opt_session("--session", "/dev/nvme0n1", dev, err), -1);
	assert_int_equal(ntp_opt_session("--session", "sda", dev, err), -1);
	assert_string_equal(err, "option --session: 'sda' is not a namespace name such as nvme0n1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
