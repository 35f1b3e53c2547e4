/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dumprow.h - a record as one CSV row of `ntprof dump` (RFC 4180: fields
 * quoted when they hold a comma, quote or line break; CRLF line ends).
 * Columns: side, cntlid, qid, cid, opcode, nsid, slba, nlb, len, dev,
 * transport, impl, cpu, seq, flags, ts_valid (flags and ts_valid as 0x%x),
 * then one per slot below NTP_DUMP_SLOTS: the timestamps (below
 * NTP_TS_COUNT), then the target's backpressure durations T_BP_RECV and
 * T_BP_RSP (ns, docs/backpressure.md), then the host's H_BIO_SUBMIT (the
 * bio's submission, docs/stage-model.md; last, so that the columns before it
 * kept their places when it came); each empty when its ts_valid bit is
 * clear.
 */
#ifndef NTP_CORE_DUMPROW_H
#define NTP_CORE_DUMPROW_H

#include <stddef.h>
#include <stdint.h>
#include "ntprof_event.h"

/* The slots a row has a column for: the timestamps, the two durations and
 * the bio's submission: every slot of the record. */
#define NTP_DUMP_SLOTS (NTP_TS_H_BIO_SUBMIT + 1)

/* Room a row needs in the caller's buffer: its bytes (under 800) and the
 * scratch the formatter stores past them. */
#define NTP_DUMP_ROW_MAX 1024

/* What the rows of a file repeat, formatted once (dumprow.c). */
struct ntp_dump_rows;

struct ntp_dump_rows *ntp_dump_rows_new(void);	/* NULL when out of memory */
void ntp_dump_rows_free(struct ntp_dump_rows *d);

/* Digits four at a time (on: the default where the CPU has AVX2 and
 * NTPROF_NO_AVX2 is not set) or two at a time (off); the rows are the same. */
void ntp_dump_rows_avx2(struct ntp_dump_rows *d, int on);

/* Writes the row of r, CRLF included, at buf (NTP_DUMP_ROW_MAX bytes of
 * room); returns its length. */
size_t ntp_dump_row(struct ntp_dump_rows *d, char *buf, const struct ntp_record *r);

/* The rows of recs[0..n) at buf, as many as fit in room (each needs
 * NTP_DUMP_ROW_MAX bytes of it): returns their length, *done their number. */
size_t ntp_dump_rows_write(struct ntp_dump_rows *d, char *buf, size_t room, const struct ntp_record *recs,
			   size_t n, size_t *done);

/* "linux", "spdk" or "unknown" (the impl column). */
const char *ntp_impl_name(uint8_t impl);

#endif
