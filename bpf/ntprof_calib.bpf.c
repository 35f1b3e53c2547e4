// SPDX-License-Identifier: GPL-2.0
/*
 * ntprof_calib.bpf.c - calibration programs for the hook-cost bench
 * (bench/hook_cost.sh, docs/performance.md), loaded by tests/tools/ntp-hookcal.c,
 * never by ntprof.
 *
 * Each program is attached, in the same guest and under the same load, to the
 * same functions and tracepoints as ntprof's own (src/collector/hooks.c's
 * table): the kernel's bpf_stats (run_time_ns / run_cnt) of an empty program
 * is what one invocation of a hook costs before it does anything, and a
 * program doing one hash-map lookup that misses (what an unsampled command
 * costs at most hooks) gives the price of one lookup. ntprof's run time per
 * I/O is then expressed in those units, which carry over to real hardware
 * where TCG's absolute times do not.
 *
 * The attach targets are set by the loader (bpf_program__set_attach_target,
 * bpf_program__attach_kprobe): one section per flavour, no target in it.
 * Names start with cal_, never ntp_: the bench sums ntprof's by that prefix.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* Never filled: every lookup misses, as ntprof's do for unsampled commands. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} cal_map SEC(".maps");

static __always_inline int one_lookup(__u64 key)
{
	/* the returned pointer is used, so the lookup cannot be dropped */
	return bpf_map_lookup_elem(&cal_map, &key) != NULL;
}

SEC("fentry")
int cal_fe_empty(void *ctx)
{
	return 0;
}

SEC("fexit")
int cal_fx_empty(void *ctx)
{
	return 0;
}

SEC("tp_btf")
int cal_tp_empty(void *ctx)
{
	return 0;
}

SEC("fentry")
int cal_fe_lookup(void *ctx)
{
	return one_lookup(0);
}

SEC("kprobe")
int cal_kp_empty(void *ctx)
{
	return 0;
}

SEC("kretprobe")
int cal_kr_empty(void *ctx)
{
	return 0;
}

SEC("raw_tp")
int cal_rt_empty(void *ctx)
{
	return 0;
}

SEC("kprobe")
int cal_kp_lookup(void *ctx)
{
	return one_lookup(0);
}
