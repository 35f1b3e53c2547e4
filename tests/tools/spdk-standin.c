// SPDX-License-Identifier: GPL-2.0
/*
 * spdk-standin - a stand-in for a patched SPDK program in ntprof's tests:
 * it links a library that defines ntprof's sampling variable and carries
 * ntprof's USDT probes (libntp_standin.so, as SPDK's build/lib/libspdk_*.so
 * do) and runs NVMe commands through it as an SPDK host or target would,
 * sampling them with the kernel side's hash, with per-stage delays.
 *
 *   spdk-standin -r host|target|both [-t tcp|rdma] [-i CMDS.csv] [-n N] [-l LIST]
 *                [--wait-us U] [--storage-us U] [--cntlid C] [--sock [--flush-us U]]
 *                [--hold-us U [--abandon] [--rearm]] [--submit-fail] [--fork]
 *
 * -i takes `ntprof dump` CSV (side,cntlid,qid,cid,opcode,nsid,slba,nlb,len,
 * ...): the stand-in runs those commands in that order, so its records join
 * with a generated kernel-side file of the same commands. Without -i it makes
 * its own: 4 KiB reads (one write in four), cid cycling 0..63 as SPDK's.
 * -n N: stop after N commands (default: run until SIGTERM or SIGINT, going
 * round the list). -l LIST: write "cid,slba,nlb" of every sampled command.
 * --wait-sampling: start only once a recorder has set the sampling variable.
 * -r both: each command runs on the target's side, then on the host's, in
 * this one process (an SPDK program that is host and target).
 * --sock (TCP, -r host or target): each command's capsule and answer cross a
 * loopback TCP connection to a thread of the stand-in playing the other end,
 * so that the kernel socket calls ntprof hooks for SPDK run; the target
 * writes its answer --flush-us after queueing it (default 20); --qd N: the
 * target's peer keeps N capsules outstanding (default 1).
 * --hold-us U: a sampled command waits until the recorder stops (the variable
 * back to 0, "standin: stop seen at NS" on stderr, CLOCK_REALTIME ns),
 * then U us more: in flight at the stop; --abandon: the first
 * one so held is dropped at the stop without its probe (freed unfinished);
 * --rearm: after the stop, a held command waits for the next recorder to set
 * the variable again (or for the end) before its U us more (it completes
 * during that next recording).
 * --submit-fail (host): the first sampled command's submission fails after
 * it was picked, as SPDK's RDMA host puts a request it cannot build back
 * unsent (NTPROF_DROP: counted done, no probe, not in -l's list).
 * --fork: after the first command, fork a child that idles until SIGTERM
 * ("forked PID" on stdout): it inherits the sampling variable and the
 * in-flight counts, as a child forked by an SPDK program.
 * --spin: the stage delays are spun, not slept, as SPDK's reactor polls:
 * the CPU never idles between commands.
 * --log FILE: a line per command, "sampled latency_ns" (1 or 0; the time of
 * the whole command, probes included); --bpf-time PREFIX (with --log): on a
 * sampled command's line, the run time of the BPF programs named PREFIX*
 * (kernel.bpf_stats_enabled on) read just before and after its done probe,
 * as "sampled latency_ns bpf_ns". The reads are inside the latency.
 * SIGUSR1 prints the sampling variable's value ("sampling N") on stdout.
 * At the end: "standin: C commands, S sampled" on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include "bpf-runtime.h"
#include "spdk-standin.h"

static volatile sig_atomic_t stop, report;

/* --bpf-time: the programs, and their run time at the hook's two calls */
static struct bpf_runtime progs;
static uint64_t bpf_before, bpf_after;

static const char *bpf_time;

/* opened at the first sampled command: the recorder attached its programs
 * before it set the sampling variable */
static void bpf_time_hook(int after)
{
	if (!progs.n && bpf_runtime_open(&progs, bpf_time)) {
		if (errno == ENOENT)
			fprintf(stderr, "spdk-standin: --bpf-time %s: no BPF program of that name is loaded\n",
				bpf_time);
		else
			fprintf(stderr, "spdk-standin: --bpf-time: cannot list the BPF programs: %s\n",
				strerror(errno));
		exit(2);
	}
	if (after)
		bpf_after = bpf_runtime_read(&progs);
	else
		bpf_before = bpf_runtime_read(&progs);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
	standin_quit = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	report = 1;
}

static int load_csv(const char *path, struct standin_cmd **out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char line[4096];
	int n = 0, cap = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct standin_cmd c = { 0 };
		unsigned cntlid, qid, cid, opc, nsid, nlb, len;
		unsigned long long slba;
		char side[16];

		if (sscanf(line, "%15[^,],%u,%u,%u,%u,%u,%llu,%u,%u", side, &cntlid, &qid, &cid, &opc, &nsid,
			   &slba, &nlb, &len) != 9)
			continue;	/* the header */
		c.cntlid = (uint16_t)cntlid;
		c.qid = (uint16_t)qid;
		c.cid = (uint16_t)cid;
		c.opc = (uint8_t)opc;
		c.nsid = nsid;
		c.slba = slba;
		c.nlb = (uint16_t)nlb;
		c.len = len;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			*out = realloc(*out, cap * sizeof(**out));
			if (!*out)
				return -1;
		}
		(*out)[n++] = c;
	}
	if (f != stdin)
		fclose(f);
	return n;
}

static void make_cmd(unsigned long i, uint16_t cntlid, struct standin_cmd *c)
{
	static uint64_t x = 88172645463325252ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	memset(c, 0, sizeof(*c));
	c->cntlid = cntlid;
	c->qid = 1;
	c->cid = (uint16_t)(i % 64);
	c->opc = i % 4 == 3 ? 0x01 : 0x02;
	c->nsid = 1;
	c->slba = (x % (1u << 21)) & ~7ull;
	c->nlb = 7;
	c->len = 4096;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "wait-us", required_argument, NULL, 'W' },
		{ "storage-us", required_argument, NULL, 'S' },
		{ "cntlid", required_argument, NULL, 'C' },
		{ "wait-sampling", no_argument, NULL, 'w' },
		{ "sock", no_argument, NULL, 'K' },
		{ "flush-us", required_argument, NULL, 'F' },
		{ "qd", required_argument, NULL, 'Q' },
		{ "hold-us", required_argument, NULL, 'H' },
		{ "abandon", no_argument, NULL, 'A' },
		{ "rearm", no_argument, NULL, 'R' },
		{ "submit-fail", no_argument, NULL, 'X' },
		{ "fork", no_argument, NULL, 'f' },
		{ "spin", no_argument, NULL, 'P' },
		{ "log", required_argument, NULL, 'L' },
		{ "bpf-time", required_argument, NULL, 'B' },
		{ 0 }
	};
	struct standin_delays d = { .wait_ns = 60000, .storage_ns = 40000, .r2t_ns = 20000, .flush_ns = 20000 };
	struct standin_cmd *cmds = NULL, c;
	const char *role = NULL, *in = NULL, *list = NULL, *log = NULL;
	unsigned long n = 0, done = 0, sampled = 0;
	int rdma = 0, ncmds = 0, opt, host, both, wait = 0, sock = 0, qd = 1, fork_child = 0;
	uint16_t cntlid = 1;
	struct sigaction sa;
	FILE *lf = NULL, *logf = NULL;

	while ((opt = getopt_long(argc, argv, "r:t:i:n:l:", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': role = optarg; break;
		case 't': rdma = !strcmp(optarg, "rdma"); break;
		case 'i': in = optarg; break;
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'l': list = optarg; break;
		case 'W': d.wait_ns = strtoull(optarg, NULL, 10) * 1000; break;
		case 'S': d.storage_ns = strtoull(optarg, NULL, 10) * 1000; break;
		case 'C': cntlid = (uint16_t)strtoul(optarg, NULL, 10); break;
		case 'w': wait = 1; break;
		case 'K': sock = 1; break;
		case 'Q': qd = atoi(optarg); break;
		case 'F': d.flush_ns = strtoull(optarg, NULL, 10) * 1000; break;
		case 'H': d.hold = 1; d.hold_ns = strtoull(optarg, NULL, 10) * 1000; break;
		case 'A': d.abandon = 1; break;
		case 'R': d.rearm = 1; break;
		case 'X': d.submit_fail = 1; break;
		case 'f': fork_child = 1; break;
		case 'P': d.spin = 1; break;
		case 'L': log = optarg; break;
		case 'B': bpf_time = optarg; break;
		default:
			fprintf(stderr, "usage: spdk-standin -r host|target [-t tcp|rdma] [-i CSV] [-n N] [-l LIST]\n");
			return 2;
		}
	}
	if (!role || (strcmp(role, "host") && strcmp(role, "target") && strcmp(role, "both"))) {
		fprintf(stderr, "spdk-standin: -r host, target or both\n");
		return 2;
	}
	host = !strcmp(role, "host");
	both = !strcmp(role, "both");
	if (sock && (both || rdma)) {
		fprintf(stderr, "spdk-standin: --sock needs -t tcp and -r host or target\n");
		return 2;
	}
	if (sock && standin_sock_open(!host, &d, qd)) {
		perror("spdk-standin: loopback TCP connection");
		return 1;
	}
	if (in && (ncmds = load_csv(in, &cmds)) <= 0) {
		fprintf(stderr, "spdk-standin: %s: no commands\n", in);
		return 2;
	}
	if (list && !(lf = fopen(list, "w"))) {
		perror(list);
		return 2;
	}
	if (bpf_time && !log) {
		fprintf(stderr, "spdk-standin: --bpf-time %s: needs --log\n", bpf_time);
		return 2;
	}
	if (log && !(logf = fopen(log, "w"))) {
		fprintf(stderr, "spdk-standin: --log %s: %s\n", log, strerror(errno));
		return 2;
	}
	/* nanosleep's default slack (50 us) would swamp the stage delays */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (wait && !stop && !standin_sampling())
		usleep(1000);

	if (bpf_time)
		standin_done_hook = bpf_time_hook;
	while (!stop && (!n || done < n)) {
		uint64_t t0;
		int s;

		if (report) {
			report = 0;
			printf("sampling %u\n", standin_sampling());
			fflush(stdout);
		}
		if (ncmds)
			c = cmds[done % ncmds];
		else
			make_cmd(done, cntlid, &c);
		t0 = logf ? now_ns() : 0;
		if (both)
			s = standin_target_cmd(&c, &d, rdma) & standin_host_cmd(&c, &d, rdma);
		else
			s = host ? standin_host_cmd(&c, &d, rdma) : standin_target_cmd(&c, &d, rdma);
		if (logf) {
			fprintf(logf, "%d %llu", s, (unsigned long long)(now_ns() - t0));
			if (s && bpf_time)
				fprintf(logf, " %llu", (unsigned long long)(bpf_after - bpf_before));
			fputc('\n', logf);
		}
		if (s) {
			sampled++;
			if (lf)
				fprintf(lf, "%u,%llu,%u\n", c.cid, (unsigned long long)c.slba, c.nlb);
		}
		done++;
		if (fork_child && done == 1) {
			pid_t child;

			fflush(stdout);
			child = fork();
			if (child == 0) {
				while (!stop)
					pause();
				_exit(0);
			}
			printf("forked %d\n", (int)child);
			fflush(stdout);
		}
	}
	if (report)
		printf("sampling %u\n", standin_sampling());
	if (lf)
		fclose(lf);
	if (logf)
		fclose(logf);
	standin_sock_close();
	fprintf(stderr, "standin: %lu commands, %lu sampled\n", done, sampled);
	free(cmds);
	return 0;
}
