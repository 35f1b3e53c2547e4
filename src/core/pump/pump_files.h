/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pump_files.h - the pump's file source: one recording, or several joined
 * (hosts with their target, as join.h checks them), opened, checked and
 * aligned once, then streamed into a pump up to the time it is asked for.
 * `ntprof report`/`compare` pull it to the end in one go; ntprof-top's replay
 * pulls it interval by interval at its pace.
 */
#ifndef NTP_PUMP_FILES_H
#define NTP_PUMP_FILES_H

#include <stddef.h>
#include <stdint.h>
#include "../model/model.h"
#include "../store/ntpfile.h"
#include "pump.h"

struct ntp_files;

/* Opens paths[0..n), checks they go together (ntp_join_check) and aligns
 * several files' clocks (ntp_join_align). NULL with a one-line reason. */
struct ntp_files *ntp_files_open(char *const *paths, size_t n, char *err, size_t errlen);
/* The same, each file's blocks read by a second thread when read_ahead and
 * ntp_read_ahead_wanted(n) (ntpfile.h): for reading at full speed (report,
 * compare), not a replay at the recording's pace. */
struct ntp_files *ntp_files_open_ahead(char *const *paths, size_t n, int read_ahead,
				       char *err, size_t errlen);
void ntp_files_close(struct ntp_files *f);
/* The i-th file no clock offset to the others was found for (join.h
 * ntp_join_align_state): one line naming it; NULL past the last. */
#define NTP_FILES_NOTE_LEN (4096 + 512)	/* a path (PATH_MAX) and why: never cut */
const char *ntp_files_unaligned(const struct ntp_files *f, size_t i);

/* The model's configuration for these files (role, transport, sampling...). */
const struct ntp_model_config *ntp_files_model_config(const struct ntp_files *f);
size_t ntp_files_count(const struct ntp_files *f);
/* The file whose clock the intervals are on (ntp_join_primary). */
size_t ntp_files_primary(const struct ntp_files *f);
struct ntp_reader *ntp_files_reader(const struct ntp_files *f, size_t i);
/* What is added to file i's times to put them on the primary file's clock
 * (merge.h ntp_merge_map): 0 for one file. */
int64_t ntp_files_offset(const struct ntp_files *f, size_t i);
/* Where the recording starts on the primary file's clock: its header's start,
 * or its first record's time when the header has none. */
uint64_t ntp_files_start(struct ntp_files *f);
/* Where it ends: the primary file's trailer (or last flush), at least the
 * last record fed and the start. Final once the source has ended. */
uint64_t ntp_files_end(const struct ntp_files *f);

/* The source (struct ntp_pump_source's pull, ctx = the ntp_files): records
 * whose time (their latest timestamp, mapped onto the primary file's clock)
 * is at most until_ns, merged across files by that time; totals blocks once
 * the data reached them, every file's latest rows together. */
int ntp_files_pull(void *ctx, struct ntp_pump *p, uint64_t until_ns, uint64_t *reached);
/* A pull that finds no record up to until_ns and the next one more than this
 * later reports the data reached just before that record: the gap is closed
 * as one interval (a replay of a time years ahead would otherwise close
 * empty intervals without end). */
#define NTP_FILES_GAP_NS (60ull * 1000000000ull)

#endif
