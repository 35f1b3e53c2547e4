// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_report.c - libFuzzer target past the reader: one or two recordings
 * through the same loading as `ntprof report` and `compare` (src/cli/load.c:
 * the checks of the files against each other, the alignment of their
 * clocks, the join, the model, the totals), then the text and JSON report
 * and a comparison of the run with itself. The reader's own fuzzer
 * (fuzz_reader.c) stops at the records; the model and the join see here
 * what a damaged or hostile file can hold: any timestamps, any keys, any
 * totals.
 *
 * Input: a mode byte, then the files.
 *   bit 0  repair the CRCs of each file (repair.h)
 *   bit 1  two files: a 4-byte little-endian length of the first follows,
 *          the rest is the second (a host and a target file to join)
 *   bit 2  the report with --detail
 *   bit 3  three files (bit 1 aside): the lengths of the first two, then
 *          the three (two hosts and their target: the merge's windows,
 *          merge.h ntp_merge_most_windowed)
 * Each file is a memfd opened by its /proc/self/fd path, as a file on disk
 * is (mapped; the alignment reopens the files by path).
 * Nothing may crash, leak or read out of bounds (ASan/UBSan).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/load.h"
#include "repair.h"

static FILE *devnull;

static int put_file(int *fd, const uint8_t *p, size_t len, int fix, char *path, size_t plen)
{
	uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		return -1;
	memcpy(buf, p, len);
	if (fix)
		ntp_fuzz_repair(buf, len);
	if (*fd < 0)
		*fd = memfd_create("fuzz.ntp", 0);
	if (*fd < 0 || ftruncate(*fd, 0) || pwrite(*fd, buf, len, 0) != (ssize_t)len)
		abort();
	free(buf);
	snprintf(path, plen, "/proc/self/fd/%d", *fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fds[3] = { -1, -1, -1 };
	char pathbuf[3][64], *paths[3] = { pathbuf[0], pathbuf[1], pathbuf[2] };
	struct ntp_report_meta meta;
	struct ntp_loaded *keep = NULL;
	struct ntp_snapshot *snap;
	size_t n = 1, len[3];
	uint8_t mode;

	if (size < 1)
		return 0;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	/* errors as JSON on stdout, which -close_fd_mask=1 silences */
	ntp_json_errors = true;
	mode = data[0];
	data++;
	size--;
	if (mode & 8)
		n = 3;
	else if (mode & 2)
		n = 2;
	if (size < 4 * (n - 1))
		return 0;
	/* the lengths of all files but the last, each at most what is left */
	for (size_t i = 0; i + 1 < n; i++) {
		uint32_t l;

		memcpy(&l, data + 4 * i, 4);
		len[i] = l;
	}
	data += 4 * (n - 1);
	size -= 4 * (n - 1);
	for (size_t i = 0, left = size; i < n; i++) {
		len[i] = i + 1 < n && len[i] <= left ? len[i] : left;
		left -= len[i];
	}
	for (size_t i = 0; i < n; i++) {
		put_file(&fds[i], data, len[i], mode & 1, pathbuf[i], sizeof(pathbuf[i]));
		data += len[i];
	}

	snap = malloc(sizeof(*snap));
	if (!snap)
		return 0;
	if (ntp_load(paths, n, 0, snap, &meta, &keep) == 0) {
		json_object *o;

		meta.detail = !!(mode & 4);
		ntp_report_print(devnull, snap, &meta);
		o = ntp_report_json(snap, &meta);
		fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY), devnull);
		json_object_put(o);
		ntp_compare_print(devnull, snap, snap, "A", "B");
		o = ntp_compare_json(snap, snap, "A", "B");
		fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), devnull);
		json_object_put(o);
		fflush(devnull);
	}
	ntp_load_free(keep);
	free(snap);
	return 0;
}
