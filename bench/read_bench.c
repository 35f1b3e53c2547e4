// SPDX-License-Identifier: GPL-2.0
/*
 * read_bench.c - how fast the .ntp reader delivers records: reads FILE
 * through ntp_reader_next_block() (in place, what `ntprof report` should
 * use), touching every record, then through ntp_reader_next() (one copy per
 * record). Prints records per second of the best of 5 runs each (the
 * machine is shared). bench/reader.sh compares it with cat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "core/ntpfile.h"

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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: read_bench FILE\n");
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
