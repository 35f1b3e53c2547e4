/* SPDX-License-Identifier: GPL-2.0 */
/*
 * join.h - feeding one or more recordings into the model: which files may be
 * reported together, and streaming their records in a joinable order.
 *
 * Any number of host and target files in one call (one target serves many
 * hosts, each with its own cntlid). Refused, with a one-line reason naming
 * the files: different -s (the two sides would sample different commands),
 * different transports, two files of the same role from the same machine,
 * several files without a target (a host file where a target's is
 * expected) or without a host.
 */
#ifndef NTP_JOIN_H
#define NTP_JOIN_H

#include <stddef.h>
#include "model.h"
#include "../store/ntpfile.h"

struct ntp_join_input {
	const char *path;
	const struct ntp_file_info *info;
};

/* 0 and *cfg filled for the model (role, transport, impls, sampling, join
 * window), or -1 with the reason in err. */
int ntp_join_check(const struct ntp_join_input *in, size_t n, struct ntp_model_config *cfg,
		   char *err, size_t errlen);

/* Index of the file whose clock the report's interval is on: the first with
 * the host's side (else the first file). */
size_t ntp_join_primary(const struct ntp_join_input *in, size_t n);

/* For several files: adj[i], ns to add to file i's wall-mapped times so the
 * same commands line up with the primary file's, estimated from the first
 * records of each file (join_align.c); 0 where nothing could be estimated.
 * Files the primary cannot reach through such pairs are aligned on each
 * other from another file, on that file's wall clock: the order the files
 * are given in does not change which are aligned. Reads the files' starts
 * through readers of its own. */
void ntp_join_align(const struct ntp_join_input *in, size_t n, size_t primary, int64_t *adj);

/* Why a file was not aligned (ntp_join_align_state): no offset is ever
 * taken that the pairs of commands do not agree on. */
enum ntp_align_state {
	NTP_ALIGNED = 0,		/* aligned (the primary file: on itself, when no two files
					 * were aligned; else when aligned with another) */
	NTP_ALIGN_NO_PEER,		/* no file it could be aligned on was (its target was not) */
	NTP_ALIGN_FEW_PAIRS,		/* fewer pairs than an offset is judged on (a short or idle
					 * recording): not said, as before the judging */
	NTP_ALIGN_NO_PAIRS,		/* none or too few of its commands in the others' samples,
					 * a file of 64 records or more (of another
					 * run or target) */
	NTP_ALIGN_DISAGREE,		/* its pairs gave no one offset, its file read on to the limit */
	NTP_ALIGN_UNREADABLE,		/* its file could not be read again (removed while read) */
	NTP_ALIGN_NO_MEMORY,
};

/* ntp_join_align, and state[i] (may be NULL) why file i is not aligned: a
 * file aligned with no other, where some were (the primary too), or where
 * none were, every file but the primary (adj[i] then 0: its records mapped
 * by the wall clocks alone). Returns how many files are not aligned. */
size_t ntp_join_align_state(const struct ntp_join_input *in, size_t n, size_t primary, int64_t *adj,
			    uint8_t *state);
/* The one line that says file i was not aligned, naming it, into buf; 0 if
 * it was, or if nothing says its records pair with other commands: too few
 * pairs to judge, or none (a short or idle recording), or no peer where no
 * file was left unaligned for a reason said. */
int ntp_join_align_note(const struct ntp_join_input *in, size_t n, const uint8_t *state, size_t i,
			char *buf, size_t len);

/* Streams every record of the readers into m. One reader: in file order,
 * flat memory. Several: merged by each record's emission time mapped onto
 * the wall clock through its file's header (start_real - start_mono), plus
 * adj[i] (may be NULL), which only decides the order records are fed in,
 * never a stage time; the join itself is by key in each side's own order
 * (pending.h). Returns the largest timestamp seen on the primary file's
 * clock (0 if none). */
uint64_t ntp_join_feed(struct ntp_reader **r, size_t n, size_t primary, const int64_t *adj,
		       struct ntp_model *m);

#endif
