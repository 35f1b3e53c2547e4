// SPDX-License-Identifier: GPL-2.0
/*
 * read_bench.c - how fast the .ntp reader delivers records: reads FILE
 * through ntp_reader_next_block() (in place, what `ntprof report` should
 * use), touching every record, then through ntp_reader_next() (one copy per
 * record). Prints records per second of the best of 5 runs each (the
 * machine is shared). bench/reader.sh compares it with cat.
 *
 * read_bench --crc [BLOCK]: GB/s of each CRC32C implementation this CPU
 * can run (ntp_crc32c_by), over 1 GiB in blocks of BLOCK bytes (default a
 * records block's 278528) from memory, and over one block again and again
 * from the cache; best of 5.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/store/ntpfile.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t sum;

/* One pass; returns seconds, *n records. */
static double pass(const char *path, int by_block, uint64_t *n)
{
	const struct ntp_record *recs;
	struct ntp_record one;
	struct ntp_reader *r;
	char err[512];
	double t0;
	size_t k;

	r = ntp_reader_open(path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "read_bench: %s\n", err);
		exit(1);
	}
	*n = 0;
	t0 = now();
	if (by_block) {
		while (ntp_reader_next_block(r, &recs, &k))
			for (size_t i = 0; i < k; i++, (*n)++)
				sum += recs[i].ts[NTP_TS_H_BLK_COMPLETE] - recs[i].ts[NTP_TS_H_BLK_SUBMIT];
	} else {
		while (ntp_reader_next(r, &one)) {
			sum += one.ts[NTP_TS_H_BLK_COMPLETE] - one.ts[NTP_TS_H_BLK_SUBMIT];
			(*n)++;
		}
	}
	t0 = now() - t0;
	if (ntp_reader_stats(r)->why[0])
		fprintf(stderr, "read_bench: %s: %s\n", path, ntp_reader_stats(r)->why);
	ntp_reader_close(r);
	return t0;
}

static int crc_speeds(size_t blk)
{
	static const char *const name[NTP_CRC_IMPLS] = {
		"table", "crc32 x1", "crc32 x3", "fold 256", "fold 512", "fold 512 + x3",
	};
	size_t big = (size_t)1 << 30;
	uint8_t *b = aligned_alloc(64, big);
	uint32_t s = 0;

	if (!b || !blk || blk > big)
		return 2;
	for (size_t i = 0; i < big; i++)
		b[i] = (uint8_t)(i * 2654435761u >> 13);
	for (int v = 0; v < NTP_CRC_IMPLS; v++) {
		double mem = 1e30, hot = 1e30;

		if (!ntp_crc32c_has(v))
			continue;
		for (int rep = 0; rep < 5; rep++) {
			double t = now();

			for (size_t o = 0; o + blk <= big; o += blk)
				s += ntp_crc32c_by(v, 0, b + o, blk);
			if ((t = now() - t) < mem)
				mem = t;
			t = now();
			for (size_t o = 0; o + blk <= big; o += blk)
				s += ntp_crc32c_by(v, 0, b, blk);
			if ((t = now() - t) < hot)
				hot = t;
		}
		printf("crc32c %-13s blocks of %zu: %5.1f GB/s from memory, %5.1f GB/s from the cache\n",
		       name[v], blk, big / blk * blk / mem / 1e9, big / blk * blk / hot / 1e9);
	}
	free(b);
	return s == 42;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--crc"))
		return crc_speeds(argc > 2 ? strtoul(argv[2], NULL, 0) : 278528);
	if (argc != 2) {
		fprintf(stderr, "usage: read_bench FILE | --crc [BLOCK]\n");
		return 2;
	}
	for (int by_block = 1; by_block >= 0; by_block--) {
		double best = 1e30;
		uint64_t n = 0;

		for (int rep = 0; rep < 5; rep++) {
			double t = pass(argv[1], by_block, &n);

			if (t < best)
				best = t;
		}
		printf("%s: %llu records in %.3f s = %.1f M records/s (%.0f MB/s)\n",
		       by_block ? "ntp_reader_next_block" : "ntp_reader_next      ",
		       (unsigned long long)n, best, n / best / 1e6, n * sizeof(struct ntp_record) / best / 1e6);
	}
	return sum == 42;	/* keeps the loops from being optimised away */
}
