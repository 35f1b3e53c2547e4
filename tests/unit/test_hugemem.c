// SPDX-License-Identifier: GPL-2.0
/* test_hugemem.c - memory on a 2 MiB boundary, advised huge pages (core/hugemem.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>
#include "core/hugemem.h"
#include "smaps.h"

#define LEN ((size_t)3 << 20)	/* one and a half huge pages: rounded up to two */

/* The map is zeroed address space on a boundary, its whole huge pages
 * advised (the kernel backs only a 2 MiB range wholly inside the advised
 * one), nothing of it mapped before or after; unmapped, nothing is left. */
static void test_map(void **state)
{
	uint8_t *p = ntp_huge_map(LEN);
	uintptr_t lo = 0, hi = 0;
	int hg = 0;

	(void)state;
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % NTP_HUGE_PAGE, 0);
	assert_true(mapping_of(p, &lo, &hi, &hg));
	assert_int_equal(lo, (uintptr_t)p);
	assert_int_equal(hi, (uintptr_t)p + 2 * NTP_HUGE_PAGE);
	if (have_thp())
		assert_true(hg);
	for (size_t i = 0; i < 2 * NTP_HUGE_PAGE; i += 4096)
		assert_int_equal(p[i] | p[i + 4095], 0);
	memset(p, 0xa5, 2 * NTP_HUGE_PAGE);	/* all of it is the caller's */
	ntp_huge_unmap(p, LEN);
	/* gone (a later mapping of the C library's may lie there, not this one) */
	assert_false(mapping_of(p, &lo, &hi, &hg) && lo == (uintptr_t)p && hi == (uintptr_t)p + 2 * NTP_HUGE_PAGE);
	ntp_huge_unmap(NULL, LEN);	/* nothing mapped: nothing to do */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
