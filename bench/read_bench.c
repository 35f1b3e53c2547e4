// SPDX-License-Identifier: GPL-2.0
/*
 * read_bench.c - how fast the .ntp reader delivers records: reads FILE
 * through ntp_reader_next_block() (what `ntprof report` uses), touching every
 * record, then through ntp_reader_next() (one copy per record), and prints
 * records per second for each. bench/reader.sh compares it with cat.
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

int main(int argc, char **argv)
{
	const struct ntp_record *recs;
	struct ntp_reader *r;
	struct ntp_record one;
	uint64_t sum = 0, n = 0;
	char err[512];
	size_t k;
	double t0, t1;

	if (argc != 2) {
		fprintf(stderr, "usage: read_bench FILE\n");
		return 2;
	}
	for (int pass = 0; pass < 2; pass++) {
		r = ntp_reader_open(argv[1], err, sizeof(err));
		if (!r) {
			fprintf(stderr, "read_bench: %s\n", err);
			return 1;
		}
		n = 0;
		t0 = now();
		if (pass == 0) {
			while (ntp_reader_next_block(r, &recs, &k))
				for (size_t i = 0; i < k; i++, n++)
					sum += recs[i].ts[NTP_TS_H_BLK_COMPLETE] - recs[i].ts[NTP_TS_H_BLK_SUBMIT];
		} else {
			while (ntp_reader_next(r, &one)) {
				sum += one.ts[NTP_TS_H_BLK_COMPLETE] - one.ts[NTP_TS_H_BLK_SUBMIT];
				n++;
			}
		}
		t1 = now();
		printf("%s: %llu records in %.3f s = %.1f M records/s (%.0f MB/s)%s\n",
		       pass ? "ntp_reader_next      " : "ntp_reader_next_block",
		       (unsigned long long)n, t1 - t0, n / (t1 - t0) / 1e6,
		       n * sizeof(struct ntp_record) / (t1 - t0) / 1e6,
		       ntp_reader_stats(r)->why[0] ? " (file damaged)" : "");
		ntp_reader_close(r);
	}
	return sum == 42;	/* keeps the loop from being optimised away */
}
