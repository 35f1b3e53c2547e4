/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hooks.h - ntprof's NVMe/TCP and NVMe/RDMA hooks as data (which program, which kernel
 * function or tracepoint, which module, which side), and the checks of what
 * this kernel offers right now. Shared by the collector and `ntprof probe`.
 */
#ifndef NTP_HOOKS_H
#define NTP_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#define NTP_HOOK_HOST	1
#define NTP_HOOK_TARGET	2

/* Which transport's recording loads a hook (ntp_hook.transports). */
#define NTP_HOOK_TCP	0
#define NTP_HOOK_ANY	1	/* the transport-independent tracepoints */
#define NTP_HOOK_RDMA	2

enum ntp_hook_kind {
	NTP_HOOK_TP,		/* tp_btf / raw_tp */
	NTP_HOOK_ENTRY,		/* fentry / kprobe */
	NTP_HOOK_EXIT,		/* fexit / kretprobe */
};

struct ntp_hook {
	const char *target;	/* kernel function or tracepoint name */
	const char *module;	/* module that defines it, NULL: vmlinux */
	const char *prog_fentry;	/* program of the fentry flavour (fentry/fexit/tp_btf) */
	const char *prog_kprobe;	/* program of the kprobe flavour (kprobe/kretprobe/raw_tp) */
	enum ntp_hook_kind kind;
	unsigned sides;		/* NTP_HOOK_HOST | NTP_HOOK_TARGET */
	bool optional;		/* absent on some kernels, recording works without it */
	const char *lost;	/* optional ones: what a recording without it lacks (said at load), or NULL */
	unsigned char transports;	/* NTP_HOOK_TCP, _ANY or _RDMA */
};

/* At most NTP_MAX_HOOKS rows (the collector keeps a state per row in arrays
 * of this size; hooks.c checks it when it compiles). */
#define NTP_MAX_HOOKS 64
extern const struct ntp_hook ntp_hooks[];
extern const size_t ntp_n_hooks;

/* Why kernel.kprobes is false, as ntp_kernel_probe() finds it: from what
 * the kernel shows, not its configuration (a container's /sys may hide it) */
#define NTP_NO_KPROBES_WHY "neither the kprobe PMU nor kprobe_events is there: CONFIG_KPROBES, CONFIG_KPROBE_EVENTS"
/* What this kernel offers, found at run time. */
struct ntp_kernel {
	bool kernel_btf;	/* /sys/kernel/btf/vmlinux */
	bool kprobes;		/* kprobe PMU or tracefs kprobe_events */
	bool privileged;	/* root, or CAP_BPF and CAP_PERFMON */
	bool atomic_fetch;	/* BPF atomic_fetch_add (BPF_FETCH, 5.12); 5.10 lacks it */
	char release[72];
};

void ntp_kernel_probe(struct ntp_kernel *k);
bool ntp_module_loaded(const char *mod);
bool ntp_module_btf(const char *mod);
/* Modules a side needs over a transport (enum ntp_transport): NULL-terminated. */
const char *const *ntp_side_modules(unsigned side, unsigned transport);
/* The modules of every side in sides, each once (ib_core serves both sides
 * of NVMe/RDMA): how many were put in out (at most max). */
size_t ntp_role_modules(unsigned sides, unsigned transport, const char **out, size_t max);
/* Does a recording of these sides over this transport load the hook? */
bool ntp_hook_used(const struct ntp_hook *h, unsigned sides, unsigned transport);

/* Is the hook's target there? fentry flavour: a BTF FUNC (or the tracepoint's
 * btf_trace_ typedef) in vmlinux or the module's BTF; kprobe flavour: the
 * symbol in /proc/kallsyms (a tracepoint: __tracepoint_<name>). */
bool ntp_hook_present_fentry(const struct ntp_hook *h);
bool ntp_hook_present_kprobe(const struct ntp_hook *h);
const char *ntp_hook_prog(const struct ntp_hook *h, bool fentry);
/* The inlined function whose hook this one stands in for, or NULL. */
const char *ntp_hook_stands_in_for(const struct ntp_hook *h);
/* Load the hook in this flavour? Present, and for a stand-in, its original
 * absent (decided from the same BTF / kallsyms, never by version). */
bool ntp_hook_wanted(const struct ntp_hook *h, bool fentry);
/* Why this flavour does without the hook although it is there (a fact found
 * at load time makes it redundant), or NULL; *addr (may be NULL): the
 * address found. */
const char *ntp_hook_unneeded(const struct ntp_hook *h, bool fentry, unsigned long long *addr);
/* The address of nvme_tcp_data_ready in /proc/kallsyms (the host's socket
 * callback, which tells a host socket from a target's), 0: unknown. */
unsigned long long ntp_host_sk_ready(void);
/* The same for the target's, nvmet_tcp_data_ready. */
unsigned long long ntp_tgt_sk_ready(void);
const char *ntp_hook_flavour_name(const struct ntp_hook *h, bool fentry);

/* ---- A BTF file for kernels whose modules carry no BTF (5.10: module BTF
 * came with 5.11). tools/ntprof-btf.sh makes it from the distribution's debug
 * package: vmlinux's BTF plus the NVMe modules' types, in one file that
 * libbpf uses for every CO-RE relocation (btf_custom_path). ---- */
#define NTP_BTF_DIR "/var/lib/ntprof/btf"

/* The file to use: opt (--btf) when given, else NTP_BTF_DIR/<release>.btf
 * when it exists; NULL when there is none. buf holds the default path. */
const char *ntp_btf_file(const char *opt, char *buf, size_t len);
/* Is path a BTF file with the running kernel's layout of the vmlinux
 * structures the programs read? 0, or -1 with why. The modules' types in it:
 * btf_need.h. */
int ntp_btf_file_check(const char *path, char *why, size_t len);

/* Does the kernel optimize uprobes on a 5-byte nop (x86-64: a call and a
 * system call in place of an int3 trap)? arch_uprobe_optimize in
 * /proc/kallsyms; SPDK's probes have a 5-byte twin (spdk/ntprof_usdt.h). */
bool ntp_uprobes_optimized(void);

/* Frees the cached BTF and kallsyms. */
void ntp_hooks_cleanup(void);

#endif
