/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pending.h - records of one side waiting for their twin from the other side,
 * in a bounded structure: `capacity` slots, chained per hash bucket of the
 * join key (cntlid, qid, cid) in a table that grows with the records
 * pending; arrival n takes slot n mod the ring's size (64 slots, doubled up
 * to `capacity` while the records pending need more), whose record, if
 * still pending when the ring is whole, is the one that expires at that put. The copies of the records
 * are reused last-freed-first, so the few a stream keeps stay in cache.
 *
 * Expiry is by count, never by comparing clocks: a record still pending
 * `capacity` arrivals later, or the oldest when every slot is taken, is
 * evicted (it is then unmatched). A tag is reused
 * only after its command completed, so within one key both sides see the
 * commands in the same order: when a record matches the k-th pending record
 * of its key, the older pending ones of that key can no longer match and are
 * dropped as unmatched.
 */
#ifndef NTP_PENDING_H
#define NTP_PENDING_H

#include <stddef.h>
#include <stdint.h>
#include "../../../bpf/ntprof_event.h"

struct ntp_pend;

/* capacity is rounded up to a power of two. NULL on allocation failure. */
struct ntp_pend *ntp_pend_new(uint32_t capacity);
void ntp_pend_free(struct ntp_pend *p);
/* Same command on both sides: key (cntlid, qid, cid) and identity (opcode, nsid, slba, len). */
int ntp_same_command(const struct ntp_record *a, const struct ntp_record *b);
/* Removes the oldest pending record that is the same command as r and returns
 * it (valid until the next ntp_pend_put on p), or NULL; older pending records
 * of r's key are dropped and counted in *dropped. */
const struct ntp_record *ntp_pend_take(struct ntp_pend *p, const struct ntp_record *r,
				       uint64_t *dropped);
/* Appends r. When the record that arrived `capacity` puts before is still
 * pending (with every slot taken, the oldest), it is evicted: copied to
 * *evicted, returns 1. */
int ntp_pend_put(struct ntp_pend *p, const struct ntp_record *r, struct ntp_record *evicted);
/* The model's block loop puts records by reference (pending_int.h
 * ntp_pend_put_key with ref set): such a record must stay valid and unchanged
 * until the next ntp_pend_settle(p), which copies the records so put that are
 * still pending. A record taken is then valid until the next put on p and
 * while the one put is. */
void ntp_pend_settle(struct ntp_pend *p);
size_t ntp_pend_count(const struct ntp_pend *p);

#endif
