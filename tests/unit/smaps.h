/* SPDX-License-Identifier: GPL-2.0 */
/* smaps.h - the mapping of this process that holds an address, as
 * /proc/self/smaps tells it (tests of memory advised huge pages). Include
 * after cmocka.h. */
#ifndef NTP_TEST_SMAPS_H
#define NTP_TEST_SMAPS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The mapping of this process that holds address p (/proc/self/smaps):
 * 1 with its range in *lo, *hi and whether it was advised MADV_HUGEPAGE
 * (VmFlags "hg") in *hg; 0 when no mapping holds p. */
static inline int mapping_of(const void *p, uintptr_t *lo, uintptr_t *hi, int *hg)
{
	char line[1024];
	uintptr_t a = (uintptr_t)p, s, e;
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0, found = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= s && a < e;
			if (in) {
				*lo = s;
				*hi = e;
				*hg = 0;
				found = 1;
			}
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			*hg = strstr(line, " hg") != NULL;
		}
	}
	fclose(f);
	return found;
}

/* whether the kernel has transparent huge pages at all: only then is
 * MADV_HUGEPAGE's advice seen in VmFlags */
static inline int have_thp(void)
{
	return access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) == 0;
}

#endif
