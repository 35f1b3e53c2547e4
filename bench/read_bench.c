// SPDX-License-Identifier: GPL-2.0
/*
 * read_bench.c - how fast the .ntp reader delivers records: reads FILE
 * through ntp_reader_next_block() (in place, what `ntprof report` should
 * use), touching every record, then through ntp_reader_next() (one copy per
 * record), then block by block read ahead by a second thread (what a
 * report does on two CPUs). Prints records per second of the best of 5
 * runs each (the machine is shared). bench/reader.sh compares it with cat.
 * Then the CRC32C alone: ntp_crc32c against a plain loop of the crc32
 * instruction (one stream: its latency; three independent streams: its
 * throughput, the most any CRC32C built on it can do), on a 278 KB block
 * in cache and on 64 MiB from memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "core/ntpfile.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t sum;

/* One pass; returns seconds, *n records. by_block 2: read ahead. */
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
	if (by_block == 2)
		ntp_reader_read_ahead(r);
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

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t loop1(const uint8_t *p, size_t n)
{
	uint64_t c = ~0u, w;

	for (size_t i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		c = _mm_crc32_u64(c, w);
	}
	return (uint32_t)c;
}

/* three streams, not combined: the instruction's throughput */
__attribute__((target("sse4.2")))
static uint32_t loop3(const uint8_t *p, size_t n)
{
	uint64_t a = ~0u, b = 0, c = 0, w;
	size_t k = n / 24 * 8;

	for (size_t i = 0; i < k; i += 8) {
		memcpy(&w, p + i, 8);
		a = _mm_crc32_u64(a, w);
		memcpy(&w, p + k + i, 8);
		b = _mm_crc32_u64(b, w);
		memcpy(&w, p + 2 * k + i, 8);
		c = _mm_crc32_u64(c, w);
	}
	return (uint32_t)(a ^ b ^ c);
}
#endif

static uint32_t lib(const uint8_t *p, size_t n) { return ntp_crc32c(0, p, n); }

static void crc_speed(const char *name, uint32_t (*fn)(const uint8_t *, size_t))
{
	static const size_t sizes[] = { 278552, 64u << 20 };

	for (int s = 0; s < 2; s++) {
		size_t len = sizes[s], reps = s ? 4 : 1000;
		uint8_t *buf = malloc(len);
		double best = 1e30;

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)(i * 131 + (i >> 9));
		for (int rep = 0; rep < 5; rep++) {
			double t = now();

			for (size_t k = 0; k < reps; k++)
				sum += fn(buf, len);
			t = (now() - t) / reps;
			if (t < best)
				best = t;
		}
		printf("crc %-22s %s: %.2f GB/s\n", name, s ? "64 MiB     " : "278 KB block", len / best / 1e9);
		free(buf);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: read_bench FILE\n");
		return 2;
	}
	for (int by_block = 2; by_block >= 0; by_block--) {
		double best = 1e30;
		uint64_t n = 0;

		for (int rep = 0; rep < 5; rep++) {
			double t = pass(argv[1], by_block, &n);

			if (t < best)
				best = t;
		}
		printf("%s: %llu records in %.3f s = %.1f M records/s (%.0f MB/s)\n",
		       by_block == 2 ? "read ahead           " :
		       by_block ? "ntp_reader_next_block" : "ntp_reader_next      ",
		       (unsigned long long)n, best, n / best / 1e6, n * sizeof(struct ntp_record) / best / 1e6);
	}
	crc_speed("ntp_crc32c", lib);
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2")) {
		crc_speed("crc32 loop, 1 stream", loop1);
		crc_speed("crc32 loop, 3 streams", loop3);
	}
#endif
	return sum == 42;	/* keeps the loops from being optimised away */
}
