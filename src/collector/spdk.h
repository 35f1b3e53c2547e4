/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spdk.h - the SPDK source of records: ntprof's USDT programs
 * (bpf/ntprof_spdk.bpf.c) attached to the running processes of an SPDK
 * binary (--spdk-host / --spdk-target), and the sampling variable that tells
 * each of them one command in N (bpf/ntprof_spdk.h, docs/spdk.md).
 */
#ifndef NTP_SPDK_H
#define NTP_SPDK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../../bpf/ntprof_event.h"
#include "spdk_elf.h"

#define NTP_SPDK_MAX_PROCS 64
/* The stop waits this long at most for the sampled commands in flight (those
 * still in flight then are counted lost); a process of ntprof's older SPDK
 * patch, without the count, gets a fixed grace (docs/spdk.md). */
#define NTP_SPDK_STOP_WAIT_MS 1000
#define NTP_SPDK_OLD_GRACE_MS 20

/* One side's binary, as `ntprof probe` shows it. */
struct ntp_spdk_info {
	struct ntp_usdt_count probes[NTP_USDT_MAX];	/* over the binary and its libraries */
	int n_probes;
	pid_t pids[NTP_SPDK_MAX_PROCS];
	uint64_t var_addr[NTP_SPDK_MAX_PROCS];		/* 0: not found in that process */
	uint64_t flight_addr[NTP_SPDK_MAX_PROCS];	/* ntprof_inflight; 0: not found (an older patch) */
	uint64_t flight_size[NTP_SPDK_MAX_PROCS];	/* not 0: found, of another size than ntprof's */
	int n_pids;
};

/* The probe a side needs over a transport: "nvmf_tcp_done", ... */
const char *ntp_spdk_probe_name(unsigned side, unsigned transport);
/* Attach the probes' 5-byte twins (spdk/ntprof_usdt.h) where a file has
 * them? The kernel optimizes uprobes (ntp_uprobes_optimized) and
 * NTPROF_NO_NOP5 is not set (to compare the two, bench/spdk_cold.sh). */
bool ntp_spdk_twins_wanted(void);
/* Probes, processes and variable addresses of bin; -1 with why in err when
 * bin is not there. */
int ntp_spdk_inspect(const char *bin, struct ntp_spdk_info *info, char *err, size_t errlen);

struct ntp_spdk_opts {
	const char *bin[2];		/* [0] host (--spdk-host), [1] target (--spdk-target); NULL: not SPDK */
	uint8_t transport;		/* enum ntp_transport */
	uint32_t sampling;		/* -s N, written to the variable */
	int io_type;			/* -1 all */
	const uint32_t *sizes;
	int n_sizes;
	bool test_only;			/* ntprof probe: attach and detach, leave the variable alone */
	int flavour;			/* the socket hooks: 0 fentry when it can attach, else
					 * kprobes; 1 fentry only (--fentry); 2 kprobes only (--kprobes) */
	void (*say)(void *ctx, const char *line);
	void *say_ctx;
};

struct ntp_spdk;
typedef void (*ntp_spdk_record_cb)(void *ctx, const struct ntp_record *r);

/* Refuses (NULL, one line in err) when a binary has no probe of its side,
 * no process of it runs, or another recorder holds a process's variable. */
struct ntp_spdk *ntp_spdk_open(const struct ntp_spdk_opts *o, char *err, size_t errlen);
/* Drains the ring buffer (no wait: the kernel collector's poll waits), and
 * about every second picks up processes started since, drops ended ones. */
int ntp_spdk_poll(struct ntp_spdk *s, ntp_spdk_record_cb cb, void *ctx);
int ntp_spdk_set_sampling(struct ntp_spdk *s, uint32_t n);
/* Records lost (ring buffer full, or in flight past the stop's wait) and
 * ill-formed (another ABI). */
void ntp_spdk_counters(struct ntp_spdk *s, uint64_t *lost, uint64_t *bad);
/* Of ntp_spdk_counters()' lost, the sampled commands in flight past the
 * stop's wait (the rest: the SPDK ring buffer was full). */
uint64_t ntp_spdk_stop_lost(const struct ntp_spdk *s);
/* The flavour of the kernel socket hooks attached (TCP): "fentry",
 * "kprobe", or NULL with why in *why (not attached: the receive paths are
 * not split). */
const char *ntp_spdk_sock_flavour(const struct ntp_spdk *s, const char **why);
/* The stop: sets every process's variable back to 0 and waits (at most a
 * second) for the sampled commands begun before to be handed over, their
 * records to cb (NULL: the last poll's); those still in flight are counted
 * in ntp_spdk_counters()' lost, and said. Once; ntp_spdk_close() does it
 * when it has not been done. */
void ntp_spdk_stop(struct ntp_spdk *s, ntp_spdk_record_cb cb, void *ctx);
/* Stops (above) if not stopped, releases the locks, detaches. */
void ntp_spdk_close(struct ntp_spdk *s);

#endif
