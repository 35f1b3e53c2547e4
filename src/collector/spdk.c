// SPDX-License-Identifier: GPL-2.0
/*
 * spdk.c - records from SPDK processes patched with spdk/ntprof-usdt.patch.
 *
 * Per side, the binary and the shared libraries it loads are searched for
 * the probes of provider "ntprof" (with Debian's DPDK, SPDK links shared
 * libraries and its probes live in build/lib/libspdk_*.so). The USDT program
 * of the side is attached per process (libbpf's bpf_program__attach_usdt with
 * that pid), so two recorders of two SPDK programs on one machine that share
 * a library see each only their own; a process started later is picked up
 * at the next rescan, about a second later. Then the process's sampling
 * variable is set to -s N; it goes back to 0 when the recording stops.
 *
 * Over TCP the kernel socket calls of the recorded processes are hooked too
 * (bpf/ntprof_spdk_sock.bpf.h), in one flavour chosen before load: fentry
 * when the kernel can attach it, else kprobes, else none (the receive paths
 * are then not split, and record says so). The hooks filter on the recorded
 * processes' ids (map spdk_pids, kept here as processes come and go).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hooks.h"
#include "say.h"
#include "core/clock.h"
#include "../../bpf/ntprof_spdk.h"
#include "ntprof_spdk.skel.h"
#include "spdk.h"
#include "spdk_proc.h"

#define MAX_FILES 1024
#define MAX_LINKS_PER_PROC 8
/* The stop's bound (spdk.h): a command that takes a second on its side is
 * an error's recovery, not a measurement, and a stop must not hang on a
 * qpair torn down with sampled commands in it. */
#define STOP_WAIT_MS NTP_SPDK_STOP_WAIT_MS
#define OLD_GRACE_MS NTP_SPDK_OLD_GRACE_MS
/* A record whose first stamp is this long before the recorder set the
 * sampling variable is an earlier recording's (earlier()). */
#define EARLIER_NS (STOP_WAIT_MS / 2 * 1000000ull)

/* Why a process's ntprof_inflight is not read (arm()'s message). */
enum { FLIGHT_OK, FLIGHT_NONE, FLIGHT_SIZE, FLIGHT_IO };

struct sproc {
	pid_t pid;
	int side;			/* 0 host, 1 target */
	uint64_t addr;
	bool shared;			/* the process is also the other side's (an SPDK program
					 * that is host and target): that entry holds the lock
					 * and writes the variable */
	bool armed;			/* the variable holds -s (written by arm()) */
	uint64_t flight_addr;		/* its ntprof_inflight (the entry that holds the
					 * lock); 0: not read (flight_why) */
	int flight_why;			/* FLIGHT_*: why flight_addr is 0 */
	int flight_errno;		/* FLIGHT_IO: the failed read's or write's */
	bool flight_wrote;		/* FLIGHT_IO: the write of 0 (settle()) failed */
	bool earlier_ok;		/* earlier recordings' commands may be in its base */
	uint64_t flight_size;		/* FLIGHT_SIZE: the symbol's size */
	int64_t flight_base;		/* begun - done at arm() that is not this recording's:
					 * lowered by one for every earlier recording's record
					 * handed over since (earlier()) */
	int64_t settle_kept;		/* of those, records of a killed recorder handed over
					 * during settle(), before the base was taken: kept */
	uint64_t armed_ns;		/* when arm() wrote -s (CLOCK_MONOTONIC) */
	int64_t flight_left;		/* at the stop: still in flight */
	int flight_zero;		/* at the stop: consecutive looks with none in flight */
	int lock_fd;
	struct bpf_link *links[MAX_LINKS_PER_PROC];
	int n_links;
};

struct ntp_spdk {
	struct ntp_spdk_opts o;
	struct ntprof_spdk_bpf *skel;
	struct ring_buffer *rb;
	char *files[2][MAX_FILES];	/* per side: binary and libraries */
	int n_files[2];
	char *probe_files[2][MAX_FILES];	/* those with the side's probe (not owned) */
	bool probe_nop5[2][MAX_FILES];		/* ... attached through its 5-byte twin */
	char probe5[2][NTP_USDT_NAME];		/* the side's probe name with "_nop5" */
	int n_probe_files[2];
	struct sproc procs[NTP_SPDK_MAX_PROCS];
	int n_procs;
	double last_scan;
	ntp_spdk_record_cb cb;
	void *cb_ctx;
	int seen;
	const char *sock_flavour;	/* "fentry", "kprobe", NULL: socket calls not hooked */
	char sock_why[256];
	struct bpf_link *sock_links[3];
	int ts_fd;			/* asks the kernel for receive timestamps */
	bool stopped;			/* ntp_spdk_stop() has run */
	bool said_old;			/* an older patch's grace said */
	bool any_nop5;			/* a probe attached through its 5-byte twin */
	uint64_t flight_lost;		/* sampled commands in flight past the stop's wait */
	uint64_t earlier;		/* earlier recordings' records handed over during this
					 * one: not recorded */
};

bool ntp_spdk_twins_wanted(void)
{
	return ntp_uprobes_optimized() && !getenv("NTPROF_NO_NOP5");
}

const char *ntp_spdk_probe_name(unsigned side, unsigned transport)
{
	bool rdma = transport == NTP_TRANSPORT_RDMA;

	if (side == NTP_SIDE_TARGET)
		return rdma ? "nvmf_rdma_done" : "nvmf_tcp_done";
	return rdma ? "nvme_rdma_done" : "nvme_tcp_done";
}

static bool has_file(char **f, int n, const char *p)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(f[i], p))
			return true;
	return false;
}

/* The libraries running processes of bin have mapped (they may come from
 * where the static search does not look: LD_LIBRARY_PATH of that process). */
static int add_mapped(pid_t pid, char **files, int n, int max)
{
	char p[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/maps", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return n;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file || !strstr(line, " r-xp ") || strstr(line, " (deleted)"))
			continue;
		file[strcspn(file, "\n")] = 0;
		if (!has_file(files, n, file) && (files[n] = strdup(file)))
			n++;
	}
	fclose(f);
	return n;
}

static int gather(const char *bin, char **files, int max, pid_t *pids, int *n_pids)
{
	int n = ntp_elf_closure(bin, files, max);

	*n_pids = ntp_spdk_pids(bin, pids, NTP_SPDK_MAX_PROCS);
	if (*n_pids < 0)
		*n_pids = 0;
	for (int i = 0; i < *n_pids; i++)
		n = add_mapped(pids[i], files, n, max);
	return n;
}

static int count_probes(char **files, int n, struct ntp_usdt_count *out)
{
	int np = 0;

	for (int i = 0; i < n; i++) {
		int r = ntp_elf_usdt(files[i], NTP_SPDK_PROVIDER, out, np, NTP_USDT_MAX);

		if (r > 0)
			np = r;
	}
	return np;
}

/* Why BIN cannot be read, by errno: a number that names no file is said to
 * be taken for a process id, which BIN is not (docs/spdk.md) */
static const char *bin_why(const char *bin, int e, char *buf, size_t len)
{
	if (e == ENOENT && bin[0] && strspn(bin, "0123456789") == strlen(bin))
		snprintf(buf, len, "no such file (BIN is the SPDK program's file, e.g. build/bin/nvmf_tgt; "
			 "its processes are found by it, not given by process id)");
	else
		snprintf(buf, len, "%s", strerror(e));
	return buf;
}

int ntp_spdk_inspect(const char *bin, struct ntp_spdk_info *info, char *err, size_t errlen)
{
	char *files[MAX_FILES];
	int n;

	memset(info, 0, sizeof(*info));
	if (access(bin, R_OK)) {
		char why[200];

		snprintf(err, errlen, "%s: %s", bin, bin_why(bin, errno, why, sizeof(why)));
		return -1;
	}
	n = gather(bin, files, MAX_FILES, info->pids, &info->n_pids);
	info->n_probes = count_probes(files, n, info->probes);
	for (int i = 0; i < info->n_pids; i++) {
		char lib[PATH_MAX];

		uint64_t size = 0;

		if (ntp_spdk_var_addr(info->pids[i], NTP_SPDK_SAMPLE_VAR, files, n, &info->var_addr[i], lib,
				      sizeof(lib)))
			info->var_addr[i] = 0;
		if (ntp_spdk_sym_addr(info->pids[i], NTP_SPDK_FLIGHT_VAR, files, n, &info->flight_addr[i], &size,
				      lib, sizeof(lib)))
			info->flight_addr[i] = 0;
		else if (size != sizeof(struct ntp_spdk_flight))
			info->flight_size[i] = size;
	}
	for (int i = 0; i < n; i++)
		free(files[i]);
	return 0;
}

static struct bpf_program *side_prog(struct ntp_spdk *s, int side)
{
	bool rdma = s->o.transport == NTP_TRANSPORT_RDMA;

	if (side == 1)
		return rdma ? s->skel->progs.ntp_u_nvmf_rdma_done : s->skel->progs.ntp_u_nvmf_tcp_done;
	return rdma ? s->skel->progs.ntp_u_nvme_rdma_done : s->skel->progs.ntp_u_nvme_tcp_done;
}

/* The socket hooks look at the recorded processes only. */
static void pid_map(struct ntp_spdk *s, pid_t pid, bool add)
{
	__u32 k = (__u32)pid;
	__u8 one = 1;

	if (!s->sock_flavour)
		return;
	if (add)
		bpf_map_update_elem(bpf_map__fd(s->skel->maps.spdk_pids), &k, &one, BPF_ANY);
	else
		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.spdk_pids), &k);
}

/*
 * begun - done of a process's ntprof_inflight, summed over its slots
 * (bpf/ntprof_spdk.h): its sampled commands in flight, plus those that will
 * never be handed over (freed without completing, before this recorder).
 * Each slot is written by its own thread while /proc/PID/mem copies it: the
 * sum is taken when two reads in a row agree. 0, or -1 (the process is gone).
 */
static int flight_read(pid_t pid, uint64_t addr, int64_t *out)
{
	struct ntp_spdk_flight f;
	int64_t prev = 0;

	for (int k = 0; k < 4; k++) {
		uint64_t b = 0, d = 0;

		if (ntp_spdk_mem_read(pid, addr, &f, sizeof(f)))
			return -1;
		for (int i = 0; i < NTP_SPDK_FLIGHT_SLOTS; i++) {
			b += f.slot[i].begun;
			d += f.slot[i].done;
		}
		*out = (int64_t)(b - d);
		if (k && *out == prev)
			break;
		prev = *out;
	}
	return 0;
}

static void drop_proc(struct ntp_spdk *s, int i, bool reset)
{
	struct sproc *p = &s->procs[i];
	bool other = false;

	for (int k = 0; k < s->n_procs; k++)
		other |= k != i && s->procs[k].pid == p->pid;
	if (!other)
		pid_map(s, p->pid, false);

	if (reset && p->addr && !p->shared && !s->o.test_only)
		ntp_spdk_var_write(p->pid, p->addr, 0);
	for (int k = 0; k < p->n_links; k++)
		bpf_link__destroy(p->links[k]);
	ntp_spdk_unlock(p->lock_fd);
	s->procs[i] = s->procs[--s->n_procs];
}

/* Attach to pid and take its variable (arm() sets it). 0; 1 when the process
 * has gone meanwhile (not an error); -1 with err. */
static int claim(struct ntp_spdk *s, int side, pid_t pid, char *err, size_t errlen)
{
	const char *bin = s->o.bin[side];
	const char *probe = ntp_spdk_probe_name(side ? NTP_SIDE_TARGET : NTP_SIDE_HOST, s->o.transport);
	struct sproc *p;
	char lib[PATH_MAX];
	pid_t holder;
	int other = -1;

	for (int i = 0; i < s->n_procs; i++)
		if (s->procs[i].pid == pid)
			other = i;
	if (s->n_procs == NTP_SPDK_MAX_PROCS) {
		snprintf(err, errlen, "%s: more than %d processes", bin, NTP_SPDK_MAX_PROCS);
		return -1;
	}
	p = &s->procs[s->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->side = side;
	p->lock_fd = -1;
	if (!s->o.test_only && other < 0) {
		p->lock_fd = ntp_spdk_lock(pid, &holder);
		if (p->lock_fd < 0) {
			if (errno == EWOULDBLOCK)
				snprintf(err, errlen, "process %d of %s: its sampling variable is held by another "
					 "ntprof recorder (%s%d): two recorders would overwrite each other's -s",
					 (int)pid, bin, holder ? "pid " : "pid unknown", holder ? (int)holder : 0);
			else
				snprintf(err, errlen, "%s/spdk-%d.lock: %s", getenv("NTPROF_LOCK_DIR") ?
					 getenv("NTPROF_LOCK_DIR") : NTP_SPDK_LOCK_DIR, (int)pid, strerror(errno));
			return -1;
		}
	}
	if (other >= 0) {
		p->addr = s->procs[other].addr;
		p->shared = true;
	} else if (ntp_spdk_var_addr(pid, NTP_SPDK_SAMPLE_VAR, s->probe_files[side], s->n_probe_files[side],
				     &p->addr, lib, sizeof(lib))) {
		ntp_spdk_unlock(p->lock_fd);
		if (kill(pid, 0))
			return 1;
		snprintf(err, errlen, "process %d of %s: no library it loads defines the sampling variable %s "
			 "(SPDK without ntprof's patch?)", (int)pid, bin, NTP_SPDK_SAMPLE_VAR);
		return -1;
	} else {
		uint64_t size = 0;

		if (ntp_spdk_sym_addr(pid, NTP_SPDK_FLIGHT_VAR, s->probe_files[side], s->n_probe_files[side],
				      &p->flight_addr, &size, lib, sizeof(lib))) {
			p->flight_addr = 0;
			p->flight_why = FLIGHT_NONE;
		} else if (size != sizeof(struct ntp_spdk_flight)) {
			p->flight_addr = 0;
			p->flight_why = FLIGHT_SIZE;
			p->flight_size = size;
		}
	}
	for (int i = 0; i < s->n_probe_files[side] && p->n_links < MAX_LINKS_PER_PROC; i++) {
		const char *name = s->probe_nop5[side][i] ? s->probe5[side] : probe;
		struct bpf_link *l = bpf_program__attach_usdt(side_prog(s, side), pid, s->probe_files[side][i],
							      NTP_SPDK_PROVIDER, name, NULL);

		if (!l) {
			int e = errno;

			/* a file the process does not map: another SPDK program's library */
			if (e == ENOENT || e == ESRCH)
				continue;
			for (int k = 0; k < p->n_links; k++)
				bpf_link__destroy(p->links[k]);
			ntp_spdk_unlock(p->lock_fd);
			if (kill(pid, 0))
				return 1;
			snprintf(err, errlen, "attaching USDT %s:%s in %s to process %d failed: %s",
				 NTP_SPDK_PROVIDER, name, s->probe_files[side][i], (int)pid, strerror(e));
			return -1;
		}
		p->links[p->n_links++] = l;
	}
	if (!p->n_links) {
		ntp_spdk_unlock(p->lock_fd);
		if (kill(pid, 0))
			return 1;
		snprintf(err, errlen, "process %d of %s maps no file with USDT %s:%s", (int)pid, bin,
			 NTP_SPDK_PROVIDER, probe);
		return -1;
	}
	s->n_procs++;
	pid_map(s, pid, true);
	return 0;
}

/* A take-over: the killed recorder's sampled commands may still be in
 * flight, and counted in the base they would make this recorder's stop
 * stop short. So 0 first, and they get the stop's bound: the base is taken
 * when begun - done is 0 (none in flight, none left over), else after
 * STOP_WAIT_MS. The records handed over meanwhile are this recording's
 * (settle_kept); what is still in flight then is an earlier recording's
 * (earlier()). 0; -1 (errno) when the write or a read failed. */
static int settle(struct sproc *p)
{
	uint64_t t0 = ntp_mono_ns();
	int64_t v0;

	if (ntp_spdk_var_write(p->pid, p->addr, 0) || flight_read(p->pid, p->flight_addr, &v0))
		return -1;
	p->flight_base = v0;
	while (p->flight_base > 0 && ntp_mono_ns() - t0 < STOP_WAIT_MS * 1000000ull) {
		struct timespec ms = { 0, 1000000L };

		nanosleep(&ms, NULL);
		if (flight_read(p->pid, p->flight_addr, &p->flight_base))
			return -1;
	}
	/* no command is sampled while the variable is 0: the difference was
	 * handed over */
	p->settle_kept = v0 > p->flight_base ? v0 - p->flight_base : 0;
	return 0;
}

/* The parent of pid from /proc/PID/stat; 0 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *e;
	int pp = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* the name, in parentheses, may hold anything: after the last ')' */
	if (fgets(buf, sizeof(buf), f) && (e = strrchr(buf, ')')) && sscanf(e + 1, " %*c %d", &pp) != 1)
		pp = 0;
	fclose(f);
	return (pid_t)pp;
}

/* A child forked by a process this recorder armed inherits its variable (this
 * recorder's -s) and its ntprof_inflight, the parent's commands in flight
 * included, which the child never hands over: not a killed recorder's. */
static bool forked(const struct ntp_spdk *s, const struct sproc *p, uint32_t old)
{
	pid_t pp;

	if (old != s->o.sampling || (pp = parent_of(p->pid)) <= 0)
		return false;
	for (int i = 0; i < s->n_procs; i++)
		if (s->procs[i].pid == pp && s->procs[i].armed)
			return true;
	return false;
}

static void say_no_flight(struct ntp_spdk *s, const struct sproc *p)
{
	const char *bin = s->o.bin[p->side];
	char what[256];

	if (p->flight_why == FLIGHT_SIZE)
		snprintf(what, sizeof(what), "its %s has %llu bytes, not %zu (another version of ntprof's SPDK patch)",
			 NTP_SPDK_FLIGHT_VAR, (unsigned long long)p->flight_size, sizeof(struct ntp_spdk_flight));
	else if (p->flight_why == FLIGHT_IO && p->flight_wrote)
		snprintf(what, sizeof(what), "writing 0 into %s through /proc/%d/mem (to take it over) failed (%s)",
			 NTP_SPDK_SAMPLE_VAR, (int)p->pid, strerror(p->flight_errno));
	else if (p->flight_why == FLIGHT_IO)
		snprintf(what, sizeof(what), "reading its %s through /proc/%d/mem failed (%s)", NTP_SPDK_FLIGHT_VAR,
			 (int)p->pid, strerror(p->flight_errno));
	else
		snprintf(what, sizeof(what), "has no %s (ntprof's older SPDK patch)", NTP_SPDK_FLIGHT_VAR);
	say(&s->o, "SPDK: process %d of %s %s: at the stop its sampled commands in flight get %d ms, and those "
	    "that take longer are neither recorded nor counted lost", (int)p->pid, bin, what, OLD_GRACE_MS);
}

/* Sets -s in a claimed process. Only after every side of the scan is attached:
 * a process that is host and target would otherwise sample commands whose
 * other side's probe has no program yet, and those records would be lost.
 * 0; 1 when the process has gone meanwhile (dropped); -1 with err. */
static int arm(struct ntp_spdk *s, int i, char *err, size_t errlen)
{
	struct sproc *p = &s->procs[i];
	const char *bin = s->o.bin[p->side];
	uint32_t old = 0;
	bool child = false;

	if (p->armed || p->shared || s->o.test_only) {
		p->armed = true;
		return 0;
	}
	if (!ntp_spdk_var_read(p->pid, p->addr, &old) && old && !(child = forked(s, p, old)))
		say(&s->o, "process %d of %s was left sampling 1 in %u (a recorder that was killed); "
		    "taking it over%s", (int)p->pid, bin, old, p->flight_addr ?
		    " once its sampled commands in flight are handed over (at most 1 s)" : "");
	if (p->flight_addr && (old && !child ? settle(p) : flight_read(p->pid, p->flight_addr, &p->flight_base))) {
		/* which one failed, for the message: the write is settle()'s first */
		p->flight_errno = errno;
		p->flight_why = FLIGHT_IO;
		p->flight_wrote = old && !child && !ntp_spdk_var_read(p->pid, p->addr, &old) && old;
		p->flight_addr = 0;
	}
	/* earlier recordings' commands in flight: only in the processes of the
	 * start (one started later had no recorder before; a child forked since
	 * holds only its parent's, this recording's, which it never hands over) */
	p->earlier_ok = p->flight_addr && p->flight_base > 0 && !child && s->last_scan <= 0;
	if (!p->flight_addr && !s->said_old && !kill(p->pid, 0)) {
		s->said_old = true;
		say_no_flight(s, p);
	}
	if (ntp_spdk_var_write(p->pid, p->addr, s->o.sampling)) {
		int e = errno;
		pid_t pid = p->pid;
		uint64_t addr = p->addr;

		drop_proc(s, i, false);
		if (kill(pid, 0))
			return 1;
		snprintf(err, errlen, "process %d of %s: writing %s at 0x%llx through /proc/%d/mem: %s",
			 (int)pid, bin, NTP_SPDK_SAMPLE_VAR, (unsigned long long)addr, (int)pid, strerror(e));
		return -1;
	}
	p->armed_ns = ntp_mono_ns();
	p->armed = true;
	return 0;
}

static bool known(const struct ntp_spdk *s, pid_t pid, int side)
{
	for (int i = 0; i < s->n_procs; i++)
		if (s->procs[i].pid == pid && s->procs[i].side == side)
			return true;
	return false;
}

/* skb receive stamps are CLOCK_REALTIME; the hooks subtract this. It moves
 * only when the real-time clock is set (a step), not with NTP's slewing,
 * which both clocks follow: refreshed at every rescan. */
static void clock_offset(struct ntp_spdk *s)
{
	struct timespec r, m;

	if (!s->sock_flavour || !s->skel->bss)
		return;
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	s->skel->bss->real_minus_mono = ((int64_t)r.tv_sec - m.tv_sec) * 1000000000ll + (r.tv_nsec - m.tv_nsec);
}

/* New processes of the binaries are claimed, ended ones dropped. */
static int rescan(struct ntp_spdk *s, char *err, size_t errlen)
{
	pid_t pids[NTP_SPDK_MAX_PROCS];

	for (int i = s->n_procs - 1; i >= 0; i--)
		if (kill(s->procs[i].pid, 0) && errno == ESRCH) {
			say(&s->o, "process %d of %s has ended", (int)s->procs[i].pid, s->o.bin[s->procs[i].side]);
			drop_proc(s, i, false);
		}
	for (int side = 0; side < 2; side++) {
		int n;

		if (!s->o.bin[side])
			continue;
		n = ntp_spdk_pids(s->o.bin[side], pids, NTP_SPDK_MAX_PROCS);
		for (int i = 0; i < n; i++) {
			int r;

			if (known(s, pids[i], side))
				continue;
			r = claim(s, side, pids[i], err, errlen);
			if (r < 0)
				return -1;
			if (r == 0 && s->last_scan > 0)
				say(&s->o, "process %d of %s picked up, sampling 1 in %u", (int)pids[i],
				    s->o.bin[side], s->o.sampling);
		}
	}
	/* backwards: drop_proc() moves the last entry into the dropped one's place */
	for (int i = s->n_procs - 1; i >= 0; i--)
		if (arm(s, i, err, errlen) < 0)
			return -1;
	clock_offset(s);
	s->last_scan = (ntp_mono_ns() / 1e9);
	return 0;
}

/*
 * A command still in flight when this recorder set the variable (in its
 * base) was sampled by an earlier recording: one whose stop's wait ended
 * with it in flight, or a killed one's left after settle(). When it is
 * handed over during this recording, its record is not this recording's and
 * its done lowers begun - done below the base: it is not recorded (counted
 * apart, said at the stop) and the base goes down by one, so that the stop
 * waits for exactly this recording's commands. Such a command was begun
 * before a write of 0 that came at least STOP_WAIT_MS before this recorder's
 * write (the earlier stop waited that long, or settle() did); this
 * recording's are begun after it, their first stamp at most the few
 * microseconds of building the request before (the host stamps SUBMIT
 * before the decision): the first stamp is compared with the write less
 * half the bound. The record does not carry its process: of the processes
 * that may hold such a command, one of the record's side goes first.
 */
static bool earlier(struct ntp_spdk *s, const struct ntp_record *r)
{
	uint64_t first = UINT64_MAX;
	struct sproc *pick = NULL;

	for (int i = 0; i < s->n_procs; i++) {
		struct sproc *p = &s->procs[i];

		if (p->earlier_ok && p->flight_base > 0 && (!pick || (p->side ? NTP_SIDE_TARGET : NTP_SIDE_HOST) == r->side))
			pick = p;
	}
	if (!pick)
		return false;
	for (int i = 0; i < NTP_TS_SLOTS; i++)
		if ((r->ts_valid >> i & 1) && r->ts[i] && r->ts[i] < first)
			first = r->ts[i];
	if (first == UINT64_MAX || first + EARLIER_NS >= pick->armed_ns)
		return false;
	if (pick->settle_kept > 0) {
		pick->settle_kept--;
		return false;
	}
	pick->flight_base--;
	s->earlier++;
	return true;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct ntp_spdk *s = ctx;
	struct ntp_record r;

	if (size < sizeof(r))
		return 0;
	memcpy(&r, data, sizeof(r));
	if (earlier(s, &r))
		return 0;
	/* An SPDK host has no block device: its drive is named by controller
	 * and namespace (the target's too, so the two files' groups agree). */
	snprintf(r.dev, sizeof(r.dev), "spdk-c%un%u", r.cntlid, r.nsid);
	if (s->cb)
		s->cb(s->cb_ctx, &r);
	s->seen++;
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("NTPROF_DEBUG") && (level != LIBBPF_WARN || !getenv("NTPROF_LIBBPF_WARN")))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

enum { SOCK_NONE, SOCK_FENTRY, SOCK_KPROBE };

static struct bpf_program *sock_prog(struct ntprof_spdk_bpf *k, int i, int fl)
{
	struct bpf_program *fe[3] = { k->progs.ntp_s_recvmsg_fe, k->progs.ntp_s_copy_fe, k->progs.ntp_s_sendmsg_fe };
	struct bpf_program *kp[3] = { k->progs.ntp_s_recvmsg_kp, k->progs.ntp_s_copy_kp, k->progs.ntp_s_sendmsg_kp };

	return fl == SOCK_FENTRY ? fe[i] : kp[i];
}

/* Opens, loads and (socket hooks) attaches the object in one flavour of
 * the socket hooks. 0; -1 with why (the flavour cannot be had). */
static int load_flavour(struct ntp_spdk *s, int fl, char *why, size_t whylen)
{
	const struct ntp_spdk_opts *o = &s->o;
	/* both sides read through tcp_recvmsg and write through tcp_sendmsg */
	int n_sock = 3, e;
	struct bpf_program *p;

	s->skel = ntprof_spdk_bpf__open();
	if (!s->skel) {
		snprintf(why, whylen, "cannot open the SPDK BPF object: %s", strerror(errno));
		return -1;
	}
	s->skel->rodata->filter_io = o->io_type;
	s->skel->rodata->filter_n_sizes = o->n_sizes;
	for (int i = 0; i < o->n_sizes && i < 16; i++)
		s->skel->rodata->filter_sizes[i] = o->sizes[i];
	bpf_object__for_each_program(p, s->skel->obj)
		bpf_program__set_autoload(p, false);
	for (int side = 0; side < 2; side++)
		if (o->bin[side])
			bpf_program__set_autoload(side_prog(s, side), true);
	for (int i = 0; fl != SOCK_NONE && i < n_sock; i++)
		bpf_program__set_autoload(sock_prog(s->skel, i, fl), true);
	e = ntprof_spdk_bpf__load(s->skel);
	if (e) {
		if (fl == SOCK_NONE)
			snprintf(why, whylen, "loading the USDT programs failed: %s%s", strerror(-e),
				 getenv("NTPROF_DEBUG") ? "" : " (NTPROF_DEBUG=1 shows the verifier log)");
		else
			snprintf(why, whylen, "%s programs do not load: %s", fl == SOCK_FENTRY ? "fentry" : "kprobe",
				 strerror(-e));
		goto fail;
	}
	for (int i = 0; fl != SOCK_NONE && i < n_sock; i++) {
		s->sock_links[i] = bpf_program__attach(sock_prog(s->skel, i, fl));
		if (!s->sock_links[i]) {
			e = -errno;
			snprintf(why, whylen, "%s on %s does not attach: %s", fl == SOCK_FENTRY ? "fentry" : "kprobe",
				 i == 0 ? "tcp_recvmsg" : i == 1 ? "skb_copy_datagram_iter" : "tcp_sendmsg", strerror(-e));
			goto fail;
		}
	}
	return 0;
fail:
	for (int i = 0; i < 3; i++) {
		bpf_link__destroy(s->sock_links[i]);
		s->sock_links[i] = NULL;
	}
	ntprof_spdk_bpf__destroy(s->skel);
	s->skel = NULL;
	return -1;
}

static bool have_kprobes(void)
{
	struct ntp_kernel k;

	ntp_kernel_probe(&k);
	return k.kprobes;
}

static int load(struct ntp_spdk *s, char *err, size_t errlen)
{
	char fe_why[200] = "", kp_why[200] = "";
	int one = 1;

	if (s->o.transport == NTP_TRANSPORT_TCP) {
		if (s->o.flavour == 2)
			snprintf(fe_why, sizeof(fe_why), "--kprobes");
		else if (!load_flavour(s, SOCK_FENTRY, fe_why, sizeof(fe_why)))
			s->sock_flavour = "fentry";
		if (!s->sock_flavour && s->o.flavour == 1)
			snprintf(kp_why, sizeof(kp_why), "--fentry");
		else if (!s->sock_flavour && !have_kprobes())
			snprintf(kp_why, sizeof(kp_why), "no kprobes");
		else if (!s->sock_flavour && !load_flavour(s, SOCK_KPROBE, kp_why, sizeof(kp_why)))
			s->sock_flavour = "kprobe";
		if (!s->sock_flavour)
			snprintf(s->sock_why, sizeof(s->sock_why), "%s; %s", fe_why, kp_why);
	}
	if (!s->sock_flavour && load_flavour(s, SOCK_NONE, err, errlen))
		return -1;
	if (s->sock_flavour) {
		/* Received skbs carry their arrival time only while some socket
		 * asks for it (net_enable_timestamp): this one, while recording. */
		s->ts_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (s->ts_fd < 0 || setsockopt(s->ts_fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
			say(&s->o, "SPDK: cannot ask for receive timestamps (%s): the receive paths are not split",
			    strerror(errno));
		clock_offset(s);
	}
	return 0;
}

const char *ntp_spdk_sock_flavour(const struct ntp_spdk *s, const char **why)
{
	if (why)
		*why = s->sock_why;
	return s->sock_flavour;
}

struct ntp_spdk *ntp_spdk_open(const struct ntp_spdk_opts *o, char *err, size_t errlen)
{
	struct ntp_spdk *s = calloc(1, sizeof(*s));
	bool twins;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->o = *o;
	s->ts_fd = -1;
	libbpf_set_print(libbpf_quiet);
	twins = ntp_spdk_twins_wanted();
	for (int side = 0; side < 2; side++) {
		const char *bin = o->bin[side];
		const char *probe = ntp_spdk_probe_name(side ? NTP_SIDE_TARGET : NTP_SIDE_HOST, o->transport);
		pid_t pids[NTP_SPDK_MAX_PROCS];
		int n_pids;

		if (!bin)
			continue;
		if (access(bin, R_OK)) {
			char why[200];

			snprintf(err, errlen, "--spdk-%s %s: %s", side ? "target" : "host", bin,
				 bin_why(bin, errno, why, sizeof(why)));
			goto fail;
		}
		s->n_files[side] = gather(bin, s->files[side], MAX_FILES, pids, &n_pids);
		snprintf(s->probe5[side], sizeof(s->probe5[side]), "%s_nop5", probe);
		for (int i = 0; i < s->n_files[side]; i++) {
			struct ntp_usdt_count c[NTP_USDT_MAX];
			int n = ntp_elf_usdt(s->files[side][i], NTP_SPDK_PROVIDER, c, 0, NTP_USDT_MAX), at = -1;
			bool twin = false;

			for (int k = 0; k < n; k++) {
				if (!strcmp(c[k].name, probe))
					at = s->n_probe_files[side]++;
				/* every site of the twin on a 5-byte nop */
				twin |= !strcmp(c[k].name, s->probe5[side]) && c[k].nop5 == c[k].sites;
			}
			if (at < 0)
				continue;
			s->probe_files[side][at] = s->files[side][i];
			s->probe_nop5[side][at] = twin && twins;
			s->any_nop5 |= s->probe_nop5[side][at];
		}
		if (!s->n_probe_files[side]) {
			snprintf(err, errlen, "--spdk-%s %s: neither it nor a library it loads has the USDT probe "
				 "%s:%s (SPDK without ntprof's patch, or configured without --with-usdt: "
				 "spdk/apply.sh)", side ? "target" : "host", bin, NTP_SPDK_PROVIDER, probe);
			goto fail;
		}
		if (!n_pids) {
			snprintf(err, errlen, "--spdk-%s %s: no process of it is running (start it first)",
				 side ? "target" : "host", bin);
			goto fail;
		}
	}
	if (load(s, err, errlen))
		goto fail;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.spdk_events), on_sample, s, NULL);
	if (!s->rb) {
		snprintf(err, errlen, "cannot open the SPDK ring buffer: %s", strerror(errno));
		goto fail;
	}
	if (rescan(s, err, errlen))
		goto fail;
	if (!s->n_procs) {
		snprintf(err, errlen, "no process of %s is running (start it first)",
			 o->bin[1] ? o->bin[1] : o->bin[0]);
		goto fail;
	}
	if (!o->test_only) {
		say(o, "SPDK: USDT probes attached to %d process%s%s, sampling 1 in %u", s->n_procs,
		    s->n_procs == 1 ? "" : "es", s->any_nop5 ? " (on 5-byte nops: uprobes this kernel optimizes)" : "",
		    o->sampling);
		if (o->transport == NTP_TRANSPORT_TCP && s->sock_flavour)
			say(o, "SPDK: its socket calls hooked (%s): tcp_recvmsg, skb_copy_datagram_iter, tcp_sendmsg",
			    s->sock_flavour);
		else if (o->transport == NTP_TRANSPORT_TCP)
			say(o, "SPDK: its socket calls are not hooked (%s): the receive paths (packet arrival "
			    "to SPDK reading it) read 0 and count in the network's wire component%s", s->sock_why,
			    o->bin[1] ? "; the target's response counts as sent when SPDK queued it" :
					"; the host's capsule counts as sent when SPDK queued it");
	}
	return s;
fail:
	ntp_spdk_close(s);
	return NULL;
}

int ntp_spdk_poll(struct ntp_spdk *s, ntp_spdk_record_cb cb, void *ctx)
{
	int err;

	s->cb = cb;
	s->cb_ctx = ctx;
	s->seen = 0;
	err = ring_buffer__consume(s->rb);
	if (err < 0 && err != -EINTR)
		return err;
	if ((ntp_mono_ns() / 1e9) - s->last_scan >= 1.0) {
		char why[512];

		if (rescan(s, why, sizeof(why)))
			say(&s->o, "%s", why);	/* the processes recorded so far go on */
	}
	return s->seen;
}

int ntp_spdk_set_sampling(struct ntp_spdk *s, uint32_t n)
{
	s->o.sampling = n;
	for (int i = 0; i < s->n_procs; i++)
		if (!s->o.test_only && ntp_spdk_var_write(s->procs[i].pid, s->procs[i].addr, n))
			return -errno;
	return 0;
}

uint64_t ntp_spdk_stop_lost(const struct ntp_spdk *s)
{
	return s ? s->flight_lost : 0;
}

void ntp_spdk_counters(struct ntp_spdk *s, uint64_t *lost, uint64_t *bad)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	/* the stop's losses whatever else fails: the caller takes them back
	 * out of *lost (ntp_spdk_stop_lost) for the ring's */
	*bad = 0;
	*lost = s ? s->flight_lost : 0;
	if (!s || !s->skel || ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return;
	for (uint32_t k = 0; k < 3; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.spdk_stats), &k, v))
			continue;
		for (int i = 0; i < ncpu; i++)
			*(k == 0 ? lost : bad) += v[i];
	}
	free(v);
}

/* The processes that still have sampled commands in flight, "P, Q" (the
 * first few). */
static void pending_pids(const struct ntp_spdk *s, char *out, size_t len)
{
	size_t o = 0;
	int n = 0;

	out[0] = 0;
	for (int i = 0; i < s->n_procs && o < len; i++) {
		const struct sproc *p = &s->procs[i];

		if (!p->flight_left)
			continue;
		if (n++ == 4) {
			snprintf(out + o, len - o, ", ...");
			break;
		}
		o += (size_t)snprintf(out + o, len - o, "%s%d of %s", o ? ", " : "", (int)p->pid, s->o.bin[p->side]);
	}
}

static void consume(struct ntp_spdk *s)
{
	if (s->rb && s->cb)
		ring_buffer__consume(s->rb);
}

void ntp_spdk_stop(struct ntp_spdk *s, ntp_spdk_record_cb cb, void *ctx)
{
	uint64_t t0, now;
	bool old = false, pending;
	char who[256];

	if (!s || s->stopped)
		return;
	s->stopped = true;
	if (cb) {
		s->cb = cb;
		s->cb_ctx = ctx;
	}
	if (!s->n_procs || s->o.test_only)
		return;
	/* 0 first, while the programs are still attached: from then on SPDK
	 * samples nothing new */
	for (int i = 0; i < s->n_procs; i++) {
		struct sproc *p = &s->procs[i];
		int64_t v;

		if (p->addr && !p->shared)
			ntp_spdk_var_write(p->pid, p->addr, 0);
		/* a first look, so that a process that ends during the wait
		 * has its last look counted, whenever it ends */
		p->flight_left = 0;
		if (p->flight_addr && !p->shared && !flight_read(p->pid, p->flight_addr, &v) && v > p->flight_base)
			p->flight_left = v - p->flight_base;
		p->flight_zero = 0;
		old |= !p->shared && !p->flight_addr;
	}
	/* Then until every process's commands sampled before the write are
	 * handed over, at most STOP_WAIT_MS: nothing in flight on two looks in a
	 * row, a millisecond apart (a thread that read the variable just before
	 * the write counts its command a moment later); the records go to the
	 * last poll's callback as they come. */
	t0 = ntp_mono_ns();
	do {
		struct timespec ms = { 0, 1000000L };

		nanosleep(&ms, NULL);
		consume(s);
		now = ntp_mono_ns();
		pending = old && now - t0 < OLD_GRACE_MS * 1000000ull;
		for (int i = 0; i < s->n_procs; i++) {
			struct sproc *p = &s->procs[i];
			int64_t v;

			if (!p->flight_addr || p->shared || p->flight_zero >= 2)
				continue;
			if (flight_read(p->pid, p->flight_addr, &v)) {
				/* the process has ended: what it had in flight at
				 * the last look is lost */
				p->flight_zero = 2;
				continue;
			}
			p->flight_left = v > p->flight_base ? v - p->flight_base : 0;
			p->flight_zero = p->flight_left ? 0 : p->flight_zero + 1;
			pending |= p->flight_zero < 2;
		}
	} while (pending && now - t0 < STOP_WAIT_MS * 1000000ull);
	consume(s);
	for (int i = 0; i < s->n_procs; i++)
		s->flight_lost += (uint64_t)s->procs[i].flight_left;
	if (s->flight_lost) {
		pending_pids(s, who, sizeof(who));
		say(&s->o, "SPDK: %llu sampled command%s still in flight %d ms after the stop (process %s): "
		    "not recorded, counted as lost", (unsigned long long)s->flight_lost,
		    s->flight_lost == 1 ? "" : "s", STOP_WAIT_MS, who);
	}
	if (s->earlier)
		say(&s->o, "SPDK: %llu sampled command%s of an earlier recording (in flight when this one set the "
		    "sampling variable) handed over during this one: not in this recording",
		    (unsigned long long)s->earlier, s->earlier == 1 ? "" : "s");
}

void ntp_spdk_close(struct ntp_spdk *s)
{
	if (!s)
		return;
	/* when the collector has not stopped it already: records to the last
	 * poll's callback */
	ntp_spdk_stop(s, NULL, NULL);
	while (s->n_procs)
		drop_proc(s, s->n_procs - 1, true);
	ring_buffer__free(s->rb);
	for (int i = 0; i < 3; i++)
		bpf_link__destroy(s->sock_links[i]);
	if (s->ts_fd >= 0)
		close(s->ts_fd);
	ntprof_spdk_bpf__destroy(s->skel);
	for (int side = 0; side < 2; side++)
		for (int i = 0; i < s->n_files[side]; i++)
			free(s->files[side][i]);
	free(s);
}
