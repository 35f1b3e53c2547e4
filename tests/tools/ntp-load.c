// SPDX-License-Identifier: GPL-2.0
/*
 * ntp-load: the test bed's load generator (a small fio stand-in: Debian's fio
 * links about 70 libraries, ceph among them).
 *
 * O_DIRECT reads or writes on a block device (or file), random or sequential,
 * block size 512 B..1 MiB, queue depth 1..128 through io_uring, for a fixed
 * time or I/O count. Latency is measured around each I/O: from just before the
 * io_uring_submit() that carries it to the moment its completion is reaped.
 * Its mean is what ntprof's end-to-end figure is compared with.
 *
 * The last line is machine-readable:
 *   ntp-load: rw=randread bs=4096 qd=1 ios=N errors=0 secs=S iops=X mbps=X mean_us=X p50_us=X p99_us=X min_us=X max_us=X
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bpf-runtime.h"

#define MAX_QD 128
#define MIN_BS 512u
#define MAX_BS (1u << 20)

struct opts {
	const char *dev;
	bool write, rand;
	unsigned bs, qd;
	double secs;       /* 0: no time limit */
	uint64_t count;    /* 0: no count limit */
	uint64_t offset, size;
	uint64_t seed;
	bool quiet;
	const char *log;   /* --log: one line per I/O, "offset latency_ns" */
	const char *bpf_time; /* --bpf-time PREFIX: BPF run time per I/O in the log */
};

struct slot {
	void *buf;
	uint64_t start_ns;
	uint64_t off;
};

struct lat_log {
	uint64_t *ns;
	size_t n, cap;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ntp-load [options] DEVICE\n"
		"  --rw MODE      read|write|randread|randwrite (default randread)\n"
		"  --bs SIZE      block size, 512..1m, multiple of 512 (default 4k)\n"
		"  --qd N         queue depth 1..128 (default 1)\n"
		"  --secs S       run for S seconds (default 10 unless --count)\n"
		"  --count N      stop after N I/Os\n"
		"  --offset SIZE  first byte of the region used (default 0)\n"
		"  --size SIZE    length of the region used (default: to the end)\n"
		"  --seed N       random offsets seed (default 1)\n"
		"  --quiet        print only the machine-readable line\n"
		"  --log FILE     write each completed I/O as \"offset latency_ns\" to FILE\n"
		"                 (the hook-cost bench joins it with ntprof's records)\n"
		"  --bpf-time PREFIX\n"
		"                 with --log and --qd 1: add to each line the run time of the\n"
		"                 BPF programs named PREFIX* (kernel.bpf_stats_enabled) while\n"
		"                 the I/O was in flight and before it was submitted, and each\n"
		"                 such program's part of the first as id:ns (the kernel keeps\n"
		"                 15 characters of a name: bpftool prog show has them whole)\n");
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "ntp-load: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

/* "4k", "1m", "512", "1g" -> bytes; dies naming the option on bad input */
static uint64_t parse_size(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	uint64_t mul = 1;

	if (errno || end == s || *s == '-')
		die("bad size for %s", opt);
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	}
	if (*end == 'i' || *end == 'b' || *end == 'B')
		end += (*end == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
	if (*end)
		die("bad size for %s", opt);
	return v * mul;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "rw", required_argument, 0, 'r' },   { "bs", required_argument, 0, 'b' },
		{ "qd", required_argument, 0, 'q' },   { "secs", required_argument, 0, 't' },
		{ "count", required_argument, 0, 'n' }, { "offset", required_argument, 0, 'o' },
		{ "size", required_argument, 0, 's' }, { "seed", required_argument, 0, 'S' },
		{ "quiet", no_argument, 0, 'Q' },      { "help", no_argument, 0, 'h' },
		{ "log", required_argument, 0, 'L' },  { "bpf-time", required_argument, 0, 'B' },
		{ 0, 0, 0, 0 }
	};
	int c;
	char *end;

	*o = (struct opts){ .rand = true, .bs = 4096, .qd = 1, .seed = 1 };
	while ((c = getopt_long(argc, argv, "r:b:q:t:n:o:s:S:QhL:B:", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (!strcmp(optarg, "read")) { o->write = false; o->rand = false; }
			else if (!strcmp(optarg, "write")) { o->write = true; o->rand = false; }
			else if (!strcmp(optarg, "randread")) { o->write = false; o->rand = true; }
			else if (!strcmp(optarg, "randwrite")) { o->write = true; o->rand = true; }
			else die("--rw: expected read, write, randread or randwrite, got '%s'", optarg);
			break;
		case 'b': {
			uint64_t bs = parse_size("--bs", optarg);
			if (bs < MIN_BS || bs > MAX_BS || bs % MIN_BS)
				die("--bs %s: must be 512..1m and a multiple of 512", optarg);
			o->bs = (unsigned)bs;
			break;
		}
		case 'q': {
			long qd = strtol(optarg, &end, 10);
			if (*end || end == optarg || qd < 1 || qd > MAX_QD)
				die("--qd %s: must be 1..128", optarg);
			o->qd = (unsigned)qd;
			break;
		}
		case 't':
			o->secs = strtod(optarg, &end);
			if (*end || end == optarg || !(o->secs > 0))
				die("--secs %s: must be a positive number", optarg);
			break;
		case 'n':
			o->count = parse_size("--count", optarg);
			if (!o->count)
				die("--count %s: must be > 0", optarg);
			break;
		case 'o': o->offset = parse_size("--offset", optarg); break;
		case 's': o->size = parse_size("--size", optarg); break;
		case 'S': o->seed = parse_size("--seed", optarg) | 1; break;
		case 'Q': o->quiet = true; break;
		case 'L': o->log = optarg; break;
		case 'B': o->bpf_time = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		exit(2);
	}
	o->dev = argv[optind];
	if (!o->secs && !o->count)
		o->secs = 10;
	if (o->offset % MIN_BS)
		die("--offset: must be a multiple of 512%s", "");
	if (o->bpf_time && (!o->log || o->qd != 1))
		die("--bpf-time %s: needs --log and --qd 1 (one I/O in flight owns the time)", o->bpf_time);
}

static uint64_t dev_bytes(int fd, const char *dev)
{
	struct stat st;
	uint64_t size = 0;

	if (fstat(fd, &st))
		die("cannot stat %s", dev);
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size))
			die("BLKGETSIZE64 failed on %s", dev);
	} else {
		size = (uint64_t)st.st_size;
	}
	return size;
}

static void lat_add(struct lat_log *l, uint64_t ns)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 65536;
		l->ns = realloc(l->ns, l->cap * sizeof(*l->ns));
		if (!l->ns) {
			fprintf(stderr, "ntp-load: out of memory for %zu latencies\n", l->cap);
			exit(1);
		}
	}
	l->ns[l->n++] = ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted array */
static double pct_us(const struct lat_log *l, double q)
{
	size_t i = (size_t)(q * (double)l->n + 0.999999);

	if (i < 1)
		i = 1;
	if (i > l->n)
		i = l->n;
	return (double)l->ns[i - 1] / 1000.0;
}

/* --bpf-time: the programs' summed run time (bpf-runtime.h), read before
 * each submission and after each completion. At QD 1 what ran in between is
 * the I/O's own (and whatever else the machine did meanwhile): a bench
 * phase of its own, since the reads touch the caches. */
static void bpf_progs_open(struct bpf_runtime *p, const char *prefix)
{
	if (!bpf_runtime_open(p, prefix))
		return;
	if (errno == ENOENT)
		die("--bpf-time %s: no BPF program of that name is loaded", prefix);
	die("--bpf-time: cannot list the BPF programs: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct opts o;
	struct io_uring ring;
	struct slot slots[MAX_QD];
	struct lat_log lat = { 0 };
	uint64_t x, nblocks, seq = 0, issued = 0, errors = 0, sum_ns = 0;
	unsigned inflight = 0;
	int fd, ret;
	FILE *log = NULL;
	struct bpf_runtime progs;
	uint64_t bpf_done = 0, bpf_submit = 0;

	parse_args(argc, argv, &o);
	if (o.bpf_time) {
		bpf_progs_open(&progs, o.bpf_time);
		bpf_done = bpf_runtime_read(&progs);
	}
	if (o.log && !(log = fopen(o.log, "w"))) {
		fprintf(stderr, "ntp-load: --log %s: %s\n", o.log, strerror(errno));
		return 1;
	}
	fd = open(o.dev, (o.write ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "ntp-load: cannot open %s: %s\n", o.dev, strerror(errno));
		return 1;
	}
	uint64_t devsize = dev_bytes(fd, o.dev);
	if (o.offset >= devsize)
		die("--offset is beyond the end of %s", o.dev);
	if (!o.size || o.size > devsize - o.offset)
		o.size = devsize - o.offset;
	nblocks = o.size / o.bs;
	if (!nblocks)
		die("%s: region smaller than one block", o.dev);

	ret = io_uring_queue_init(o.qd, &ring, 0);
	if (ret) {
		fprintf(stderr, "ntp-load: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	for (unsigned i = 0; i < o.qd; i++) {
		if (posix_memalign(&slots[i].buf, 4096, o.bs))
			die("out of memory for %s", "buffers");
		/* a recognisable, non-zero pattern for writes */
		memset(slots[i].buf, 0x5a ^ (int)i, o.bs);
	}

	x = o.seed * 0x9e3779b97f4a7c15ull | 1;
	const uint64_t t0 = now_ns();
	const uint64_t t_end = o.secs > 0 ? t0 + (uint64_t)(o.secs * 1e9) : UINT64_MAX;
	uint64_t t_last = t0;
	bool stop = false;
	unsigned free_slots[MAX_QD], nfree = o.qd;

	for (unsigned i = 0; i < o.qd; i++)
		free_slots[i] = o.qd - 1 - i;

	for (;;) {
		/* fill the queue */
		unsigned queued = 0;
		while (!stop && nfree && (!o.count || issued < o.count)) {
			unsigned s = free_slots[--nfree];
			uint64_t blk;
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (o.rand) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;  /* xorshift64 */
				blk = x % nblocks;
			} else {
				blk = seq++ % nblocks;
			}
			slots[s].off = o.offset + blk * o.bs;
			if (o.write)
				io_uring_prep_write(sqe, fd, slots[s].buf, o.bs, o.offset + blk * o.bs);
			else
				io_uring_prep_read(sqe, fd, slots[s].buf, o.bs, o.offset + blk * o.bs);
			io_uring_sqe_set_data64(sqe, s);
			issued++;
			queued++;
		}
		if (queued) {
			if (o.bpf_time) {
				bpf_submit = bpf_runtime_read(&progs);
				bpf_runtime_mark(&progs);
			}
			uint64_t t = now_ns();
			/* the submitted slots are the last `queued` taken from free_slots */
			for (unsigned k = 0; k < queued; k++)
				slots[free_slots[nfree + k]].start_ns = t;
			ret = io_uring_submit(&ring);
			if (ret < 0) {
				fprintf(stderr, "ntp-load: io_uring_submit: %s\n", strerror(-ret));
				return 1;
			}
			inflight += queued;
		}
		if (!inflight)
			break;

		struct io_uring_cqe *cqe;
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret) {
			fprintf(stderr, "ntp-load: io_uring_wait_cqe: %s\n", strerror(-ret));
			return 1;
		}
		uint64_t t = now_ns();
		unsigned head, n = 0;
		uint64_t bpf_now = o.bpf_time ? bpf_runtime_read(&progs) : 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned s = (unsigned)io_uring_cqe_get_data64(cqe);
			if (cqe->res != (int)o.bs) {
				if (!errors)
					fprintf(stderr, "ntp-load: %s at slot %u: %s\n", o.write ? "write" : "read", s,
						cqe->res < 0 ? strerror(-cqe->res) : "short transfer");
				errors++;
			} else {
				lat_add(&lat, t - slots[s].start_ns);
				sum_ns += t - slots[s].start_ns;
				if (log)
					fprintf(log, "%llu %llu", (unsigned long long)slots[s].off,
						(unsigned long long)(t - slots[s].start_ns));
				if (log && o.bpf_time) {
					/* in flight, then before the submission (since the
					 * previous completion), then each program's part of
					 * the first */
					fprintf(log, " %llu %llu", (unsigned long long)(bpf_now - bpf_submit),
						(unsigned long long)(bpf_submit - bpf_done));
					for (int i = 0; i < progs.n; i++)
						if (progs.ns[i] != progs.at_mark[i])
							fprintf(log, " %u:%llu", progs.id[i],
								(unsigned long long)(progs.ns[i] - progs.at_mark[i]));
				}
				if (log)
					fputc('\n', log);
			}
			free_slots[nfree++] = s;
			n++;
		}
		io_uring_cq_advance(&ring, n);
		inflight -= n;
		bpf_done = bpf_now;
		t_last = t;
		if (t >= t_end || (o.count && issued >= o.count))
			stop = true;
	}

	double el = (double)(t_last - t0) / 1e9;
	const char *rw = o.write ? (o.rand ? "randwrite" : "write") : (o.rand ? "randread" : "read");
	double iops = el > 0 ? (double)lat.n / el : 0, mbps = iops * o.bs / 1e6;
	double mean = lat.n ? (double)sum_ns / (double)lat.n / 1000.0 : 0;
	double p50 = 0, p99 = 0, mn = 0, mx = 0;

	if (lat.n) {
		qsort(lat.ns, lat.n, sizeof(*lat.ns), cmp_u64);
		p50 = pct_us(&lat, 0.50);
		p99 = pct_us(&lat, 0.99);
		mn = (double)lat.ns[0] / 1000.0;
		mx = (double)lat.ns[lat.n - 1] / 1000.0;
	}
	if (!o.quiet) {
		printf("%s %s bs=%u qd=%u: %zu I/Os in %.2f s, %llu errors\n", o.dev, rw, o.bs, o.qd,
		       lat.n, el, (unsigned long long)errors);
		printf("  IOPS %.0f  MB/s %.2f  latency us: mean %.1f  p50 %.1f  p99 %.1f  min %.1f  max %.1f\n",
		       iops, mbps, mean, p50, p99, mn, mx);
	}
	printf("ntp-load: rw=%s bs=%u qd=%u ios=%zu errors=%llu secs=%.3f iops=%.1f mbps=%.2f "
	       "mean_us=%.1f p50_us=%.1f p99_us=%.1f min_us=%.1f max_us=%.1f\n",
	       rw, o.bs, o.qd, lat.n, (unsigned long long)errors, el, iops, mbps, mean, p50, p99, mn, mx);
	io_uring_queue_exit(&ring);
	close(fd);
	if (log && fclose(log)) {
		fprintf(stderr, "ntp-load: --log %s: %s\n", o.log, strerror(errno));
		return 1;
	}
	return errors ? 1 : 0;
}
