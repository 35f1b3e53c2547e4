/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf-runtime.h - the summed run time of the BPF programs whose names start
 * with a prefix (kernel.bpf_stats_enabled on), read around one command by
 * the test tools' --bpf-time (ntp-load, spdk-standin). Each read is one
 * bpf() call per program: outside the latency a tool measures, not outside
 * the caches.
 */
#ifndef NTP_BPF_RUNTIME_H
#define NTP_BPF_RUNTIME_H

#include <stdint.h>

#define BPF_RUNTIME_MAX_PROGS 64

struct bpf_runtime {
	int fd[BPF_RUNTIME_MAX_PROGS];
	uint32_t id[BPF_RUNTIME_MAX_PROGS];
	uint64_t ns[BPF_RUNTIME_MAX_PROGS], at_mark[BPF_RUNTIME_MAX_PROGS];
	int n;
};

/* The programs loaded now whose names start with prefix. 0; -1 with errno
 * ENOENT when none is, else the listing's error (EPERM without root). */
int bpf_runtime_open(struct bpf_runtime *p, const char *prefix);
/* Each program's run time now into ns[], the sum returned. */
uint64_t bpf_runtime_read(struct bpf_runtime *p);
/* ns[] kept in at_mark[]: what bpf_runtime_read later shows per program is
 * then ns[i] - at_mark[i] */
void bpf_runtime_mark(struct bpf_runtime *p);

#endif
