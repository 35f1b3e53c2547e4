/* SPDX-License-Identifier: GPL-2.0 */
/* hugemem.h - memory on a 2 MiB boundary, advised transparent huge pages. */
#ifndef NTP_HUGEMEM_H
#define NTP_HUGEMEM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Where a page fault is dear (a hypervisor that shadows the guest's page
 * tables: about 16 us for 4 KiB), one fault per 2 MiB instead of 512 is
 * most of what a buffer's first touch costs (docs/performance.md, "Many
 * files" and "The groups' memory in huge pages"). The advice is only
 * advice: where the kernel has no transparent huge pages the memory is
 * small pages, as malloc's; where it has them, a huge page's fault may
 * compact memory first (the kernel's THP "defrag" setting). A fresh
 * mapping, not the heap: a 2 MiB range of memory the heap had used may
 * hold small pages already, and a range that holds any takes no huge one.
 */
#define NTP_HUGE_PAGE ((size_t)2 << 20)

/* p rounded up to an NTP_HUGE_PAGE boundary */
static inline uint8_t *ntp_huge_up(const void *p)
{
	return (uint8_t *)(((uintptr_t)p + NTP_HUGE_PAGE - 1) & ~(uintptr_t)(NTP_HUGE_PAGE - 1));
}

/* len bytes (rounded up to whole huge pages) of zeroed address space:
 * ntp_huge_unmap them with the same len. They start on an NTP_HUGE_PAGE
 * boundary and are advised huge pages; only the pages touched become
 * memory. NULL if mmap failed. */
void *ntp_huge_map(size_t len);
void ntp_huge_unmap(void *p, size_t len);

/* span bytes of anonymous address space with protection prot (PROT_NONE
 * to map a file over later, MAP_FIXED), starting on an NTP_HUGE_PAGE
 * boundary: a huge page's worth more is reserved and cut off again around
 * that boundary. span is a multiple of the page size. NULL if mmap failed;
 * munmap(p, span) gives it back. */
void *ntp_huge_reserve(size_t span, int prot);

#endif
