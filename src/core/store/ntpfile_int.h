/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntpfile_int.h - between the reader (ntpfile.c) and its read-ahead thread
 * (ntpfile_ahead.c), and the merge (merge.c), which asks the thread for the
 * records' keys; not for other callers.
 */
#ifndef NTP_FILE_INT_H
#define NTP_FILE_INT_H

#include "ntpfile.h"

/* The reader's own block loop, stats and totals (in the thread's hands once
 * read-ahead runs). gen: bumped each time the totals change (may be NULL). */
int ntp_reader_block_direct(struct ntp_reader *r, const struct ntp_record **recs, size_t *n);
const struct ntp_read_stats *ntp_reader_stats_direct(const struct ntp_reader *r);
const struct ntp_total *ntp_reader_totals_direct(const struct ntp_reader *r, size_t *n,
						 uint64_t *as_of_mono_ns, uint64_t *gen);

/* The most bytes of the read buffer a reader read with read() in its
 * caller's thread holds while the file's blocks are no longer than the
 * writer's (ntpfile.c READ_BUF): it stays in a core's cache. */
#define NTP_READ_BUF_MAX (320u << 10)

/* Whether recs stays where it is until the caller lets go (in the current
 * window, or in the read buffer, which read-ahead retires rather than
 * reuses), else a copy is needed (a buffer the next block reuses). */
int ntp_reader_block_kept(const struct ntp_reader *r, const struct ntp_record *recs);
/* Unmaps the windows left behind whose blocks the caller let go. */
void ntp_reader_reap(struct ntp_reader *r, uint64_t released);

/*
 * With read-ahead the CRC32C of a records block handed out in place is
 * split between the threads: the reader computes it over the first part and
 * counts the block as good for now, the caller finishes it over the rest
 * and decides (ntpfile_ahead.c). What is
 * left to check, after ntp_reader_block_direct() returned such a block:
 */
struct ntp_crc_rest {
	uint32_t crc;		/* ntp_crc32c of the payload's first `from` bytes */
	uint32_t want;		/* the block header's payload CRC */
	uint32_t from, len;	/* bytes checked, payload bytes */
	uint32_t count;		/* records in the block */
	uint64_t at;		/* the block's file offset */
};
/* The reader checks sixteenths/16 of each records block from now on (16:
 * whole, as without read-ahead). */
void ntp_reader_split_crc(struct ntp_reader *r, unsigned sixteenths);
/* The rest of the block last returned by ntp_reader_block_direct(), or
 * NULL: checked whole (or not a block handed out in place). */
const struct ntp_crc_rest *ntp_reader_crc_rest(const struct ntp_reader *r);
/* How many times the reader wrote its stats' why over what it held (a
 * read error): every other reason is kept only when none was given before,
 * so the caller can tell whose note stands after a block it found damaged. */
uint64_t ntp_reader_why_over(const struct ntp_reader *r);
/* Whether a window's first done bytes of len, touched, were dearer than
 * read() of them: their faults took ns, or (done == len) they were more
 * than the bound per MiB (ntpfile.c, "Mapped or read()"). */
int ntp_map_touch_dear(uint64_t faults, uint64_t ns, uint64_t done, uint64_t len);
/* Whether the block's payload, at recs, passes its CRC. */
int ntp_crc_rest_ok(const struct ntp_crc_rest *rest, const struct ntp_record *recs);
/* st as the reader would have left it had it found the block damaged:
 * its records dropped, the file marked damaged, the block named if no
 * reason was given before. */
void ntp_read_stats_damaged(struct ntp_read_stats *st, const struct ntp_crc_rest *rest);

struct ntp_ahead;
/* The reader's share of a block's CRC with read-ahead (ntp_reader_split_crc). */
unsigned ntp_ahead_crc_split(void);
/* Blocks handed to the caller so far (the thread's side). */
uint64_t ntp_ahead_published(const struct ntp_ahead *a);
/* Waits until the caller let go of seq blocks; returns how many it has. */
uint64_t ntp_ahead_wait_released(struct ntp_ahead *a, uint64_t seq);
/* The state for r (NULL: no memory); ntp_ahead_start() then starts the
 * thread (0, or -1: none), once r->ahead points to it. */
struct ntp_ahead *ntp_ahead_new(struct ntp_reader *r);
int ntp_ahead_start(struct ntp_ahead *a);
/* ntp_reader_next_block(), stats and totals as of the block last handed out. */
int ntp_ahead_block(struct ntp_ahead *a, const struct ntp_record **recs, size_t *n);
const struct ntp_read_stats *ntp_ahead_stats(const struct ntp_ahead *a);
const struct ntp_total *ntp_ahead_totals(const struct ntp_ahead *a, size_t *n, uint64_t *as_of_mono_ns);
/* The reader's read-ahead, or NULL (none started). */
struct ntp_ahead *ntp_reader_ahead(const struct ntp_reader *r);
/* From now on the thread also writes each record's merge key beside the
 * block it read, while the block is in its cache: keys(recs, n, off, out),
 * ntp_merge_keys (merge.h; passed in, so that the reader alone links
 * without the merge). */
typedef void (*ntp_keys_fn)(const struct ntp_record *r, size_t n, int64_t off, uint64_t *out);
void ntp_ahead_want_keys(struct ntp_ahead *a, ntp_keys_fn keys, int64_t off);
/* Those keys for the block last handed out (NULL: none for it). */
const uint64_t *ntp_ahead_keys(const struct ntp_ahead *a);
/* Stops and joins the thread if started, frees a (NULL: nothing); the
 * windows it left are the reader's to unmap (ntp_reader_reap). */
void ntp_ahead_free(struct ntp_ahead *a);

#endif
