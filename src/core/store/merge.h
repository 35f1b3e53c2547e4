/* SPDX-License-Identifier: GPL-2.0 */
/*
 * merge.h - records of several recordings in one time order (or in windows
 * of time: ntp_merge_most_windowed): each reader's
 * next record keyed by its latest timestamp plus the reader's offset onto a
 * common clock (a time before that clock's zero counts as 0), the smallest
 * first (ties: the lower reader number), through
 * a loser tree, so choosing the next record costs log2(n) comparisons
 * instead of one per file (a join of 64 files checked 64 cursors for every
 * record), one per level of the tree. Memory: the tree and one block per
 * reader (held by the readers).
 */
#ifndef NTP_MERGE_H
#define NTP_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include "ntpfile.h"

struct ntp_merge;

/* r[0..n) are read through ntp_reader_next_block() from now on; offset[i] is
 * added to reader i's record times (the files' clocks onto one). NULL when
 * out of memory. */
struct ntp_merge *ntp_merge_new(struct ntp_reader **r, size_t n, const int64_t *offset);
void ntp_merge_free(struct ntp_merge *m);
/* The next record in time order, left in place: 1 with *rec (valid until
 * the next drain) and *from (its reader), or 0 when every reader has ended.
 * *t (may be NULL): its key. */
int ntp_merge_peek(struct ntp_merge *m, const struct ntp_record **rec, size_t *from, uint64_t *t);
/* Reader i is expected to hold most of the records (a target's file beside
 * its hosts'): the drain takes it out of the tree (same order, fewer
 * comparisons); i >= n: none (the default). */
void ntp_merge_most(struct ntp_merge *m, size_t i);
/*
 * The same, and the drain gives up the order within windows of time for
 * speed (a join of many hosts with their target: a replay of the tree per
 * host record cost more than the rest of the merge). The records are
 * handed over window by window, a window the keys from the smallest left
 * to that plus its width: reader i's first, in its order, then each other
 * reader's, reader by reader, each in its order. So, of readers whose
 * records come in key order: reader i's record comes before every other
 * reader's of a larger key (a target's before its hosts' later ones: a
 * host's record of a command ends after the target's), and no record comes
 * after one whose key is more than NTP_MERGE_WINDOW_MAX larger. The width
 * follows reader i's rate (about WINDOW_RECORDS of its records a window,
 * merge.c), from 1 ns up to NTP_MERGE_WINDOW_MAX. Once reader i ended,
 * the rest is merged in order. The drain's other promises hold: every
 * record up to until and none past it, the peek after it the smallest key
 * left.
 */
void ntp_merge_most_windowed(struct ntp_merge *m, size_t i);
#define NTP_MERGE_WINDOW_MAX (1ull << 30)	/* ns: about a second */
/* Hands the next records in time order, while the next one's key is at
 * most until, to fn(ctx, rec, n): rec[0..n) in that order, in batches of
 * one or more (every record taken is handed over before the drain
 * returns), each record valid during its call only (its reader may move
 * on right after). Returns how many; *primary_max is raised to the
 * largest key of those of reader primary. Two files are merged without
 * the tree. */
typedef void (*ntp_merge_fn)(void *ctx, const struct ntp_record *const *rec, size_t n);
size_t ntp_merge_drain(struct ntp_merge *m, uint64_t until, ntp_merge_fn fn, void *ctx, size_t primary,
		       uint64_t *primary_max);
/* Reader i's next record (NULL once it ended), whatever its place in the
 * order. */
const struct ntp_record *ntp_merge_current(const struct ntp_merge *m, size_t i);
/* The time a record is merged by: its latest valid timestamp (0: none). */
uint64_t ntp_record_last_ts(const struct ntp_record *r);
/* out[j]: the merge key of r[j] with offset off (ntp_merge_map of its
 * ntp_record_last_ts), for j < n: AVX2 where the CPU has it
 * (NTPROF_NO_AVX2=1: not). */
void ntp_merge_keys(const struct ntp_record *r, size_t n, int64_t off, uint64_t *out);
/* A file's time t on the merge's clock (its offset off added). A file's
 * times may be any 64-bit values (a damaged or hostile file, a clock years
 * off): the sum wraps, never overflows (signed overflow is undefined), and a
 * time before 0 is 0; a wrapped time only misorders the merge. */
static inline uint64_t ntp_merge_map(uint64_t t, int64_t off)
{
	int64_t x = (int64_t)(t + (uint64_t)off);

	return x < 0 ? 0 : (uint64_t)x;
}

#endif
