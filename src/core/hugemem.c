// SPDX-License-Identifier: GPL-2.0
/* hugemem.c - memory on a 2 MiB boundary, advised transparent huge pages (hugemem.h). */
#include <sys/mman.h>
#include "hugemem.h"

static void advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	madvise(p, len, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

/* len in whole huge pages: the memory ends on a boundary too, so its
 * last huge page is not cut short (the kernel backs with a huge page only
 * a 2 MiB range wholly inside the advised one) */
static size_t huge_len(size_t len)
{
	return (len + NTP_HUGE_PAGE - 1) & ~(NTP_HUGE_PAGE - 1);
}

void *ntp_huge_reserve(size_t span, int prot)
{
	uint8_t *p = mmap(NULL, span + NTP_HUGE_PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *at;

	if (p == MAP_FAILED)
		return NULL;
	at = ntp_huge_up(p);
	if (at > p)
		munmap(p, (size_t)(at - p));
	munmap(at + span, (size_t)(p + NTP_HUGE_PAGE - at));	/* at < p + NTP_HUGE_PAGE */
	return at;
}

void *ntp_huge_map(size_t len)
{
	size_t span = huge_len(len);
	void *at = ntp_huge_reserve(span, PROT_READ | PROT_WRITE);

	if (at)
		advise_huge(at, span);
	return at;
}

void ntp_huge_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, huge_len(len));
}
