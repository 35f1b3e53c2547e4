/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collector.h - the live source: loads and attaches ntprof's BPF programs
 * (fentry/fexit or their kprobe twins, chosen before load), drains the ring
 * buffer, reads the exact per-group counters. Used by `ntprof record`,
 * `ntprof probe` and ntprof-top's background thread.
 */
#ifndef NTP_COLLECTOR_H
#define NTP_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../../bpf/ntprof_event.h"
#include "../core/store/ntpfile.h"

enum ntp_flavour {
	NTP_FLAVOUR_AUTO = 0,	/* fentry when it can attach now, else kprobes; say why */
	NTP_FLAVOUR_FENTRY,	/* --fentry */
	NTP_FLAVOUR_KPROBE,	/* --kprobes */
};

#define NTP_MAX_SIZES 16

struct ntp_collector_opts {
	uint8_t role;			/* enum ntp_role */
	uint8_t transport;		/* enum ntp_transport */
	uint32_t sampling;		/* -s N */
	char session[NTP_DEV_LEN];	/* --session nvmeXnY, "" = all */
	/* --target-session NQN:NSID: the target side's namespace ("": with -r both
	 * the one --session's namespace maps to, else all; session.h) */
	char target_session[256];
	int io_type;			/* -1 all, else enum ntp_io_type */
	uint32_t sizes[NTP_MAX_SIZES];	/* --size, bytes */
	int n_sizes;
	enum ntp_flavour flavour;
	double attach_timeout_s;	/* fall back to kprobes after this (10) */
	bool exact_queues;		/* --exact-queues: every command's stage times summed
					 * in the kernel (ntp_total.occ) */
	/* --btf FILE: the NVMe types for a kernel whose modules have no BTF
	 * (tools/ntprof-btf.sh). NULL: NTP_BTF_DIR/<release>.btf (hooks.h) if it
	 * exists. Used only when a module the role needs has no BTF of its own. */
	const char *btf_path;
	/* Messages meant for the user ("fentry cannot attach now: ...; using kprobes").
	 * NULL: printed to stderr. ntprof-top passes a sink that queues them. */
	void (*say)(void *ctx, const char *line);
	void *say_ctx;
	/* --spdk-host BIN, --spdk-target BIN: that side runs SPDK, recorded
	 * through the USDT probes of ntprof's SPDK patch in BIN's running
	 * processes (spdk.h) instead of the kernel's NVMe hooks. NULL: Linux. */
	const char *spdk_host;
	const char *spdk_target;
	bool spdk_test_only;		/* ntprof probe: attach, never write the variable */
};

struct ntp_collector;

typedef void (*ntp_record_cb)(void *ctx, const struct ntp_record *r);

/* Loads and attaches. NULL with a one-line reason in errbuf (what is missing:
 * root/CAP_BPF, kernel BTF, a module, kprobes, fentry...). */
struct ntp_collector *ntp_collector_open(const struct ntp_collector_opts *o, char *errbuf, size_t errlen);
/* Drains the ring buffer, calling cb per record; waits up to timeout_ms. Records seen or -errno. */
int ntp_collector_poll(struct ntp_collector *c, int timeout_ms, ntp_record_cb cb, void *ctx);
/* Sums the per-CPU counters (and, with exact_queues, the stage sums into
 * .occ). Returns the number of groups written (<= max). */
int ntp_collector_totals(struct ntp_collector *c, struct ntp_total *out, size_t max);
uint64_t ntp_collector_lost(struct ntp_collector *c);
/* At the stop, before the last counters: the SPDK processes sample nothing
 * more, and the sampled commands they still have in flight are waited for
 * (their records to cb) or counted lost (spdk.h, ntp_spdk_stop). */
void ntp_collector_stop(struct ntp_collector *c, ntp_record_cb cb, void *ctx);
/* The kernel side's own counters, and the SPDK side's losses apart. */
struct ntp_collector_counters {
	uint64_t lost;			/* kernel records the ring buffer had no room for */
	uint64_t missed_host;		/* host records closed when their request was reused */
	uint64_t missed_target;		/* same on the target */
	uint64_t table_full;		/* sampled commands not tracked: in-flight table full */
	uint64_t spdk_bad;		/* SPDK records of another ABI, or unreadable */
	uint64_t spdk_lost_ring;	/* SPDK records the SPDK ring buffer had no room for */
	uint64_t spdk_lost_stop;	/* SPDK sampled commands in flight past the stop's wait */
	/* Runs of the kernel side's programs the kernel skipped, because the
	 * program was already running on that CPU (bpf_prog_info's
	 * recursion_misses, 5.12 on; docs/recording.md): each may leave a
	 * record without one timestamp; 0 where the kernel does not count
	 * them. skipped_most names the program with the most. */
	uint64_t skipped;
	uint64_t skipped_most_n;
	char skipped_most[32];
};
void ntp_collector_counters(struct ntp_collector *c, struct ntp_collector_counters *out);
/* Its skipped runs alone (0 where not known), for each interval. */
uint64_t ntp_collector_skipped(struct ntp_collector *c);
/* Loads and attaches one fentry program (on tcp_sendmsg) and detaches it:
 * 0, or -1 with why it cannot. Needs no NVMe module. */
int ntp_fentry_selftest(char *why, size_t len);
/* nvme<S>c<C>n<N> (hidden multipath path) -> nvme<S>n<N>, in place. */
void ntp_dev_normalize(char *dev);
/* Which flavour is attached: true fentry/fexit + tp_btf, false kprobe/kretprobe + raw_tp. */
bool ntp_collector_uses_fentry(const struct ntp_collector *c);
/* Per entry i of ntp_hooks[] (hooks.h): 1 attached, 0 not used, <0 -errno. */
int ntp_collector_hook_state(const struct ntp_collector *c, size_t i);
/* The BTF file the NVMe types came from (--btf or the default place), or ""
 * when every module had its own BTF. */
const char *ntp_collector_btf_file(const struct ntp_collector *c);
/* Changes -s N in the running programs. */
int ntp_collector_set_sampling(struct ntp_collector *c, uint32_t n);
/* Detaches every link and frees. With an SPDK side, first sets each SPDK
 * process's sampling variable back to 0 and hands the records of commands
 * still in flight to the last poll's callback (its ctx must still be valid). */
void ntp_collector_close(struct ntp_collector *c);

#endif
