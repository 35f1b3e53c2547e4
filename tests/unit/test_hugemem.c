// SPDX-License-Identifier: GPL-2.0
/* test_hugemem.c - memory on a 2 MiB boundary, advised huge pages (core/hugemem.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
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

/* mapped from p for span bytes (mincore fails with ENOMEM on a range any
 * page of which is unmapped) */
static int mapped(const uint8_t *p, size_t span)
{
	static unsigned char vec[4096];

	return span / 4096 <= sizeof(vec) && mincore((void *)p, span, vec) == 0;
}

/* A reservation is exactly span bytes from a boundary, whatever span's
 * length in huge pages: the huge page's worth more it took is cut off
 * before and after (a page on either side is free again), and it is
 * address space of the protection asked, here one a test can read. */
static void test_reserve(void **state)
{
	static const size_t spans[] = { 4096, NTP_HUGE_PAGE, NTP_HUGE_PAGE + 3 * 4096, 3 * NTP_HUGE_PAGE };

	(void)state;
	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		size_t span = spans[i];
		uint8_t *p = ntp_huge_reserve(span, PROT_READ);

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % NTP_HUGE_PAGE, 0);
		assert_true(mapped(p, span));
		errno = 0;
		assert_false(mapped(p + span, 4096));
		assert_int_equal(errno, ENOMEM);
		assert_int_equal(p[0] | p[span - 1], 0);
		assert_int_equal(munmap(p, span), 0);
		assert_false(mapped(p, 4096));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_reserve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
