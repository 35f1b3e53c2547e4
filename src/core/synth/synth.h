/* SPDX-License-Identifier: GPL-2.0 */
/*
 * synth.h - a synthetic NVMe-oF path: the model behind `ntprof generate`.
 *
 * Commands arrive as a Poisson stream, take a free tag from a pool of QD per
 * (controller, queue) (cid = genctr << 12 | tag, as Linux builds it), and
 * walk the path: each segment between two consecutive timestamps of enum
 * ntp_ts_id takes a delay drawn from that segment's distribution. The
 * sampling hash of bpf/ntprof_hash.h picks which commands leave records;
 * every command counts in the totals. Records come out per side in the order
 * they leave that side (host: block completion; target: response sent).
 *
 * Pure and deterministic: its own PRNG, no clock reads, no I/O.
 */
#ifndef NTP_SYNTH_H
#define NTP_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include "../../../bpf/ntprof_event.h"
#include "../store/ntpfile.h"

enum ntp_dist {
	NTP_DIST_FIXED = 0,	/* always the mean */
	NTP_DIST_UNIFORM,	/* uniform on mean * [1 - spread, 1 + spread] */
	NTP_DIST_EXP,		/* exponential with that mean (spread unused) */
	NTP_DIST_LOGNORMAL,	/* lognormal with that mean, sigma = spread */
};

struct ntp_delay {
	uint8_t dist;		/* enum ntp_dist */
	double mean_ns;
	double spread;
};

/* The path's segments, each the time between two timestamps (docs in synth.c). */
enum ntp_seg {
	NTP_SEG_HOST_BLOCK_SUB = 0,	/* H_BLK_SUBMIT -> H_DRV_SUBMIT */
	NTP_SEG_HOST_DRIVER_SUB,	/* H_DRV_SUBMIT -> H_CMD_SENT */
	NTP_SEG_WIRE,			/* each one-way crossing (plus size / link rate for data) */
	NTP_SEG_TARGET_RECV,		/* T_CMD_ARRIVE -> T_CMD_RECV, T_DATA_ARRIVE -> T_DATA_RECV */
	NTP_SEG_TARGET_DRIVER_SUB,	/* T_CMD_RECV -> T_STORAGE_SUBMIT (or -> T_R2T_SENT) */
	NTP_SEG_HOST_RECV,		/* H_RSP_ARRIVE -> H_RSP_DRV, H_R2T_ARRIVE -> H_R2T_DRV */
	NTP_SEG_HOST_DRIVER_DATA,	/* H_R2T_DRV -> H_DATA_SENT */
	NTP_SEG_TARGET_DRIVER_DATA,	/* T_DATA_RECV -> T_STORAGE_SUBMIT */
	NTP_SEG_STORAGE,		/* T_STORAGE_SUBMIT -> T_STORAGE_DONE */
	NTP_SEG_TARGET_DRIVER_COMP,	/* T_STORAGE_DONE -> T_RSP_QUEUED */
	NTP_SEG_TARGET_SEND,		/* T_RSP_QUEUED -> T_RSP_SENT */
	NTP_SEG_HOST_DRIVER_COMP,	/* H_RSP_DRV -> H_DRV_COMPLETE */
	NTP_SEG_HOST_BLOCK_COMP,	/* H_DRV_COMPLETE -> H_BLK_COMPLETE */
	NTP_SEG_COUNT,
};

#define NTP_SYNTH_MAX_SIZES 64

struct ntp_synth_config {
	uint64_t seed;
	uint64_t count;			/* commands to issue (sampled or not); 0: until duration */
	uint64_t duration_ns;		/* simulated time; 0: until count */
	double rate;			/* commands per second, all controllers together */
	uint32_t qd;			/* tags per (controller, queue), 1..4096 */
	uint32_t queues;		/* I/O queues per controller: qid 1..queues */
	uint32_t hosts;			/* controllers: cntlid 1..hosts */
	uint32_t sampling;		/* one command in N recorded */
	uint32_t sizes[NTP_SYNTH_MAX_SIZES];
	uint32_t nsizes;
	uint32_t read_pct;		/* 0..100 */
	uint32_t inline_max;		/* writes up to this many bytes go in the capsule */
	uint32_t lba_size;
	uint64_t ns_bytes;		/* namespace size: LBAs are drawn below it */
	uint32_t nsid;
	uint8_t transport;		/* enum ntp_transport */
	double link_gbps;		/* serialisation of data on the wire; 0: none */
	struct ntp_delay delay[NTP_SEG_COUNT];
	uint64_t host_clock0;		/* host 1's CLOCK_MONOTONIC at simulated time 0 */
	int64_t target_clock_offset;	/* target's clock minus host 1's */
	int one_host_clock;		/* every controller's host on host 1's clock (one
					 * machine, as a one-file -r both is); 0: controller k's
					 * machine runs k - 1 hours (and a bit) ahead */
	double miss_rsp_sent;		/* fraction of target records lacking T_RSP_SENT */
	double drop_target;		/* fraction of sampled commands without a target record */
	char host_dev[NTP_DEV_LEN];
	char target_dev[NTP_DEV_LEN];
	uint32_t want_sides;		/* bit (1 << enum ntp_side): which sides' records to produce;
					 * the others are drawn all the same (same seed, same commands) */
	/* Extension (exactq): --exact-queues: the totals carry every command's
	 * stage sums (ntp_total.occ), as the kernel keeps them */
	int exact_queues;
	/* host records carry the bio's submission (H_BIO_SUBMIT), as a host
	 * whose kernel stamps the bio does: the command's arrival, before its
	 * wait for a free tag */
	int bio_stamp;
};

/* Defaults: NVMe/TCP 4 KiB reads, QD 32, 50k commands/s, 1 s, -s 100. */
void ntp_synth_defaults(struct ntp_synth_config *c);
/* NULL when the configuration is invalid; errbuf names the field. */
struct ntp_synth *ntp_synth_new(const struct ntp_synth_config *c, char *errbuf, size_t errlen);
void ntp_synth_free(struct ntp_synth *s);

/* Output of ntp_synth_next(). */
enum ntp_synth_event {
	NTP_SYNTH_END = 0,
	NTP_SYNTH_RECORD,	/* *rec filled; rec->side and rec->cntlid say whose */
	NTP_SYNTH_SECOND,	/* a simulated second passed: *t_ns is its time (flush, totals) */
};

/* Next event in simulated-time order. *t_ns: simulated time of the event. */
enum ntp_synth_event ntp_synth_next(struct ntp_synth *s, struct ntp_record *rec, uint64_t *t_ns);

/* A side's clock at simulated time t (host: controller cntlid's machine,
 * host 1's when one_host_clock is set). */
uint64_t ntp_synth_clock(const struct ntp_synth *s, uint8_t side, uint16_t cntlid, uint64_t t_ns);

/* Per-group totals of every command issued so far for a side (host: one
 * controller, or 0 for all; target: cntlid ignored). Returns the number of
 * groups written to out (at most max). */
size_t ntp_synth_totals(const struct ntp_synth *s, uint8_t side, uint16_t cntlid,
			struct ntp_total *out, size_t max);

/* Commands issued and sampled so far. */
uint64_t ntp_synth_issued(const struct ntp_synth *s);
uint64_t ntp_synth_sampled(const struct ntp_synth *s);
/* Latest time a sampled command left either side (whether or not that
 * side's records are built): where a recording of this run ends. */
uint64_t ntp_synth_last_time(const struct ntp_synth *s);

/* Names used by --delay (e.g. "storage", "wire"); -1 if unknown. */
int ntp_seg_by_name(const char *name);
const char *ntp_seg_name(enum ntp_seg seg);

/* The deterministic PRNG (xoshiro256**), exported for tests. */
struct ntp_rng { uint64_t s[4]; };
void ntp_rng_seed(struct ntp_rng *r, uint64_t seed);
uint64_t ntp_rng_u64(struct ntp_rng *r);
double ntp_rng_unit(struct ntp_rng *r);		/* [0, 1) */
double ntp_delay_draw(struct ntp_rng *r, const struct ntp_delay *d);

#endif
