// SPDX-License-Identifier: GPL-2.0
/*
 * folios.c - how the page cache holds a set of files: the share of their
 * pages in folios of each size. bench/report_bench.sh prints it beside
 * the joins, whose files it reads with read(): the kernel's copy out of
 * the page cache slows with the folios' number (a lookup and a copy call
 * per folio, and each folio's pages apart from the next's).
 *
 * folios FILE...: one line for all of them, "4K 12.3% 16K ..." up to the
 * largest size met. Needs root (/proc/kpageflags, and the page frame
 * numbers in /proc/self/pagemap). Each file is mapped and its pages
 * touched, one load per page: a page not in the cache is read in, so run
 * it on files the cache already holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096
#define MAX_ORDER_SEEN 20
#define KPF_COMPOUND_HEAD (1ull << 15)	/* Documentation/admin-guide/mm/pagemap.rst */
#define KPF_COMPOUND_TAIL (1ull << 16)
#define PM_PFN_MASK ((1ull << 55) - 1)

static uint64_t pages_in[MAX_ORDER_SEEN + 1];	/* pages, by their folio's order */

static int order_of(uint64_t pages)
{
	int o = 0;

	while ((1ull << o) < pages && o < MAX_ORDER_SEEN)
		o++;
	return o;
}

/* A folio of n pages ended (the file's end may cut it: counted as whole). */
static void folio_end(uint64_t n)
{
	if (n)
		pages_in[order_of(n)] += n;
}

static int census(const char *path, int pagemap, int kpageflags)
{
	volatile const char *p;
	uint64_t run = 0;
	struct stat st;
	size_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "folios: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = (size_t)st.st_size / PAGE;
	if (!n) {
		close(fd);
		return 0;
	}
	p = mmap(NULL, n * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "folios: %s: mmap: %s\n", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t e, flags;

		(void)p[i * PAGE];	/* mapped, so that pagemap names its frame */
		if (pread(pagemap, &e, 8, (off_t)(((uintptr_t)p / PAGE + i) * 8)) != 8 ||
		    pread(kpageflags, &flags, 8, (off_t)((e & PM_PFN_MASK) * 8)) != 8 || !(e & PM_PFN_MASK)) {
			fprintf(stderr, "folios: %s: no page frame numbers (needs root)\n", path);
			munmap((void *)p, n * PAGE);
			return -1;
		}
		if (flags & KPF_COMPOUND_TAIL && run) {
			run++;
			continue;
		}
		folio_end(run);
		run = flags & KPF_COMPOUND_HEAD ? 1 : 0;
		if (!run)
			pages_in[0]++;
	}
	folio_end(run);
	munmap((void *)p, n * PAGE);
	return 0;
}

int main(int argc, char **argv)
{
	int pagemap = open("/proc/self/pagemap", O_RDONLY), kpageflags = open("/proc/kpageflags", O_RDONLY);
	uint64_t all = 0;
	int top = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: folios FILE...\n");
		return 2;
	}
	if (pagemap < 0 || kpageflags < 0) {
		fprintf(stderr, "folios: /proc/self/pagemap, /proc/kpageflags: %s (needs root)\n", strerror(errno));
		return 1;
	}
	for (int a = 1; a < argc; a++)
		if (census(argv[a], pagemap, kpageflags))
			return 1;
	for (int o = 0; o <= MAX_ORDER_SEEN; o++) {
		all += pages_in[o];
		top = pages_in[o] ? o : top;
	}
	for (int o = 0; o <= top; o++) {
		uint64_t kib = (PAGE / 1024ull) << o;

		printf("%s%llu%s %.1f%%", o ? " " : "", (unsigned long long)(kib >= 1024 ? kib / 1024 : kib),
		       kib >= 1024 ? "M" : "K", all ? 100.0 * (double)pages_in[o] / (double)all : 0.0);
	}
	printf("\n");
	return 0;
}
