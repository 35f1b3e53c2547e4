// SPDX-License-Identifier: GPL-2.0
/*
 * hooks.c - the hook table and the run-time checks of what the kernel has.
 * Nothing here assumes a kernel version: symbols come from /proc/kallsyms,
 * types and functions from the BTF the kernel exposes in /sys/kernel/btf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "hooks.h"
#include "kmod.h"
#include "ntprof.skel.h"
#include "../../bpf/ntprof_event.h"

#define H NTP_HOOK_HOST
#define T NTP_HOOK_TARGET
#define TCP NTP_HOOK_TCP
#define ANY NTP_HOOK_ANY
#define RDMA NTP_HOOK_RDMA
/* A program's name, checked against the skeleton when this file compiles: a
 * name that is no program of build/bpf/ntprof.bpf.o (ntprof.bpf.c and
 * ntprof_rdma.bpf.c linked) does not build. */
#define PROG(name) (&#name[0 * sizeof(((struct ntprof_bpf *)0)->progs.name)])

/* docs/hooks.md says what each fills and why. */
const struct ntp_hook ntp_hooks[] = {
	{ .target = "nvme_setup_cmd", .module = "nvme_core", .sides = H, .transports = ANY,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_h_setup_tb), .prog_kprobe = PROG(ntp_h_setup_rt) },
	{ .target = "nvme_tcp_try_send", .module = "nvme_tcp", .sides = H, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_send_fe), .prog_kprobe = PROG(ntp_h_send_kp) },
	{ .target = "nvme_tcp_try_send", .module = "nvme_tcp", .sides = H, .transports = TCP,
	  .kind = NTP_HOOK_EXIT, .prog_fentry = PROG(ntp_h_send_fx), .prog_kprobe = PROG(ntp_h_send_kr) },
	{ .target = "nvme_tcp_data_ready", .module = "nvme_tcp", .sides = H, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_ready_fe), .prog_kprobe = PROG(ntp_h_ready_kp) },
	{ .target = "nvme_tcp_recv_skb", .module = "nvme_tcp", .sides = H, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_recv_fe), .prog_kprobe = PROG(ntp_h_recv_kp) },
	/* 5.10 inlines it into nvme_tcp_handle_r2t (no symbol, no BTF FUNC) */
	{ .target = "nvme_tcp_setup_h2c_data_pdu", .module = "nvme_tcp", .sides = H, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_r2t_fe), .prog_kprobe = PROG(ntp_h_r2t_kp),
	  .optional = true, .lost = "writes that wait for an R2T lack the R2T and data-sent times" },
	/* ... and then its stand-in (ntp_hook_stands_in_for) */
	{ .target = "blk_mq_tag_to_rq", .sides = H, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_r2tq_fe), .prog_kprobe = PROG(ntp_h_r2tq_kp),
	  .optional = true },
	{ .target = "blk_mq_complete_request_remote", .sides = H, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_cqe_fe), .prog_kprobe = PROG(ntp_h_cqe_kp) },
	{ .target = "nvme_complete_rq", .module = "nvme_core", .sides = H, .transports = ANY,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_h_comp_tb), .prog_kprobe = PROG(ntp_h_comp_rt) },
	{ .target = "block_rq_complete", .sides = H, .transports = ANY,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_h_blkdone_tb), .prog_kprobe = PROG(ntp_h_blkdone_rt) },
	{ .target = "nvmet_tcp_io_work", .module = "nvmet_tcp", .sides = T, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_work_fe), .prog_kprobe = PROG(ntp_t_work_kp) },
	{ .target = "nvmet_tcp_io_work", .module = "nvmet_tcp", .sides = T, .transports = TCP,
	  .kind = NTP_HOOK_EXIT, .prog_fentry = PROG(ntp_t_work_fx), .prog_kprobe = PROG(ntp_t_work_kr) },
	{ .target = "nvmet_tcp_data_ready", .module = "nvmet_tcp", .sides = T, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_ready_fe), .prog_kprobe = PROG(ntp_t_ready_kp) },
	{ .target = "nvmet_req_init", .module = "nvmet", .sides = T, .transports = ANY,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_t_init_tb), .prog_kprobe = PROG(ntp_t_init_rt) },
	{ .target = "nvmet_bdev_execute_rw", .module = "nvmet", .sides = T, .transports = ANY,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_exec_fe), .prog_kprobe = PROG(ntp_t_exec_kp),
	  .optional = true },
	/* the submission's span and the worker's sleeps in it: the queue's
	 * blocked time (docs/backpressure.md) */
	{ .target = "nvmet_bdev_execute_rw", .module = "nvmet", .sides = T, .transports = ANY,
	  .kind = NTP_HOOK_EXIT, .prog_fentry = PROG(ntp_t_exec_fx), .prog_kprobe = PROG(ntp_t_exec_kr),
	  .optional = true, .lost = "waits behind a busy drive stay in the network and target driver stages" },
	{ .target = "sched_switch", .sides = T, .transports = ANY,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_t_sched_tb), .prog_kprobe = PROG(ntp_t_sched_rt),
	  .optional = true, .lost = "waits behind a busy drive stay in the network and target driver stages" },
	{ .target = "nvmet_req_complete", .module = "nvmet", .sides = T, .transports = ANY,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_t_done_tb), .prog_kprobe = PROG(ntp_t_done_rt) },
	/* every change of a namespace's path passes it: the target's device
	 * name is cached until then (bpf/ntprof.bpf.c, target_dev) */
	{ .target = "nvmet_ns_disable", .module = "nvmet", .sides = T, .transports = ANY,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_nsoff_fe), .prog_kprobe = PROG(ntp_t_nsoff_kp),
	  .optional = true },
	{ .target = "nvmet_tcp_queue_response", .module = "nvmet_tcp", .sides = T, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_qresp_fe), .prog_kprobe = PROG(ntp_t_qresp_kp) },
	/* 6.1 sends PDUs with tcp_sendpage; 6.5+ removed it (all via tcp_sendmsg) */
	{ .target = "tcp_sendpage", .sides = H | T, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_s_sendpage_fe), .prog_kprobe = PROG(ntp_s_sendpage_kp),
	  .optional = true },
	{ .target = "tcp_sendpage", .sides = H | T, .transports = TCP,
	  .kind = NTP_HOOK_EXIT, .prog_fentry = PROG(ntp_s_sendpage_fx), .prog_kprobe = PROG(ntp_s_sendpage_kr),
	  .optional = true },
	{ .target = "tcp_sendmsg", .sides = H | T, .transports = TCP,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_s_sendmsg_fe), .prog_kprobe = PROG(ntp_s_sendmsg_kp) },
	{ .target = "tcp_sendmsg", .sides = H | T, .transports = TCP,
	  .kind = NTP_HOOK_EXIT, .prog_fentry = PROG(ntp_s_sendmsg_fx), .prog_kprobe = PROG(ntp_s_sendmsg_kr) },
	/* NVMe/RDMA (bpf/ntprof_rdma.bpf.c) */
	{ .target = "cq_schedule", .module = "ib_core", .sides = H | T, .transports = RDMA,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_r_cqev_tb), .prog_kprobe = PROG(ntp_r_cqev_rt) },
	{ .target = "cq_poll", .module = "ib_core", .sides = T, .transports = RDMA,
	  .kind = NTP_HOOK_TP, .prog_fentry = PROG(ntp_r_cqpoll_tb), .prog_kprobe = PROG(ntp_r_cqpoll_rt),
	  .optional = true, .lost = "a command's arrival is its CQ's last event even when the CQ was polled since" },
	{ .target = "nvme_rdma_post_send", .module = "nvme_rdma", .sides = H, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_rpost_fe), .prog_kprobe = PROG(ntp_h_rpost_kp) },
	{ .target = "nvme_rdma_recv_done", .module = "nvme_rdma", .sides = H, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_rrecv_fe), .prog_kprobe = PROG(ntp_h_rrecv_kp) },
	{ .target = "nvme_rdma_send_done", .module = "nvme_rdma", .sides = H, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_h_rsdone_fe), .prog_kprobe = PROG(ntp_h_rsdone_kp),
	  .optional = true },
	{ .target = "nvmet_rdma_recv_done", .module = "nvmet_rdma", .sides = T, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_rrecv_fe), .prog_kprobe = PROG(ntp_t_rrecv_kp) },
	{ .target = "nvmet_rdma_recv_done", .module = "nvmet_rdma", .sides = T, .transports = RDMA,
	  .kind = NTP_HOOK_EXIT, .prog_fentry = PROG(ntp_t_rrecv_fx), .prog_kprobe = PROG(ntp_t_rrecv_kr) },
	{ .target = "rdma_rw_ctx_post", .module = "ib_core", .sides = T, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_rread_fe), .prog_kprobe = PROG(ntp_t_rread_kp) },
	{ .target = "nvmet_rdma_read_data_done", .module = "nvmet_rdma", .sides = T, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_rrdone_fe), .prog_kprobe = PROG(ntp_t_rrdone_kp) },
	{ .target = "nvmet_rdma_queue_response", .module = "nvmet_rdma", .sides = T, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_rqresp_fe), .prog_kprobe = PROG(ntp_t_rqresp_kp) },
	{ .target = "nvmet_rdma_send_done", .module = "nvmet_rdma", .sides = T, .transports = RDMA,
	  .kind = NTP_HOOK_ENTRY, .prog_fentry = PROG(ntp_t_rsdone_fe), .prog_kprobe = PROG(ntp_t_rsdone_kp) },
};
const size_t ntp_n_hooks = sizeof(ntp_hooks) / sizeof(ntp_hooks[0]);
_Static_assert(sizeof(ntp_hooks) / sizeof(ntp_hooks[0]) <= NTP_MAX_HOOKS, "a row more than NTP_MAX_HOOKS");

const char *const *ntp_side_modules(unsigned side, unsigned transport)
{
	static const char *const host[] = { "nvme_core", "nvme_tcp", NULL };
	static const char *const target[] = { "nvmet", "nvmet_tcp", NULL };
	/* ib_core: the completion-event tracepoint and rdma_rw_ctx_post */
	static const char *const rdma_host[] = { "nvme_core", "nvme_rdma", "ib_core", NULL };
	static const char *const rdma_target[] = { "nvmet", "nvmet_rdma", "ib_core", NULL };

	if (transport == NTP_TRANSPORT_RDMA)
		return side == NTP_HOOK_TARGET ? rdma_target : rdma_host;
	return side == NTP_HOOK_TARGET ? target : host;
}

size_t ntp_role_modules(unsigned sides, unsigned transport, const char **out, size_t max)
{
	size_t n = 0;

	for (unsigned side = NTP_HOOK_HOST; side <= NTP_HOOK_TARGET; side <<= 1) {
		if (!(sides & side))
			continue;
		for (const char *const *m = ntp_side_modules(side, transport); *m && n < max; m++) {
			size_t i = 0;

			while (i < n && strcmp(out[i], *m))
				i++;
			if (i == n)
				out[n++] = *m;
		}
	}
	return n;
}

bool ntp_hook_used(const struct ntp_hook *h, unsigned sides, unsigned transport)
{
	if (!(h->sides & sides))
		return false;
	if (h->transports == NTP_HOOK_ANY)
		return true;
	return h->transports == (transport == NTP_TRANSPORT_RDMA ? NTP_HOOK_RDMA : NTP_HOOK_TCP);
}

/* Hooks on the caller of a function some kernels inline, loaded only when
 * that function is absent: the caller is hot (blk_mq_tag_to_rq serves every
 * blk-mq driver), the inlined function's own hook is exact. */
static const struct {
	const char *target;
	const char *for_target;
} stand_ins[] = {
	/* 5.10 inlines nvme_tcp_setup_h2c_data_pdu and its callers up to
	 * nvme_tcp_recv_skb; the R2T's request lookup is the first call out */
	{ "blk_mq_tag_to_rq", "nvme_tcp_setup_h2c_data_pdu" },
};

const char *ntp_hook_stands_in_for(const struct ntp_hook *h)
{
	for (size_t i = 0; i < sizeof(stand_ins) / sizeof(stand_ins[0]); i++)
		if (!strcmp(h->target, stand_ins[i].target))
			return stand_ins[i].for_target;
	return NULL;
}

/* Hooks the fentry flavour does without when a load-time fact is known: the
 * host's nvme_tcp_try_send only tells the socket send hooks which queue and
 * side a send is; with the address of the host driver's receive callback
 * they tell a host socket by its sk_data_ready (set to nvme_tcp_data_ready
 * by nvme_tcp_setup_sock_ops, or nvme_tcp_alloc_queue before it) and find
 * its queue in sk_user_data. The same for the target's nvmet_tcp_io_work
 * with nvmet_tcp_data_ready (nvmet_tcp_set_queue_sock): the socket hooks
 * tell its sockets, and nvmet_req_init and nvmet_bdev_execute_rw find the
 * queue from the command (bpf/ntprof.bpf.c, target_tcp_queue_of). Both
 * flavours: the kretprobe of a socket send, which has no arguments, finds
 * the queue its kprobe left in the thread's context (sock_stash). *addr:
 * the address that decided it. */
const char *ntp_hook_unneeded(const struct ntp_hook *h, bool fentry, unsigned long long *addr)
{
	unsigned long long a;

	(void)fentry;	/* both flavours: the kprobe of a socket send has the socket */
	if (!strcmp(h->target, "nvme_tcp_try_send") && (a = ntp_host_sk_ready())) {
		if (addr)
			*addr = a;
		return "the socket hooks tell host sockets by sk_data_ready == nvme_tcp_data_ready";
	}
	if (!strcmp(h->target, "nvmet_tcp_io_work") && (a = ntp_tgt_sk_ready())) {
		if (addr)
			*addr = a;
		return "the socket hooks tell target sockets by sk_data_ready == nvmet_tcp_data_ready, "
		       "a command's queue comes from the command";
	}
	return NULL;
}

bool ntp_hook_wanted(const struct ntp_hook *h, bool fentry)
{
	const char *orig = ntp_hook_stands_in_for(h);

	if (ntp_hook_unneeded(h, fentry, NULL))
		return false;
	if (!(fentry ? ntp_hook_present_fentry(h) : ntp_hook_present_kprobe(h)))
		return false;
	if (!orig)
		return true;
	for (size_t i = 0; i < ntp_n_hooks; i++)
		if (!strcmp(ntp_hooks[i].target, orig))
			return !(fentry ? ntp_hook_present_fentry(&ntp_hooks[i]) :
				 ntp_hook_present_kprobe(&ntp_hooks[i]));
	return true;
}

static bool path_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

bool ntp_module_loaded(const char *mod)
{
	struct utsname u;

	return uname(&u) == 0 && ntp_kmod_state(NULL, u.release, mod) != NTP_KMOD_ABSENT;
}

bool ntp_module_btf(const char *mod)
{
	char p[300];

	snprintf(p, sizeof(p), "/sys/kernel/btf/%s", mod);
	return path_exists(p);
}

static bool have_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	const int cap_perfmon = 38, cap_bpf = 39;

	if (geteuid() == 0)
		return true;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return false;
	return (data[cap_perfmon / 32].effective & (1u << (cap_perfmon % 32))) &&
	       (data[cap_bpf / 32].effective & (1u << (cap_bpf % 32)));
}

/* Does the verifier take atomic_fetch_add (BPF_FETCH came with 5.12)? A
 * five-instruction socket filter that adds to its stack tells. */
static bool probe_atomic_fetch(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1, .off = -8,
		  .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns, 5, NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

void ntp_kernel_probe(struct ntp_kernel *k)
{
	struct utsname u;

	memset(k, 0, sizeof(*k));
	k->kernel_btf = path_exists("/sys/kernel/btf/vmlinux");
	/* The kprobe PMU (4.17+) or the tracefs interface, when CONFIG_KPROBES=y */
	k->kprobes = path_exists("/sys/bus/event_source/devices/kprobe/type") ||
		     path_exists("/sys/kernel/tracing/kprobe_events") ||
		     path_exists("/sys/kernel/debug/tracing/kprobe_events");
	k->privileged = have_caps();
	k->atomic_fetch = k->privileged && probe_atomic_fetch();
	if (uname(&u) == 0)
		snprintf(k->release, sizeof(k->release), "%s", u.release);
}

/* ---- BTF, loaded once ---- */
static struct btf *vmlinux_btf;
static struct {
	char name[32];
	struct btf *btf;
} mod_btf[8];

static struct btf *btf_of(const char *module)
{
	if (!vmlinux_btf) {
		vmlinux_btf = btf__load_vmlinux_btf();
		if (!vmlinux_btf)
			return NULL;
	}
	if (!module || ntp_module_builtin(module))	/* built in: its types are vmlinux's */
		return vmlinux_btf;
	for (size_t i = 0; i < sizeof(mod_btf) / sizeof(mod_btf[0]); i++) {
		if (mod_btf[i].btf && !strcmp(mod_btf[i].name, module))
			return mod_btf[i].btf;
		if (!mod_btf[i].btf) {
			if (!ntp_module_btf(module))
				return NULL;
			mod_btf[i].btf = btf__load_module_btf(module, vmlinux_btf);
			if (!mod_btf[i].btf)
				return NULL;
			snprintf(mod_btf[i].name, sizeof(mod_btf[i].name), "%s", module);
			return mod_btf[i].btf;
		}
	}
	return NULL;
}

bool ntp_hook_present_fentry(const struct ntp_hook *h)
{
	struct btf *b = btf_of(h->module);
	char name[128];

	if (!b)
		return false;
	if (h->kind == NTP_HOOK_TP) {
		snprintf(name, sizeof(name), "btf_trace_%s", h->target);
		return btf__find_by_name_kind(b, name, BTF_KIND_TYPEDEF) > 0;
	}
	return btf__find_by_name_kind(b, h->target, BTF_KIND_FUNC) > 0;
}

/* ---- /proc/kallsyms, read once into the few names we ask about ---- */
static char *ksyms_found;	/* "\nname\n" entries found */
static unsigned long long host_sk_ready_addr;	/* nvme_tcp_data_ready, 0: unknown */
static unsigned long long tgt_sk_ready_addr;	/* nvmet_tcp_data_ready, 0: unknown */

static void ksyms_load(void)
{
	size_t cap = 4096, len = 1;
	char line[512];
	FILE *f;

	ksyms_found = calloc(1, cap);
	if (!ksyms_found)
		return;
	ksyms_found[0] = '\n';
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, ' '), *end;
		bool want = false;

		if (!name || !(name = strchr(name + 1, ' ')))
			continue;
		name++;
		end = strpbrk(name, " \t\n");
		if (end)
			*end = 0;
		if (!strncmp(name, "__tracepoint_", 13))
			name += 13, want = true;
		for (size_t i = 0; !want && i < ntp_n_hooks; i++)
			want = !strcmp(name, ntp_hooks[i].target);
		/* the socket functions `ntprof probe --spdk-*` asks about, and whether
		 * the kernel optimizes uprobes (src/cli/probe_spdk.c) */
		want = want || !strcmp(name, "tcp_recvmsg") || !strcmp(name, "skb_copy_datagram_iter") ||
		       !strcmp(name, "arch_uprobe_optimize");
		if (!want)
			continue;
		/* an unprivileged reader sees 0 (kptr_restrict): unknown */
		if (!strcmp(name, "nvme_tcp_data_ready"))
			host_sk_ready_addr = strtoull(line, NULL, 16);
		if (!strcmp(name, "nvmet_tcp_data_ready"))
			tgt_sk_ready_addr = strtoull(line, NULL, 16);
		if (len + strlen(name) + 2 > cap) {
			char *n = realloc(ksyms_found, cap * 2);

			if (!n)
				break;
			ksyms_found = n;
			cap *= 2;
		}
		len += sprintf(ksyms_found + len, "%s\n", name);
	}
	fclose(f);
}

bool ntp_hook_present_kprobe(const struct ntp_hook *h)
{
	char key[140];

	if (!ksyms_found)
		ksyms_load();
	if (!ksyms_found)
		return false;
	snprintf(key, sizeof(key), "\n%s\n", h->target);
	return strstr(ksyms_found, key) != NULL;
}

bool ntp_uprobes_optimized(void)
{
	struct ntp_hook h = { .target = "arch_uprobe_optimize" };

	return ntp_hook_present_kprobe(&h);
}

unsigned long long ntp_host_sk_ready(void)
{
	if (!ksyms_found)
		ksyms_load();
	return host_sk_ready_addr;
}

unsigned long long ntp_tgt_sk_ready(void)
{
	if (!ksyms_found)
		ksyms_load();
	return tgt_sk_ready_addr;
}

const char *ntp_hook_prog(const struct ntp_hook *h, bool fentry)
{
	return fentry ? h->prog_fentry : h->prog_kprobe;
}

const char *ntp_hook_flavour_name(const struct ntp_hook *h, bool fentry)
{
	switch (h->kind) {
	case NTP_HOOK_TP:
		return fentry ? "tp_btf" : "raw_tp";
	case NTP_HOOK_ENTRY:
		return fentry ? "fentry" : "kprobe";
	case NTP_HOOK_EXIT:
		return fentry ? "fexit" : "kretprobe";
	}
	return "?";
}

/* ---- the BTF file of kernels without module BTF (--btf) ---- */
const char *ntp_btf_file(const char *opt, char *buf, size_t len)
{
	struct utsname u;

	if (opt && opt[0])
		return opt;
	if (uname(&u))
		return NULL;
	snprintf(buf, len, "%s/%s.btf", NTP_BTF_DIR, u.release);
	return path_exists(buf) ? buf : NULL;
}

static struct btf *file_btf;
static char file_btf_path[4096];
static int file_btf_err;

static struct btf *btf_of_file(const char *path)
{
	if (file_btf_path[0] && !strcmp(file_btf_path, path))
		return file_btf;
	btf__free(file_btf);
	snprintf(file_btf_path, sizeof(file_btf_path), "%s", path);
	/* raw BTF or an ELF file with a .BTF section */
	file_btf = btf__parse(path, NULL);
	file_btf_err = file_btf ? 0 : errno;
	return file_btf;
}

int ntp_btf_file_check(const char *path, char *why, size_t len)
{
	/* vmlinux structures the programs read: their size tells a file made for
	 * another kernel build (another release, another config) */
	static const char *const kstructs[] = { "request", "request_queue", "gendisk", "sock", "tcp_sock",
						"sk_buff", "socket", NULL };
	struct btf *f = btf_of_file(path), *k = btf_of(NULL);

	if (!f) {
		snprintf(why, len, "--btf %s: %s", path, file_btf_err == EINVAL || file_btf_err == EPROTO ?
			 "not a BTF file (nor an ELF file with a .BTF section)" : strerror(file_btf_err));
		return -1;
	}
	for (const char *const *s = kstructs; k && *s; s++) {
		__s32 fi = btf__find_by_name_kind(f, *s, BTF_KIND_STRUCT);
		__s32 ki = btf__find_by_name_kind(k, *s, BTF_KIND_STRUCT);
		__u32 fsz, ksz;

		if (fi <= 0 || ki <= 0)
			continue;
		fsz = btf__type_by_id(f, fi)->size;
		ksz = btf__type_by_id(k, ki)->size;
		if (fsz != ksz) {
			snprintf(why, len, "--btf %s was made for another kernel: struct %s is %u bytes there, "
				 "%u in this kernel's BTF", path, *s, fsz, ksz);
			return -1;
		}
	}
	return 0;
}

void ntp_hooks_cleanup(void)
{
	btf__free(file_btf);
	file_btf = NULL;
	file_btf_path[0] = 0;
	for (size_t i = 0; i < sizeof(mod_btf) / sizeof(mod_btf[0]); i++) {
		btf__free(mod_btf[i].btf);
		mod_btf[i].btf = NULL;
	}
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	free(ksyms_found);
	ksyms_found = NULL;
	host_sk_ready_addr = 0;
	tgt_sk_ready_addr = 0;
}
