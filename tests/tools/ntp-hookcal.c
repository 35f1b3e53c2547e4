// SPDX-License-Identifier: GPL-2.0
/*
 * ntp-hookcal: calibration programs for the hook-cost bench (bench/hook_cost.sh,
 * docs/performance.md). Under TCG every time is many times that of a real
 * CPU; what carries over is a ratio to something measured in the same guest:
 *
 *   ntp-hookcal hooks [-t tcp|rdma] [-r host|target|both]
 *       attaches, on every function and tracepoint ntprof would hook for that
 *       recording (src/collector/hooks.c's table and choice, both flavours),
 *       an empty program (cal_fe_empty, cal_fx_empty, cal_tp_empty,
 *       cal_kp_empty, cal_kr_empty, cal_rt_empty) and, at function entries,
 *       one doing a single hash-map lookup that misses (cal_fe_lookup,
 *       cal_kp_lookup); prints "ntp-hookcal: attached N" and waits for
 *       SIGINT/SIGTERM. The kernel's bpf_stats of these programs, read under
 *       the same load as ntprof's, are the units.
 *   ntp-hookcal syscall [-n N]
 *       the per-call cost of a hook including its dispatch (which bpf_stats
 *       do not see): N getpgid() calls bare, then with an empty fentry, an
 *       empty kprobe, and a one-lookup fentry on the syscall's function; the
 *       same measurement as the kernel's own trigger benchmarks
 *       (tools/testing/selftests/bpf/benchs/bench_trigger.c), whose published
 *       figures for real CPUs docs/performance.md cites. Last line:
 *       ntp-hookcal: syscall_ns=X fentry_ns=X kprobe_ns=X fentry_lookup_ns=X
 *       (the hooks' figures are the extra ns per call over the bare one;
 *       each the least of 10 chunks of N/10 calls).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "collector/hooks.h"
#include "ntprof_event.h"
#include "ntprof_calib.skel.h"

#if defined(__x86_64__)
#define SYS_GETPGID_FN "__x64_sys_getpgid"
#elif defined(__aarch64__)
#define SYS_GETPGID_FN "__arm64_sys_getpgid"
#else
#define SYS_GETPGID_FN "sys_getpgid"
#endif

#define MAX_OBJS 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ntp-hookcal hooks [-t tcp|rdma] [-r host|target|both]\n"
		   "       ntp-hookcal syscall [-n CALLS]\n");
}

/* One skeleton instance with only the named programs loaded, each attached to
 * target (fentry/fexit/tp_btf: fixed at load, hence one instance per target). */
static struct ntprof_calib_bpf *open_with(const char *target, struct bpf_program **want, int n_want,
					  struct ntprof_calib_bpf **skel_out)
{
	struct ntprof_calib_bpf *s = ntprof_calib_bpf__open();
	struct bpf_program *p;

	*skel_out = NULL;
	if (!s)
		return NULL;
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, false);
	for (int i = 0; i < n_want; i++) {
		/* want[] names programs of a template instance: find ours by name */
		p = bpf_object__find_program_by_name(s->obj, bpf_program__name(want[i]));
		if (!p)
			goto fail;
		bpf_program__set_autoload(p, true);
		if (target && bpf_program__set_attach_target(p, 0, target))
			goto fail;
	}
	if (ntprof_calib_bpf__load(s))
		goto fail;
	*skel_out = s;
	return s;
fail:
	ntprof_calib_bpf__destroy(s);
	return NULL;
}

struct attached {
	struct ntprof_calib_bpf *objs[MAX_OBJS];
	int n_objs;
	struct bpf_link *links[4 * MAX_OBJS];
	int n_links;
};

static void detach_all(struct attached *a)
{
	for (int i = 0; i < a->n_links; i++)
		bpf_link__destroy(a->links[i]);
	for (int i = 0; i < a->n_objs; i++)
		ntprof_calib_bpf__destroy(a->objs[i]);
	a->n_links = a->n_objs = 0;
}

static int add_link(struct attached *a, struct bpf_link *l, const char *what, const char *target)
{
	if (!l) {
		fprintf(stderr, "ntp-hookcal: %s on %s: %s (skipped)\n", what, target, strerror(errno));
		return 0;
	}
	if (a->n_links >= (int)(sizeof(a->links) / sizeof(a->links[0]))) {
		bpf_link__destroy(l);
		return 0;
	}
	a->links[a->n_links++] = l;
	return 1;
}

/* The trampoline flavour's programs on one target: an instance of their own. */
static int attach_btf_progs(struct attached *a, struct ntprof_calib_bpf *tmpl, const char *target,
			    enum ntp_hook_kind kind)
{
	struct bpf_program *want[2];
	struct ntprof_calib_bpf *s;
	int n = 0, got = 0;

	if (a->n_objs >= MAX_OBJS)
		return 0;
	if (kind == NTP_HOOK_ENTRY) {
		want[n++] = tmpl->progs.cal_fe_empty;
		want[n++] = tmpl->progs.cal_fe_lookup;
	} else if (kind == NTP_HOOK_EXIT) {
		want[n++] = tmpl->progs.cal_fx_empty;
	} else {
		want[n++] = tmpl->progs.cal_tp_empty;
	}
	if (!open_with(target, want, n, &s)) {
		fprintf(stderr, "ntp-hookcal: cannot load the %s programs for %s (skipped)\n",
			kind == NTP_HOOK_TP ? "tp_btf" : kind == NTP_HOOK_EXIT ? "fexit" : "fentry", target);
		return 0;
	}
	a->objs[a->n_objs++] = s;
	if (kind == NTP_HOOK_ENTRY) {
		got += add_link(a, bpf_program__attach(s->progs.cal_fe_empty), "fentry", target);
		got += add_link(a, bpf_program__attach(s->progs.cal_fe_lookup), "fentry", target);
	} else if (kind == NTP_HOOK_EXIT) {
		got += add_link(a, bpf_program__attach(s->progs.cal_fx_empty), "fexit", target);
	} else {
		got += add_link(a, bpf_program__attach(s->progs.cal_tp_empty), "tp_btf", target);
	}
	return got;
}

static int attach_kprobe_progs(struct attached *a, struct ntprof_calib_bpf *kp, const char *target,
			       enum ntp_hook_kind kind)
{
	int got = 0;

	if (kind == NTP_HOOK_ENTRY) {
		got += add_link(a, bpf_program__attach_kprobe(kp->progs.cal_kp_empty, false, target), "kprobe",
				target);
		got += add_link(a, bpf_program__attach_kprobe(kp->progs.cal_kp_lookup, false, target), "kprobe",
				target);
	} else if (kind == NTP_HOOK_EXIT) {
		got += add_link(a, bpf_program__attach_kprobe(kp->progs.cal_kr_empty, true, target), "kretprobe",
				target);
	} else {
		got += add_link(a, bpf_program__attach_raw_tracepoint(kp->progs.cal_rt_empty, target), "raw_tp",
				target);
	}
	return got;
}

static int cmd_hooks(int argc, char **argv)
{
	unsigned sides = NTP_HOOK_HOST | NTP_HOOK_TARGET, transport = NTP_TRANSPORT_TCP;
	static struct attached a;
	struct ntprof_calib_bpf *kp = NULL;
	struct bpf_program *kwant[4];
	int c, got = 0;

	while ((c = getopt(argc, argv, "t:r:")) != -1) {
		if (c == 't' && !strcmp(optarg, "tcp"))
			transport = NTP_TRANSPORT_TCP;
		else if (c == 't' && !strcmp(optarg, "rdma"))
			transport = NTP_TRANSPORT_RDMA;
		else if (c == 'r' && !strcmp(optarg, "host"))
			sides = NTP_HOOK_HOST;
		else if (c == 'r' && !strcmp(optarg, "target"))
			sides = NTP_HOOK_TARGET;
		else if (c == 'r' && !strcmp(optarg, "both"))
			sides = NTP_HOOK_HOST | NTP_HOOK_TARGET;
		else {
			fprintf(stderr, "ntp-hookcal: -%c %s: expected -t tcp|rdma, -r host|target|both\n", c,
				optarg ? optarg : "");
			return 2;
		}
	}
	/* the kprobe flavour: one instance, attached to every target */
	{
		struct ntprof_calib_bpf *tmpl = ntprof_calib_bpf__open();

		if (!tmpl) {
			fprintf(stderr, "ntp-hookcal: cannot open the calibration object: %s\n", strerror(errno));
			return 1;
		}
		kwant[0] = tmpl->progs.cal_kp_empty;
		kwant[1] = tmpl->progs.cal_kp_lookup;
		kwant[2] = tmpl->progs.cal_kr_empty;
		kwant[3] = tmpl->progs.cal_rt_empty;
		if (!open_with(NULL, kwant, 4, &kp))
			fprintf(stderr, "ntp-hookcal: cannot load the kprobe programs (kprobe flavour skipped)\n");
		else
			a.objs[a.n_objs++] = kp;
		for (size_t i = 0; i < ntp_n_hooks; i++) {
			const struct ntp_hook *h = &ntp_hooks[i];

			if (!ntp_hook_used(h, sides, transport))
				continue;
			if (ntp_hook_wanted(h, true))
				got += attach_btf_progs(&a, tmpl, h->target, h->kind);
			if (kp && ntp_hook_wanted(h, false))
				got += attach_kprobe_progs(&a, kp, h->target, h->kind);
		}
		ntprof_calib_bpf__destroy(tmpl);
	}
	printf("ntp-hookcal: attached %d\n", got);
	fflush(stdout);
	while (!stop)
		pause();
	detach_all(&a);
	return got ? 0 : 1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double syscall_ns1(long n)
{
	double t0 = now_s();

	for (long i = 0; i < n; i++)
		syscall(SYS_getpgid, 0);
	return (now_s() - t0) * 1e9 / n;
}

/* The least of 10 chunks of n/10 calls: the guest is a process on a shared
 * machine, and whatever else runs there only ever adds time. */
static double syscall_ns(long n)
{
	double best = 0;

	for (int i = 0; i < 10; i++) {
		double ns = syscall_ns1(n / 10);

		if (i == 0 || ns < best)
			best = ns;
	}
	return best;
}

/* ns per getpgid() with prog attached (entry of the syscall's function) */
static double with_prog(struct bpf_program *prog, bool kprobe, long n)
{
	struct bpf_link *l = kprobe ? bpf_program__attach_kprobe(prog, false, SYS_GETPGID_FN) :
				      bpf_program__attach(prog);
	double ns;

	if (!l) {
		fprintf(stderr, "ntp-hookcal: %s on %s: %s\n", bpf_program__name(prog), SYS_GETPGID_FN,
			strerror(errno));
		return -1;
	}
	syscall_ns1(n / 10);	/* warm up: TCG translates the code anew */
	ns = syscall_ns(n);
	bpf_link__destroy(l);
	return ns;
}

static int cmd_syscall(int argc, char **argv)
{
	struct ntprof_calib_bpf *s = ntprof_calib_bpf__open();
	long n = 200000;
	double b0, b1, fe, kp, fl, base;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n' || (n = strtol(optarg, NULL, 10)) < 1000) {
			fprintf(stderr, "ntp-hookcal: -n: a number of calls >= 1000\n");
			ntprof_calib_bpf__destroy(s);
			return 2;
		}
	}
	if (!s) {
		fprintf(stderr, "ntp-hookcal: cannot open the calibration object: %s\n", strerror(errno));
		return 1;
	}
	bpf_program__set_autoload(s->progs.cal_fx_empty, false);
	bpf_program__set_autoload(s->progs.cal_tp_empty, false);
	bpf_program__set_autoload(s->progs.cal_kr_empty, false);
	bpf_program__set_autoload(s->progs.cal_rt_empty, false);
	bpf_program__set_autoload(s->progs.cal_kp_lookup, false);
	if (bpf_program__set_attach_target(s->progs.cal_fe_empty, 0, SYS_GETPGID_FN) ||
	    bpf_program__set_attach_target(s->progs.cal_fe_lookup, 0, SYS_GETPGID_FN) ||
	    ntprof_calib_bpf__load(s)) {
		fprintf(stderr, "ntp-hookcal: cannot load the calibration programs for %s\n", SYS_GETPGID_FN);
		ntprof_calib_bpf__destroy(s);
		return 1;
	}
	syscall_ns1(n / 10);
	b0 = syscall_ns(n);
	fe = with_prog(s->progs.cal_fe_empty, false, n);
	kp = with_prog(s->progs.cal_kp_empty, true, n);
	fl = with_prog(s->progs.cal_fe_lookup, false, n);
	b1 = syscall_ns(n);
	ntprof_calib_bpf__destroy(s);
	if (fe < 0 || kp < 0 || fl < 0)
		return 1;
	base = b0 < b1 ? b0 : b1;
	printf("ntp-hookcal: calls=%ld syscall_ns=%.1f fentry_ns=%.1f kprobe_ns=%.1f fentry_lookup_ns=%.1f\n", n,
	       base, fe - base, kp - base, fl - base);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	libbpf_set_print(quiet_print);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!strcmp(argv[1], "hooks"))
		return cmd_hooks(argc - 1, argv + 1);
	if (!strcmp(argv[1], "syscall"))
		return cmd_syscall(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "ntp-hookcal: unknown command %s\n", argv[1]);
	usage(stderr);
	return 2;
}
