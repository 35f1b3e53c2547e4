/* SPDX-License-Identifier: GPL-2.0 */
/*
 * model.h - the one reducer every front end shares: records in (live from the
 * ring buffer, or from .ntp files), joined host/target, grouped by (I/O type,
 * size, namespace), reduced per interval into immutable snapshots.
 *
 * Time is data: the model never reads a clock. ntprof record's per-interval
 * line, ntprof-top's screen, and `ntprof report` (one interval over the whole
 * run) all read struct ntp_snapshot.
 */
#ifndef NTP_MODEL_H
#define NTP_MODEL_H

#include <stdint.h>
#include "../../../bpf/ntprof_event.h"
#include "stage.h"
#include "../store/ntpfile.h"

#define NTP_SNAP_MAX_GROUPS 64

struct ntp_model_config {
	uint8_t role;			/* enum ntp_role of the data fed in */
	uint8_t transport;
	uint8_t impl_host, impl_target;
	uint32_t sampling;		/* -s N */
	/* Extension (model): records of each side kept waiting for their twin
	 * when role is both (see pending.h); 0 means 16384. */
	uint32_t join_window;
	/* Extension (rptspeed): quantiles a front end never shows, not kept
	 * (NTP_MODEL_NO_*; 0 keeps every one). Their snapshot fields stay 0;
	 * counts, means, shares and QDs are unchanged. */
	uint8_t no_quantiles;
	/* Every command through the general breakdown and accumulation (the
	 * common joined flow is otherwise added up straight from its two
	 * records, model.c account_fast): for tests, which compare the two. */
	uint8_t general_only;
};
/* ntp_model_config.no_quantiles */
#define NTP_MODEL_NO_STAGE_Q	(1u << 0)	/* ntp_snap_stage p50/p99/p99.9 */
#define NTP_MODEL_NO_COMP_Q	(1u << 1)	/* ntp_snap_comp p50/p99/p99.9 */

struct ntp_snap_stage {
	int present;
	double mean_us, p50_us, p99_us, p999_us;
	double share;			/* of the end-to-end mean, 0..1 */
	double avg_qd;			/* average commands in the stage: counted when the
					 * group's qd_counted (--exact-queues), else Little's law */
	/* Extension (exactq): */
	double avg_qd_little;		/* Little's law: mean x command rate, always */
};

struct ntp_snap_comp {
	uint64_t n;
	double mean_us, p50_us, p99_us, p999_us;
	double avg_qd;			/* "L" of the component table (docs/stage-model.md) */
};

struct ntp_snap_group {
	uint8_t io;			/* enum ntp_io_type */
	uint32_t len;			/* bytes */
	char dev[NTP_DEV_LEN];
	int host_only;			/* network stage = network and target, marked '*' */
	int target_only;
	uint64_t sampled;		/* records that entered the statistics */
	uint64_t commands;		/* exact kernel count in the interval (0: unknown) */
	double rate;			/* commands/s: exact when counted, else sampled x N / seconds */
	double iops, mbps;
	double e2e_mean_us, e2e_p50_us, e2e_p99_us, e2e_p999_us;
	struct ntp_snap_stage stage[NTP_STAGE_COUNT];
	struct ntp_snap_comp comp[NTP_COMP_COUNT];
	int largest;			/* enum ntp_stage with the largest mean */
	uint64_t fallback_records;	/* used the STORAGE_DONE fallback */
	uint64_t bio_records;		/* host records timed from the bio's submission (H_BIO_SUBMIT) */
	uint64_t incomplete_records;	/* lacked a timestamp, or had times one clock cannot give: left out */
	uint64_t missed_records;	/* closed after a missed completion */
	/* Extension (model): */
	uint64_t seen;			/* records of the group's side (host; target if target-only),
					 * matched or not: the base of the estimated rate */
	uint64_t unmatched;		/* role both: host records whose target twin never came */
	/* Extension (exactq): --exact-queues */
	int qd_counted;			/* stage avg_qd counted from every command's times (occ.h) */
	double qd_host_recv;		/* counted, host-only: the host's receive paths (in NETWORK) */
	uint64_t qd_summed;		/* commands behind the counted QDs in the interval */
	uint64_t qd_incomplete;		/* commands left out of them (a timestamp missing) */
	/* Extension (whatif): commands/s while the group had commands, from the
	 * span of its sampled commands (a recording's idle start and end left
	 * out); 0: fewer than two sampled */
	double busy_rate;
	/* Extension (topsparse): sampled commands of the run up to this
	 * interval's end, the interval's included: a group the totals count
	 * (docs/top.md) with none has had no command sampled yet */
	uint64_t sampled_run;
	/* Extension (whatifbio): the waits for a tag of the bio_records
	 * (H_BLK_SUBMIT - H_BIO_SUBMIT, where both are seen), summed: in the
	 * host block layer's mean, which the what-if models apart from the
	 * host's tags (docs/what-if.md) */
	int64_t tag_wait_sum_ns;
};

struct ntp_snapshot {
	uint64_t index;			/* interval number, 0-based */
	uint64_t start_ns, end_ns;	/* interval bounds on the recording's clock */
	double seconds;
	uint32_t sampling;
	uint32_t sampling_from;		/* an interval's: the N it began with when it changed during it, else 0 */
	uint8_t role, transport, impl_host, impl_target;
	uint64_t lost_events;		/* ring-buffer drops reported by the source */
	uint64_t host_records, target_records, matched;	/* join counters, cumulative */
	uint32_t n_groups;		/* sorted: reads before writes, then size, then dev */
	struct ntp_snap_group groups[NTP_SNAP_MAX_GROUPS];
	/* Extension (model): */
	uint64_t overflow_records;	/* records of groups beyond NTP_SNAP_MAX_GROUPS, left out */
	uint64_t unmatched_host, unmatched_target;	/* join counters, cumulative, as known so far */
	/* Extension (sock): SPDK NVMe/TCP records per side [0 host, 1 target],
	 * cumulative, and those whose receive path the socket hooks split
	 * (NTP_REC_F_SOCK_SPLIT) */
	uint64_t spdk_tcp[2], spdk_split[2];
	/* Extension (oom): memory ran out. oom: since the start some
	 * allocation failed, so counts are missing (a histogram's chunk: its
	 * quantiles; a group's accumulators: its records, oom_records of them,
	 * cumulative, left out as the overflow's are) */
	int oom;
	uint64_t oom_records;
	/* Extension (side): records of neither side (a side byte not 1 or 2
	 * in a record whose CRC holds), cumulative, left out */
	uint64_t other_side_records;
	/* Extension (skipped): a live source's runs of its programs that the
	 * kernel skipped (bpf_prog_info.recursion_misses, docs/recording.md),
	 * cumulative; 0 in a replay and where the kernel counts none */
	uint64_t skipped_runs;
};

struct ntp_model;

struct ntp_model *ntp_model_new(const struct ntp_model_config *cfg);
/* How group i's accumulators get their zeroed memory (model.c acc_map:
 * a slot of the model's arena, *arena, mapped at the first call; NULL:
 * none had). Tests put in one that fails, to see the records of the group
 * not made counted as oom_records. */
extern void *(*ntp_model_acc_map)(void **arena, unsigned i);
void ntp_model_free(struct ntp_model *m);
/* One record of either side; joined with its twin when the other side is fed too. */
void ntp_model_ingest(struct ntp_model *m, const struct ntp_record *r);
/* ntp_model_ingest of r[0..n) in order (a reader's block, valid for the
 * call): a record waiting for its twin is copied at the end only if it
 * still waits then (pending.h, ntp_pend_settle), and the records go through
 * one loop instead of a call each. */
void ntp_model_ingest_block(struct ntp_model *m, const struct ntp_record *r, size_t n);
/* The same for records anywhere (a merge's, each in its file's block, all
 * valid for the call), in the order of r[0..n). */
void ntp_model_ingest_refs(struct ntp_model *m, const struct ntp_record *const *r, size_t n);
/* Cumulative exact counters (from the kernel or a file's totals block) as of now_ns. */
void ntp_model_set_totals(struct ntp_model *m, const struct ntp_total *t, size_t n, uint64_t now_ns);
void ntp_model_add_lost(struct ntp_model *m, uint64_t lost);
/* The kernel's count of skipped program runs, cumulative (snapshot's skipped_runs). */
void ntp_model_set_skipped(struct ntp_model *m, uint64_t cumulative);
/* -s N changed in the running programs (ntprof-top's s key): rates
 * estimated from sampled commands use N from now on. */
void ntp_model_set_sampling(struct ntp_model *m, uint32_t n);
/* Ends the current interval at now_ns, fills *out, and starts the next.
 * out NULL: the same close, no snapshot (a close nobody reads, e.g. the
 * only one of `ntprof report`: ntp_model_total follows it). */
void ntp_model_close_interval(struct ntp_model *m, uint64_t now_ns, struct ntp_snapshot *out);

/* ---- Extensions (model) ---- */
/* Start of the first interval (the recording's start). Without it, the first
 * interval starts at the first timestamp of the first record ingested. */
void ntp_model_set_start(struct ntp_model *m, uint64_t start_ns);
/* Every interval closed so far as one: start .. the last close. `ntprof record`
 * prints its final report from this after its last ntp_model_close_interval.
 * It is the end of input: the records still waiting for their twin count as
 * unmatched (unmatched_host, unmatched_target, a group's unmatched), where an
 * interval's count only those known so far. The groups past out->n_groups
 * are left as they were. */
void ntp_model_total(struct ntp_model *m, struct ntp_snapshot *out);
/* Counts how many records the pending structures of the join hold (tests, diagnostics). */
size_t ntp_model_pending(const struct ntp_model *m);
/* The group lookup's direct-mapped table (model.c group_of; tests,
 * diagnostics): keys in it, meetings of two keys in a slot met with draws
 * (whether a new multiplier resolved them or not), multipliers drawn,
 * offers of keys left out (records of keys not in it, from the first). */
struct ntp_model_gc_stats {
	unsigned fast, rehash;
	uint64_t draws, out_offers;
};
void ntp_model_gc_stats(const struct ntp_model *m, struct ntp_model_gc_stats *out);
/* The group of a record: I/O type from its opcode. */
uint8_t ntp_io_type_of(uint8_t opcode);

#endif
