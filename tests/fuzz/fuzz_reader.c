// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_reader.c - libFuzzer target for the .ntp reader.
 *
 * The first input byte picks a mode, the rest is the file:
 *   bit 0  repair the CRCs (header and every block whose bytes are all
 *          there) before reading, so mutations reach the code behind the
 *          CRC checks instead of dying at them
 *   bit 1  read through a file descriptor (the buffered read path with its
 *          buffer growth and moves) instead of from memory
 *   bit 2  with bit 1: blocks read by a second thread (read-ahead), into
 *          buffers retired instead of moved
 * Invariants checked: every record returned comes from a verified block,
 * counts agree, and nothing crashes, leaks or reads out of bounds
 * (ASan/UBSan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/store/ntpfile.h"
#include "repair.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int memfd = -1;
	char err[512], path[64];
	struct ntp_reader *r;
	const struct ntp_record *recs;
	const struct ntp_read_stats *st;
	uint8_t *buf, mode;
	uint64_t got = 0;
	size_t n, nt;

	if (size < 1)
		return 0;
	mode = data[0];
	size--;
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size);
	if (mode & 1)
		ntp_fuzz_repair(buf, size);
	if (mode & 2) {
		if (memfd < 0)
			memfd = memfd_create("fuzz.ntp", 0);
		if (memfd < 0 || ftruncate(memfd, 0) || pwrite(memfd, buf, size, 0) != (ssize_t)size)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
		r = ntp_reader_open(path, err, sizeof(err));
		if (r && (mode & 4) && ntp_reader_read_ahead(r) < 0)
			abort();
	} else {
		r = ntp_reader_open_mem(buf, size, "fuzz.ntp", err, sizeof(err));
	}
	if (!r) {
		if (!err[0] || strchr(err, '\n'))
			abort();	/* a refusal is one line with a reason */
		free(buf);
		return 0;
	}
	if (ntp_reader_info(r)->record_size < sizeof(struct ntp_record))
		abort();
	while (ntp_reader_next_block(r, &recs, &n)) {
		if (!n)
			abort();
		for (size_t i = 0; i < n; i++)	/* touch every byte handed out */
			for (size_t k = 0; k < sizeof(*recs) / 8; k++)
				sink += ((const uint64_t *)&recs[i])[k];
		got += n;
	}
	st = ntp_reader_stats(r);
	if (st->records != got)
		abort();
	if ((st->truncated || st->corrupt) != (st->why[0] != '\0'))
		abort();
	ntp_reader_totals(r, &nt, NULL);
	if (nt && !ntp_reader_totals(r, NULL, NULL))
		abort();
	ntp_reader_close(r);
	free(buf);
	return 0;
}
