// SPDX-License-Identifier: GPL-2.0
/*
 * collector.c - loads ntprof.bpf.o through its skeleton, attaches the hooks of
 * the role(s) recorded in one flavour, drains the ring buffer and reads the
 * exact per-group counters.
 *
 * Attach policy (docs/recording.md, "Attach policy"): fentry/fexit is preferred. Attaching a
 * trampoline can wait for every runnable thread to switch out voluntarily, so
 * the programs are attached in parallel threads under a deadline
 * (attach_timeout_s, 10 s); when fentry cannot load or attach, or misses the
 * deadline, the collector says why and loads the kprobe flavour instead.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "say.h"
#include "btf_need.h"
#include "kmod.h"
#include "core/clock.h"
#include "collector.h"
#include "session.h"
#include "hooks.h"
#include "ntprof.skel.h"
#include "spdk.h"

struct attach_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending;
	int abandoned;
	struct bpf_link **links;
	int *errs;
	int refs;		/* threads still running + the owner */
};

struct ntp_collector {
	struct ntp_collector_opts o;
	struct ntprof_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int n_links;
	bool fentry;
	int hook_state[NTP_MAX_HOOKS];	/* per ntp_hooks[i]: 1 attached, 0 not used, -errno failed */
	ntp_record_cb cb;
	void *cb_ctx;
	int seen;
	double attach_s, load_s;
	char btf[4096];		/* the --btf file in use, "" with module BTF */
	bool atomic_fetch;	/* the kernel's verifier takes atomic_fetch_add */
	char devs[8][NTP_DEV_LEN];	/* --session: the disks its commands run on */
	int n_devs;
	char tdev[NTP_DEV_LEN];		/* the target side's backing device to follow, "" all (session.h) */
	/* --spdk-host/--spdk-target: the SPDK side(s); skel is NULL when every
	 * recorded side is SPDK's (no kernel NVMe hook is needed then) */
	struct ntp_spdk *spdk;
};

/* nvme<S>c<C>n<N> (a hidden multipath path) -> nvme<S>n<N> (its head, the
 * name the user knows); any other name is left alone. */
void ntp_dev_normalize(char *dev)
{
	unsigned s, ctl, n;
	int len = 0;

	if (sscanf(dev, "nvme%uc%un%u%n", &s, &ctl, &n, &len) == 3 && len > 0 && !dev[len])
		snprintf(dev, NTP_DEV_LEN, "nvme%un%u", s, n);
}

/* --session nvmeXnY: the head and, with native multipath, every path of it.
 * The paths are the hidden disks nvme<S>c<C>n<N> of the same subsystem
 * instance S and namespace N (/sys/block/nvmeXnY/multipath/ lists them only
 * from 6.14 on, so the names are matched instead). */
static int resolve_session(struct ntp_collector *c, const char *session, char *errbuf, size_t errlen)
{
	unsigned s, n, ps, pc, pn;
	char p[128];
	struct dirent *de;
	int len = 0;
	DIR *d;

	if (!session[0])
		return 0;
	snprintf(p, sizeof(p), "/sys/block/%s", session);
	if (access(p, F_OK)) {
		snprintf(errbuf, errlen, "--session %s: no such block device (/sys/block/%s)", session, session);
		return -1;
	}
	snprintf(c->devs[c->n_devs++], NTP_DEV_LEN, "%s", session);
	if (sscanf(session, "nvme%un%u%n", &s, &n, &len) != 2 || session[len])
		return 0;
	d = opendir("/sys/block");
	if (!d)
		return 0;
	while ((de = readdir(d)) && c->n_devs < 8) {
		len = 0;
		if (sscanf(de->d_name, "nvme%uc%un%u%n", &ps, &pc, &pn, &len) == 3 && !de->d_name[len] &&
		    ps == s && pn == n && strlen(de->d_name) < NTP_DEV_LEN)
			snprintf(c->devs[c->n_devs++], NTP_DEV_LEN, "%s", de->d_name);
	}
	closedir(d);
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !getenv("NTPROF_DEBUG"))
		return 0;
	if (level == LIBBPF_INFO && !getenv("NTPROF_DEBUG"))
		return 0;
	if (!getenv("NTPROF_DEBUG") && !getenv("NTPROF_LIBBPF_WARN"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static unsigned role_sides(uint8_t role)
{
	unsigned s = 0;

	if (role == NTP_ROLE_HOST || role == NTP_ROLE_BOTH)
		s |= NTP_HOOK_HOST;
	if (role == NTP_ROLE_TARGET || role == NTP_ROLE_BOTH)
		s |= NTP_HOOK_TARGET;
	return s;
}

int ntp_fentry_selftest(char *why, size_t len)
{
	struct ntprof_bpf *skel;
	struct bpf_program *p;
	struct bpf_link *l;
	int err;

	libbpf_set_print(libbpf_quiet);
	skel = ntprof_bpf__open();
	if (!skel) {
		snprintf(why, len, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, false);
	bpf_program__set_autoload(skel->progs.fentry_selftest, true);
	err = ntprof_bpf__load(skel);
	if (err) {
		snprintf(why, len, "a test fentry program on tcp_sendmsg does not load: %s", strerror(-err));
		ntprof_bpf__destroy(skel);
		return -1;
	}
	l = bpf_program__attach(skel->progs.fentry_selftest);
	if (!l) {
		err = -errno;
		snprintf(why, len, "a test fentry program on tcp_sendmsg does not attach: %s", strerror(-err));
		ntprof_bpf__destroy(skel);
		return -1;
	}
	bpf_link__destroy(l);
	ntprof_bpf__destroy(skel);
	return 0;
}

/* Is everything the role needs there, before any BPF? errbuf names what is
 * missing; returns 0 when recording can go on. Modules without BTF of their
 * own (before 5.11) are listed in nobtf; their types then come from a BTF
 * file (--btf or NTP_BTF_DIR), whose path goes to btf. */
static int check_prereqs(const struct ntp_collector_opts *o, const struct ntp_kernel *k,
			 char *nobtf, size_t nobtf_len, char *btf, size_t btf_len,
			 char *errbuf, size_t errlen)
{
	unsigned sides = role_sides(o->role);
	char missing[256] = "", defpath[300];
	const char *file, *mods[8];
	size_t n = 0, nmods;

	nobtf[0] = btf[0] = 0;
	if (o->transport != NTP_TRANSPORT_TCP && o->transport != NTP_TRANSPORT_RDMA) {
		snprintf(errbuf, errlen, "transport %u unknown", o->transport);
		return -1;
	}
	if (!k->privileged) {
		snprintf(errbuf, errlen, "needs root, or CAP_BPF and CAP_PERFMON, to load BPF programs");
		return -1;
	}
	if (!k->kernel_btf) {
		snprintf(errbuf, errlen,
			 "kernel BTF missing (/sys/kernel/btf/vmlinux): this kernel was built without CONFIG_DEBUG_INFO_BTF");
		return -1;
	}
	nmods = ntp_role_modules(sides, o->transport, mods, sizeof(mods) / sizeof(mods[0]));
	for (size_t i = 0; i < nmods; i++)
		if (!ntp_module_loaded(mods[i]))
			n += snprintf(missing + n, sizeof(missing) - n, "%s%s", n ? ", " : "", mods[i]);
	if (n) {
		char fe[200] = "";
		size_t m;

		m = snprintf(errbuf, errlen, "kernel module%s not loaded: %s",
			     strchr(missing, ',') ? "s" : "", missing);
		/* name everything else that is missing too, so one run tells
		 * all: of a flavour forced (--fentry, --kprobes), that one only */
		if (o->flavour != NTP_FLAVOUR_KPROBE && ntp_fentry_selftest(fe, sizeof(fe)) && m < errlen)
			m += snprintf(errbuf + m, errlen - m, "; no fentry (%s)", fe);
		if (o->flavour != NTP_FLAVOUR_FENTRY && !k->kprobes && m < errlen)
			snprintf(errbuf + m, errlen - m, "; no kprobes (%s)", NTP_NO_KPROBES_WHY);
		return -1;
	}
	/* The NVMe structures exist only in the modules' own BTF (5.11+):
	 * without it, or a file that carries them, CO-RE cannot place a field. */
	for (size_t i = 0; i < nmods; i++)
		if (!ntp_module_btf(mods[i]) && !ntp_module_builtin(mods[i]))	/* built in: vmlinux BTF */
			n += snprintf(nobtf + n, nobtf_len - n, "%s%s", n ? ", " : "", mods[i]);
	if (!n)	/* every module has its own BTF: has it what the programs read? */
		return ntp_btf_need_check(sides, o->transport, NULL, errbuf, errlen);
	file = ntp_btf_file(o->btf_path, defpath, sizeof(defpath));
	if (!file) {
		snprintf(errbuf, errlen, "no module BTF for %s (/sys/kernel/btf/<module>; kernels before 5.11 "
			 "have none): the NVMe structures cannot be located; make their BTF with "
			 "ntprof-btf (tools/ntprof-btf.sh) from the kernel's -dbg package and pass "
			 "--btf FILE or install it as %s", nobtf, defpath);
		return -1;
	}
	if (access(file, R_OK)) {
		snprintf(errbuf, errlen, "--btf %s: %s", file, strerror(errno));
		return -1;
	}
	/* libbpf takes this one file instead of vmlinux BTF for every CO-RE
	 * relocation (btf_custom_path): it must be this kernel's and carry the
	 * types of every module (btf_need.c) */
	if (ntp_btf_file_check(file, errbuf, errlen) ||
	    ntp_btf_need_check(sides, o->transport, file, errbuf, errlen))
		return -1;
	snprintf(btf, btf_len, "%s", file);
	return 0;
}

/* Which hooks of the role cannot be had in this flavour: a list for the
 * message, or "" when every required one is there. */
static void missing_hooks(unsigned sides, unsigned transport, bool fentry, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < ntp_n_hooks; i++) {
		const struct ntp_hook *h = &ntp_hooks[i];
		bool there;

		if (!ntp_hook_used(h, sides, transport) || h->optional)
			continue;
		there = fentry ? ntp_hook_present_fentry(h) : ntp_hook_present_kprobe(h);
		if (!there && n < len)
			n += snprintf(buf + n, len - n, "%s%s %s", n ? ", " : "",
				      ntp_hook_flavour_name(h, fentry), h->target);
	}
}

/* Before 5.12 (BPF_FETCH) the verifier refuses atomic_fetch_add and
 * compare-and-exchange in a pre-pass over every instruction ("BPF_STX uses
 * reserved fields"), dead or not. The
 * programs take it only when has_atomic_fetch (rodata) is set; when the kernel
 * lacks it, that branch is pruned, and its instruction becomes the plain
 * atomic add that every kernel takes, so the pre-pass passes. Same count of
 * instructions: the relocations still point where they did. */
static int drop_atomic_fetch(struct bpf_program *p)
{
	const struct bpf_insn *in = bpf_program__insns(p);
	size_t n = bpf_program__insn_cnt(p), changed = 0;
	struct bpf_insn *out = malloc(n * sizeof(*out));
	int err;

	if (!out)
		return -ENOMEM;
	memcpy(out, in, n * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		/* and the compare-and-exchanges of a slot's claim and release
		 * (cmd_take, cmd_free), of a bp_thr bucket (bp_thr_enter) and
		 * of the slots of send_stash, rx_slot and arrival_slot */
		if (out[i].code == (BPF_STX | BPF_ATOMIC | BPF_DW) &&
		    (out[i].imm == (BPF_ADD | BPF_FETCH) || out[i].imm == BPF_CMPXCHG)) {
			out[i].imm = BPF_ADD;
			changed++;
		}
	err = changed ? bpf_program__set_insns(p, out, n) : 0;
	free(out);
	return err;
}

/* Is a stand-in for the inlined function target attached? */
static bool stand_in_attached(const struct ntp_collector *c, const char *target)
{
	for (size_t i = 0; i < ntp_n_hooks; i++) {
		const char *orig = ntp_hook_stands_in_for(&ntp_hooks[i]);

		if (orig && !strcmp(orig, target) && c->hook_state[i] == 1)
			return true;
	}
	return false;
}

/* NTPROF_RING_KIB: the records' ring buffer in KiB instead of the object's
 * 4 MiB (bpf/ntprof_common.bpf.h). For tests: tests/vm/scenarios/record-tcp.sh
 * makes it small and stops the reader a moment to fill it, which checks
 * ntprof's count of the records lost. A power of two of whole pages, as the kernel wants of a ring
 * buffer (kernel/bpf/ringbuf.c). The reader's early wake-up follows: half
 * the ring (ring_wake_bytes, bpf/ntprof_common.bpf.h). */
static int ring_size(struct ntprof_bpf *skel, char *errbuf, size_t errlen)
{
	const char *e = getenv("NTPROF_RING_KIB");
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE), kib;
	char *end;

	if (!e)
		return 0;
	errno = 0;
	kib = strtoul(e, &end, 10);
	if (errno || end == e || *end || !kib || kib > (1ul << 20) || (kib & (kib - 1)) || kib * 1024 < page) {
		snprintf(errbuf, errlen, "NTPROF_RING_KIB=%s: not a power of two from %lu to 1048576", e, page / 1024);
		return -1;
	}
	if (bpf_map__set_max_entries(skel->maps.events, (__u32)(kib * 1024))) {
		snprintf(errbuf, errlen, "NTPROF_RING_KIB=%s: %s", e, strerror(errno));
		return -1;
	}
	/* emit wakes the reader once half the ring waits (ring_wake_bytes) */
	skel->rodata->ring_wake_bytes = kib * 1024 / 2;
	return 0;
}

static int open_skel(struct ntp_collector *c, bool fentry, char *errbuf, size_t errlen)
{
	unsigned sides = role_sides(c->o.role);
	const struct ntp_collector_opts *o = &c->o;
	struct ntprof_bpf *skel;
	struct bpf_program *p;
	double t0;
	int err;

	{
		LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = c->btf[0] ? c->btf : NULL);

		skel = ntprof_bpf__open_opts(&oo);
	}
	if (!skel) {
		snprintf(errbuf, errlen, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	skel->rodata->has_atomic_fetch = c->atomic_fetch;
	skel->rodata->filter_io = o->io_type;
	skel->rodata->filter_n_sizes = o->n_sizes;
	for (int i = 0; i < o->n_sizes && i < NTP_MAX_SIZES; i++)
		skel->rodata->filter_sizes[i] = o->sizes[i];
	for (int i = 0; i < c->n_devs; i++)
		memcpy((void *)skel->rodata->filter_devs[i], c->devs[i], NTP_DEV_LEN);
	skel->rodata->filter_n_devs = c->n_devs;
	memcpy((void *)skel->rodata->filter_tdev, c->tdev, NTP_DEV_LEN);
	skel->rodata->filter_has_tdev = c->tdev[0] != '\0';
	skel->rodata->exact_queues = o->exact_queues;
	skel->rodata->ntp_transport = o->transport;
	/* with it, no nvme_tcp_try_send hooks are loaded (ntp_hook_unneeded):
	 * the two decisions come from the same fact */
	skel->rodata->host_sk_ready = ntp_host_sk_ready();
	/* and without nvmet_tcp_io_work's (its address exists only with
	 * nvmet_tcp loaded, whose types the target's code then reads) */
	skel->rodata->tgt_sk_ready = o->transport == NTP_TRANSPORT_TCP ? ntp_tgt_sk_ready() : 0;
	skel->data->sampling_n = o->sampling ? o->sampling : 1;

	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < ntp_n_hooks; i++) {
		const struct ntp_hook *h = &ntp_hooks[i];
		bool there;

		c->hook_state[i] = 0;
		if (!ntp_hook_used(h, sides, o->transport))
			continue;
		there = ntp_hook_wanted(h, fentry);
		if (!there)
			continue;	/* optional ones only: required were checked */
		p = bpf_object__find_program_by_name(skel->obj, ntp_hook_prog(h, fentry));
		if (!p)
			continue;
		bpf_program__set_autoload(p, true);
		if (!c->atomic_fetch && (err = drop_atomic_fetch(p))) {
			snprintf(errbuf, errlen, "cannot prepare %s for this kernel: %s", bpf_program__name(p),
				 strerror(-err));
			ntprof_bpf__destroy(skel);
			return -1;
		}
		c->hook_state[i] = 2;	/* to load */
	}
	if ((err = ring_size(skel, errbuf, errlen))) {
		ntprof_bpf__destroy(skel);
		return -1;
	}
	t0 = (ntp_mono_ns() / 1e9);
	err = ntprof_bpf__load(skel);
	c->load_s = (ntp_mono_ns() / 1e9) - t0;
	if (err) {
		snprintf(errbuf, errlen, "loading the %s programs failed: %s%s", fentry ? "fentry" : "kprobe",
			 strerror(-err), getenv("NTPROF_DEBUG") ? "" : " (NTPROF_DEBUG=1 shows the verifier log)");
		ntprof_bpf__destroy(skel);
		return -1;
	}
	c->skel = skel;
	c->fentry = fentry;
	return 0;
}

static void state_put(struct attach_state *st)
{
	int left;

	pthread_mutex_lock(&st->lock);
	left = --st->refs;
	pthread_mutex_unlock(&st->lock);
	if (left)
		return;
	free(st->links);
	free(st->errs);
	pthread_mutex_destroy(&st->lock);
	pthread_cond_destroy(&st->cond);
	free(st);
}

struct attach_arg {
	struct attach_state *st;
	struct bpf_program *prog;
	int idx;
};

static void *attach_thread(void *arg)
{
	struct attach_arg *a = arg;
	struct attach_state *st = a->st;
	struct bpf_link *l = bpf_program__attach(a->prog);
	int err = l ? 0 : -errno;

	pthread_mutex_lock(&st->lock);
	if (st->abandoned) {
		/* the owner gave up on this flavour: leave nothing attached */
		bpf_link__destroy(l);
	} else {
		st->links[a->idx] = l;
		st->errs[a->idx] = err;
	}
	st->pending--;
	pthread_cond_signal(&st->cond);
	pthread_mutex_unlock(&st->lock);
	free(a);
	state_put(st);
	return NULL;
}

/* Attaches every loaded program in parallel. 0, -ETIMEDOUT (the skeleton must
 * then be left alone: a thread may still be inside the kernel with it), or
 * -errno of the first program that failed (errbuf names it). */
static int attach_all(struct ntp_collector *c, double timeout_s, char *errbuf, size_t errlen)
{
	struct attach_state *st = calloc(1, sizeof(*st));
	int idx_of[NTP_MAX_HOOKS], n = 0, ret = 0;
	struct timespec dl;
	double t0 = (ntp_mono_ns() / 1e9);

	if (!st)
		return -ENOMEM;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->cond, NULL);
	st->links = calloc(ntp_n_hooks, sizeof(*st->links));
	st->errs = calloc(ntp_n_hooks, sizeof(*st->errs));
	st->refs = 1;
	if (!st->links || !st->errs) {
		state_put(st);
		return -ENOMEM;
	}
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < ntp_n_hooks; i++) {
		struct attach_arg *a;
		pthread_t th;

		if (c->hook_state[i] != 2)
			continue;
		a = calloc(1, sizeof(*a));
		if (!a)
			break;
		a->st = st;
		a->idx = n;
		a->prog = bpf_object__find_program_by_name(c->skel->obj, ntp_hook_prog(&ntp_hooks[i], c->fentry));
		idx_of[n++] = i;
		st->pending++;
		st->refs++;
		if (pthread_create(&th, NULL, attach_thread, a)) {
			st->pending--;
			st->refs--;
			st->errs[a->idx] = -EAGAIN;
			free(a);
			continue;
		}
		pthread_detach(th);
	}
	clock_gettime(CLOCK_REALTIME, &dl);
	{
		long long ns = dl.tv_nsec + (long long)(timeout_s * 1e9);

		dl.tv_sec += ns / 1000000000;
		dl.tv_nsec = ns % 1000000000;
	}
	while (st->pending > 0) {
		if (pthread_cond_timedwait(&st->cond, &st->lock, &dl) == ETIMEDOUT)
			break;
	}
	if (st->pending > 0) {
		st->abandoned = 1;
		for (int k = 0; k < n; k++)
			bpf_link__destroy(st->links[k]);
		pthread_mutex_unlock(&st->lock);
		state_put(st);
		return -ETIMEDOUT;
	}
	pthread_mutex_unlock(&st->lock);
	c->attach_s = (ntp_mono_ns() / 1e9) - t0;
	c->links = calloc(n ? n : 1, sizeof(*c->links));
	for (int k = 0; k < n; k++) {
		int i = idx_of[k];

		if (st->errs[k] && !ret) {
			ret = st->errs[k];
			snprintf(errbuf, errlen, "attaching %s %s (%s) failed: %s",
				 ntp_hook_flavour_name(&ntp_hooks[i], c->fentry), ntp_hooks[i].target,
				 ntp_hook_prog(&ntp_hooks[i], c->fentry), strerror(-st->errs[k]));
		}
		c->hook_state[i] = st->errs[k] ? st->errs[k] : 1;
		if (st->links[k] && c->links)
			c->links[c->n_links++] = st->links[k];
	}
	state_put(st);
	if (ret) {
		for (int k = 0; k < c->n_links; k++)
			bpf_link__destroy(c->links[k]);
		c->n_links = 0;
	}
	return ret;
}

static void unload(struct ntp_collector *c, bool leak_skel)
{
	for (int k = 0; k < c->n_links; k++)
		bpf_link__destroy(c->links[k]);
	free(c->links);
	c->links = NULL;
	c->n_links = 0;
	if (!leak_skel)
		ntprof_bpf__destroy(c->skel);
	c->skel = NULL;
}

/* Every program is attached: the entry hooks may now leave marks for their
 * exits (ntp_armed, bpf/ntprof_common.bpf.h; before, an exit attached after
 * its entry would miss what the entry marked). The storage submission's
 * marks (bp_armed) only when both of its hooks are attached: the pair is
 * optional, and an entry without its exit would mark a worker inside a
 * submission for good (docs/backpressure.md, "Entries before their exits"). */
static void arm(struct ntp_collector *c)
{
	int exec_in = 0, exec_out = 0;

	if (!c->skel->bss)
		return;
	for (size_t i = 0; i < ntp_n_hooks; i++) {
		if (strcmp(ntp_hooks[i].target, "nvmet_bdev_execute_rw") || c->hook_state[i] != 1)
			continue;
		if (ntp_hooks[i].kind == NTP_HOOK_ENTRY)
			exec_in = 1;
		else if (ntp_hooks[i].kind == NTP_HOOK_EXIT)
			exec_out = 1;
	}
	if (exec_in && exec_out)
		__atomic_store_n(&c->skel->bss->bp_armed, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&c->skel->bss->ntp_armed, 1, __ATOMIC_RELEASE);
}

static int try_flavour(struct ntp_collector *c, bool fentry, double timeout_s, char *why, size_t whylen)
{
	int err;

	if (open_skel(c, fentry, why, whylen))
		return -1;
	err = attach_all(c, timeout_s, why, whylen);
	if (err == -ETIMEDOUT) {
		snprintf(why, whylen, "attaching took more than %g s (a thread that never yields, such as a "
			 "polling loop, can hold up the trampoline update)", timeout_s);
		/* a thread may still use the object inside the kernel: never free it */
		unload(c, true);
		return -1;
	}
	if (err) {
		unload(c, false);
		return -1;
	}
	/* the target's device-name cache, only once the hook that tells every
	 * namespace change is attached (bpf/ntprof.bpf.c, target_dev) */
	for (size_t i = 0; i < ntp_n_hooks; i++)
		if (!strcmp(ntp_hooks[i].target, "nvmet_ns_disable") && c->hook_state[i] == 1 && c->skel->bss)
			__atomic_store_n(&c->skel->bss->tdev_cache_ok, 1, __ATOMIC_RELEASE);
	arm(c);
	return 0;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct ntp_collector *c = ctx;

	if (size < sizeof(struct ntp_record))
		return 0;
	if (c->cb) {
		struct ntp_record r;

		memcpy(&r, data, sizeof(r));
		ntp_dev_normalize(r.dev);
		c->cb(c->cb_ctx, &r);
	}
	c->seen++;
	return 0;
}

static struct ntp_collector *kernel_open(const struct ntp_collector_opts *o, char *errbuf, size_t errlen);

/* The SPDK side(s) first: when every recorded side is SPDK's, no kernel NVMe
 * module or hook is needed (ntprof_spdk.bpf.c attaches to SPDK's probes). */
struct ntp_collector *ntp_collector_open(const struct ntp_collector_opts *o, char *errbuf, size_t errlen)
{
	struct ntp_collector_opts ko = *o;
	struct ntp_spdk_opts so = { .transport = o->transport, .sampling = o->sampling, .io_type = o->io_type,
				    .sizes = o->sizes, .n_sizes = o->n_sizes, .say = o->say, .say_ctx = o->say_ctx };
	struct ntp_spdk *sp = NULL;
	struct ntp_collector *c;

	if (o->spdk_host && !(o->role & NTP_ROLE_HOST)) {
		snprintf(errbuf, errlen, "--spdk-host records the host side: it needs -r host or -r both");
		return NULL;
	}
	if (o->spdk_target && !(o->role & NTP_ROLE_TARGET)) {
		snprintf(errbuf, errlen, "--spdk-target records the target side: it needs -r target or -r both");
		return NULL;
	}
	if (o->spdk_host || o->spdk_target) {
		if (o->session[0]) {
			snprintf(errbuf, errlen, "--session names a kernel block device; an SPDK side has none");
			return NULL;
		}
		so.bin[0] = o->spdk_host;
		so.bin[1] = o->spdk_target;
		so.test_only = o->spdk_test_only;
		so.flavour = o->flavour == NTP_FLAVOUR_FENTRY ? 1 : o->flavour == NTP_FLAVOUR_KPROBE ? 2 : 0;
		sp = ntp_spdk_open(&so, errbuf, errlen);
		if (!sp)
			return NULL;
		ko.role &= ~((o->spdk_host ? NTP_ROLE_HOST : 0) | (o->spdk_target ? NTP_ROLE_TARGET : 0));
		if (!ko.role) {
			c = calloc(1, sizeof(*c));
			if (!c) {
				ntp_spdk_close(sp);
				snprintf(errbuf, errlen, "out of memory");
				return NULL;
			}
			c->o = *o;
			c->spdk = sp;
			return c;
		}
	}
	c = kernel_open(&ko, errbuf, errlen);
	if (!c) {
		ntp_spdk_close(sp);
		return NULL;
	}
	c->o = *o;
	c->spdk = sp;
	return c;
}

static struct ntp_collector *kernel_open(const struct ntp_collector_opts *o, char *errbuf, size_t errlen)
{
	unsigned sides = role_sides(o->role);
	char why_fe[512] = "", miss_fe[384], miss_kp[384], nobtf[128], btf[4096];
	struct ntp_collector *c;
	struct ntp_kernel k;
	double timeout = o->attach_timeout_s > 0 ? o->attach_timeout_s : 10;

	libbpf_set_print(libbpf_quiet);
	ntp_kernel_probe(&k);
	if (check_prereqs(o, &k, nobtf, sizeof(nobtf), btf, sizeof(btf), errbuf, errlen)) {
		ntp_hooks_cleanup();
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	c->o = *o;
	snprintf(c->btf, sizeof(c->btf), "%s", btf);
	c->atomic_fetch = k.atomic_fetch;
	if ((o->role != NTP_ROLE_TARGET && resolve_session(c, o->session, errbuf, errlen)) ||
	    ntp_target_session_dev(o, "", c->tdev, errbuf, errlen) < 0) {
		free(c);
		return NULL;
	}

	missing_hooks(sides, o->transport, true, miss_fe, sizeof(miss_fe));
	missing_hooks(sides, o->transport, false, miss_kp, sizeof(miss_kp));
	if (!k.kprobes)
		snprintf(miss_kp, sizeof(miss_kp), "this kernel has no kprobes (%s)", NTP_NO_KPROBES_WHY);

	if (o->btf_path && !nobtf[0])
		say(o, "--btf %s not used: every module has BTF of its own", o->btf_path);
	if (nobtf[0]) {
		/* fentry/fexit and tp_btf name their target by its BTF id in the
		 * kernel's own BTF: a file serves CO-RE, never attaching */
		if (o->flavour == NTP_FLAVOUR_FENTRY) {
			snprintf(errbuf, errlen, "--fentry: no module BTF for %s, so fentry/fexit and tp_btf cannot "
				 "attach to their functions and tracepoints (a --btf file serves CO-RE only)", nobtf);
			goto fail;
		}
		if (miss_kp[0]) {
			snprintf(errbuf, errlen, "no module BTF for %s, so kprobes are needed, and %s%s", nobtf,
				 k.kprobes ? "these are missing: " : "", miss_kp);
			goto fail;
		}
		say(o, "no module BTF for %s: fentry/fexit and tp_btf cannot attach to module code; "
		    "using kprobes and raw_tp, NVMe types from %s", nobtf, c->btf);
	} else if (o->flavour != NTP_FLAVOUR_KPROBE) {
		if (miss_fe[0])
			snprintf(why_fe, sizeof(why_fe), "no BTF for %s", miss_fe);
		else if (try_flavour(c, true, timeout, why_fe, sizeof(why_fe)) == 0)
			goto attached;
		if (o->flavour == NTP_FLAVOUR_FENTRY) {
			snprintf(errbuf, errlen, "--fentry: fentry/fexit cannot attach: %s", why_fe);
			goto fail;
		}
		if (miss_kp[0]) {
			snprintf(errbuf, errlen, "fentry/fexit cannot attach (%s), and kprobes cannot either (%s)",
				 why_fe, !k.kprobes ? miss_kp : "missing symbols");
			if (k.kprobes)
				snprintf(errbuf, errlen, "fentry/fexit cannot attach (%s); kprobes: missing %s", why_fe,
					 miss_kp);
			goto fail;
		}
		say(o, "fentry/fexit cannot attach now: %s; using kprobes", why_fe);
	} else if (miss_kp[0]) {
		snprintf(errbuf, errlen, "--kprobes: %s%s", k.kprobes ? "missing " : "", miss_kp);
		goto fail;
	}
	{
		char why_kp[512] = "";

		/* The timeout is the fentry policy's; kprobes are the last resort,
		 * so they get at least a minute before giving up. */
		if (try_flavour(c, false, timeout > 60 ? timeout : 60, why_kp, sizeof(why_kp))) {
			snprintf(errbuf, errlen, "kprobes: %s", why_kp);
			goto fail;
		}
	}
attached:
	for (size_t i = 0; i < ntp_n_hooks; i++) {
		const char *orig = ntp_hook_stands_in_for(&ntp_hooks[i]);

		if (ntp_hook_used(&ntp_hooks[i], sides, o->transport) && ntp_hooks[i].lost && !c->hook_state[i] &&
		    !stand_in_attached(c, ntp_hooks[i].target))
			say(o, "%s is not on this kernel (inlined or renamed): %s", ntp_hooks[i].target,
			    ntp_hooks[i].lost);
		if (orig && c->hook_state[i] == 1)
			say(o, "%s is not on this kernel (inlined): its caller's call to %s stands in for it",
			    orig, ntp_hooks[i].target);
	}
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_sample, c, NULL);
	if (!c->rb) {
		snprintf(errbuf, errlen, "cannot open the BPF ring buffer: %s", strerror(errno));
		unload(c, false);
		goto fail;
	}
	say(o, "hooks: %s (%d programs loaded in %.1f s, attached in %.1f s)",
	    c->fentry ? "fentry/fexit" : "kprobe/kretprobe", c->n_links, c->load_s, c->attach_s);
	return c;
fail:
	ntp_hooks_cleanup();
	free(c);
	return NULL;
}

int ntp_collector_poll(struct ntp_collector *c, int timeout_ms, ntp_record_cb cb, void *ctx)
{
	int err, spdk_seen = 0;

	c->cb = cb;
	c->cb_ctx = ctx;
	c->seen = 0;
	if (c->spdk) {
		if (!c->skel && timeout_ms > 0) {
			struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);	/* a signal ends it early, as it would a poll */
		}
		spdk_seen = ntp_spdk_poll(c->spdk, cb, ctx);
		if (spdk_seen < 0)
			return spdk_seen;
		if (!c->skel)
			return spdk_seen;
	}
	/* The programs do not wake us per record (BPF_RB_NO_WAKEUP, a cost on
	 * the I/O path), so the wait usually runs to its timeout: consume then. */
	err = ring_buffer__poll(c->rb, timeout_ms);
	if (err < 0 && err != -EINTR)
		return err;
	err = ring_buffer__consume(c->rb);
	if (err < 0 && err != -EINTR)
		return err;
	return c->seen + spdk_seen;
}

/* The row of out[0..*n) for key, the paths of one namespace being one
 * group (ntp_dev_normalize); a new zeroed row if none has it yet, NULL when
 * out is full. */
static struct ntp_total *total_row(struct ntp_total *out, size_t *n, size_t max,
				   const struct ntp_group_key *key)
{
	struct ntp_group_key k = *key;

	ntp_dev_normalize(k.dev);
	for (size_t j = 0; j < *n; j++)
		if (!memcmp(&out[j].key, &k, sizeof(k)))
			return &out[j];
	if (*n == max)
		return NULL;
	memset(&out[*n], 0, sizeof(out[*n]));
	out[*n].key = k;
	return &out[(*n)++];
}

/* Adds a key's per-CPU values (ncpu of them) to its row. */
typedef void (*ntp_total_add_fn)(struct ntp_total *t, const void *vals, int ncpu);

/* Each key of the per-CPU hash fd (value_size bytes per CPU), its values
 * added to its row by add. */
static size_t hash_totals(int fd, size_t value_size, ntp_total_add_fn add, struct ntp_total *out,
			  size_t n, size_t max)
{
	int ncpu = libbpf_num_possible_cpus();
	struct ntp_group_key key, next, *prev = NULL;
	struct ntp_total *t;
	void *vals;

	if (ncpu <= 0 || !(vals = calloc(ncpu, value_size)))
		return n;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, vals) && (t = total_row(out, &n, max, &key)))
			add(t, vals, ncpu);
	}
	free(vals);
	return n;
}

static void add_counts(struct ntp_total *t, const void *vals, int ncpu)
{
	const struct ntp_group_count *v = vals;

	for (int i = 0; i < ncpu; i++) {
		t->count.commands += v[i].commands;
		t->count.bytes += v[i].bytes;
	}
}

/* --exact-queues: the stage sums of group_occ (a key without a count gets
 * its own row) */
static void add_occ(struct ntp_total *t, const void *vals, int ncpu)
{
	const struct ntp_group_occ *v = vals;

	for (int i = 0; i < ncpu; i++) {
		t->occ.summed += v[i].summed;
		t->occ.incomplete += v[i].incomplete;
		for (int s = 0; s < NTP_OCC_SLOTS; s++)
			t->occ.ns[s] += v[i].ns[s];
	}
}

/* The counts of the group slots (struct ntp_cpu_state, count_group in
 * bpf/ntprof_common.bpf.h): each CPU's owned slots, added to the rows of
 * their keys, every CPU's state in one lookup. A slot being claimed has
 * counted nothing yet. */
static size_t slot_totals(struct ntp_collector *c, struct ntp_total *out, size_t n, size_t max)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(c->skel->maps.cpu_state);
	struct ntp_cpu_state *vals;
	struct ntp_total *t;
	__u32 zero = 0;

	_Static_assert(sizeof(struct ntp_cpu_state) % 8 == 0, "a per-CPU value's stride is its size");
	if (ncpu <= 0 || !(vals = calloc(ncpu, sizeof(*vals))))
		return n;
	if (!bpf_map_lookup_elem(fd, &zero, vals))
		for (int cpu = 0; cpu < ncpu; cpu++)
			for (int i = 0; i < NTP_GROUP_SLOTS; i++) {
				const struct ntp_group_slot *s = &vals[cpu].slot[i];

				if (s->state == NTP_GROUP_SLOT_OWNED && (t = total_row(out, &n, max, &s->key)))
					add_counts(t, &s->count, 1);
			}
	free(vals);
	return n;
}

int ntp_collector_totals(struct ntp_collector *c, struct ntp_total *out, size_t max)
{
	size_t n;

	/* SPDK counts no unsampled command: its groups' rates are estimated */
	if (!c->skel)
		return 0;
	n = hash_totals(bpf_map__fd(c->skel->maps.group_counts), sizeof(struct ntp_group_count), add_counts,
			out, 0, max);
	n = slot_totals(c, out, n, max);
	if (c->o.exact_queues)
		n = hash_totals(bpf_map__fd(c->skel->maps.group_occ), sizeof(struct ntp_group_occ), add_occ,
				out, n, max);
	return (int)n;
}

static uint64_t stat_sum(struct ntp_collector *c, uint32_t idx)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, sum = 0;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stats), &idx, v) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

uint64_t ntp_collector_lost(struct ntp_collector *c)
{
	uint64_t lost = 0, bad;

	if (c->spdk)
		ntp_spdk_counters(c->spdk, &lost, &bad);
	return lost + (c->skel ? stat_sum(c, 0) : 0);
}

void ntp_collector_stop(struct ntp_collector *c, ntp_record_cb cb, void *ctx)
{
	if (!c || !c->spdk)
		return;
	ntp_spdk_stop(c->spdk, cb, ctx);
	/* Kernel and SPDK in one recording: the kernel's half of a command
	 * that the SPDK wait let finish (a kernel host completes after its
	 * SPDK target) reached the ring during the wait; take it too. */
	if (c->skel) {
		c->cb = cb;
		c->cb_ctx = ctx;
		ring_buffer__consume(c->rb);
	}
}

/* The kernel's count of the skipped runs of every loaded program. The
 * kernel copies as much of struct bpf_prog_info as both it and we know and
 * says how much in info_len: a kernel before 5.12 stops short of
 * recursion_misses, whose zeroed field is then not read. */
static void skipped_runs(struct ntp_collector *c, struct ntp_collector_counters *out)
{
	const size_t need = offsetof(struct bpf_prog_info, recursion_misses) + sizeof(__u64);
	struct bpf_program *p;

	bpf_object__for_each_program(p, c->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0)
			continue;	/* not loaded: not one of this run's hooks */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || len < need)
			continue;
		out->skipped += info.recursion_misses;
		if (info.recursion_misses > out->skipped_most_n) {
			out->skipped_most_n = info.recursion_misses;
			snprintf(out->skipped_most, sizeof(out->skipped_most), "%s", bpf_program__name(p));
		}
	}
}

uint64_t ntp_collector_skipped(struct ntp_collector *c)
{
	struct ntp_collector_counters cnt;

	memset(&cnt, 0, sizeof(cnt));
	if (c->skel)
		skipped_runs(c, &cnt);
	return cnt.skipped;
}

void ntp_collector_counters(struct ntp_collector *c, struct ntp_collector_counters *out)
{
	uint64_t spdk_lost = 0;

	memset(out, 0, sizeof(*out));
	if (c->spdk) {
		ntp_spdk_counters(c->spdk, &spdk_lost, &out->spdk_bad);
		out->spdk_lost_stop = ntp_spdk_stop_lost(c->spdk);
		out->spdk_lost_ring = spdk_lost - out->spdk_lost_stop;
	}
	if (!c->skel)
		return;
	out->lost = stat_sum(c, 0);
	out->missed_host = stat_sum(c, 1);
	out->missed_target = stat_sum(c, 2);
	out->table_full = stat_sum(c, 3);
	skipped_runs(c, out);
}

int ntp_collector_set_sampling(struct ntp_collector *c, uint32_t n)
{
	if (c && c->spdk) {
		int e = ntp_spdk_set_sampling(c->spdk, n);

		if (e || !c->skel) {
			c->o.sampling = n;
			return e;
		}
	}
	if (!c || !c->skel || !c->skel->data)
		return -EINVAL;
	/* .data is mmapped: the running programs read the new value at once */
	__atomic_store_n(&c->skel->data->sampling_n, n ? n : 1, __ATOMIC_RELAXED);
	c->o.sampling = n;
	return 0;
}

const char *ntp_collector_btf_file(const struct ntp_collector *c)
{
	return c->btf;
}

bool ntp_collector_uses_fentry(const struct ntp_collector *c)
{
	return c->fentry;
}

int ntp_collector_hook_state(const struct ntp_collector *c, size_t i)
{
	return i < ntp_n_hooks ? c->hook_state[i] : 0;
}

void ntp_collector_close(struct ntp_collector *c)
{
	if (!c)
		return;
	ntp_spdk_close(c->spdk);
	if (!c->skel) {
		free(c);
		return;
	}
	ring_buffer__free(c->rb);
	unload(c, false);
	ntp_hooks_cleanup();
	free(c);
}
