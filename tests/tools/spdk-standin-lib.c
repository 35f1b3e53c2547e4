// SPDX-License-Identifier: GPL-2.0
/*
 * spdk-standin-lib.c - libntp_standin.so: the stand-in's "SPDK library". It
 * defines ntprof's sampling variable and runs one command per call through
 * the same helpers the SPDK patch calls (spdk/ntprof_usdt.h), in the order
 * SPDK stamps them (bpf/ntprof_spdk.h), firing the same USDT probes.
 * With a socket (standin_sock_open) the command capsule and the answer
 * cross a loopback TCP connection, so the kernel's socket calls that
 * ntprof hooks for SPDK (bpf/ntprof_spdk_sock.bpf.h) run as they do there.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include "spdk/ntprof_usdt.h"
#include "spdk-standin.h"

volatile uint32_t ntprof_sample_n;
/* the sampled commands begun and handed over, per thread (as SPDK's
 * lib/nvme defines it with the patch); tests/cli/spdk.sh builds this
 * library once with it renamed, as a process of ntprof's older patch */
struct ntp_spdk_flight ntprof_inflight;
volatile int standin_quit;

uint32_t standin_sampling(void)
{
	return ntprof_sample_n;
}

void (*standin_done_hook)(int after);

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* a stage's delay: slept, or (d->spin) spun on the clock as SPDK's reactor
 * polls, its CPU never idle */
static void pause_ns(const struct standin_delays *d, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	uint64_t end;

	if (!ns)
		return;
	if (!d->spin) {
		nanosleep(&ts, NULL);
		return;
	}
	end = mono_ns() + ns;
	while (mono_ns() < end)
		__asm__ __volatile__("" ::: "memory");
}

/* NTPROF_DONE with standin_done_hook around a sampled command's probe */
#define DONE(probe, r) do {							\
	int sampled_ = (r)->abi != 0;						\
										\
	if (sampled_ && standin_done_hook)					\
		standin_done_hook(0);						\
	NTPROF_DONE(probe, r);							\
	if (sampled_ && standin_done_hook)					\
		standin_done_hook(1);						\
} while (0)

/* A command capsule (PDU header + SQE) and an answer (C2H data header +
 * 4 KiB); the bytes mean nothing, their sizes are NVMe/TCP's. */
#define CAPSULE_LEN 72
#define ANSWER_LEN (24 + 4096)

static int sock_fd = -1, peer_fd = -1;
static uint16_t sock_lport, sock_rport;
static pthread_t peer;
static atomic_int peer_stop;
static struct standin_delays peer_d;
static int peer_is_target, peer_qd = 1;
/* The target's receive buffer: like SPDK's posix socket layer (its "pipe"),
 * it reads all that is there and reads again only when it is empty, so at
 * a queue depth above 1 one read can carry several capsules. */
static char pipe_buf[65536];
static size_t pipe_len, pipe_off;

static int io_all(int fd, char *buf, size_t len, int wr)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n;

		if (!wr) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			/* wait as SPDK's poller does, then read what is there */
			if (poll(&p, 1, 200) <= 0) {
				if (atomic_load(&peer_stop))
					return -1;
				continue;
			}
			n = recv(fd, buf + done, len - done, MSG_DONTWAIT);
		} else {
			n = send(fd, buf + done, len - done, MSG_NOSIGNAL);
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static int pipe_read(char *out, size_t len)
{
	while (pipe_len - pipe_off < len) {
		struct pollfd p = { .fd = sock_fd, .events = POLLIN };
		ssize_t n;

		if (pipe_off) {
			memmove(pipe_buf, pipe_buf + pipe_off, pipe_len - pipe_off);
			pipe_len -= pipe_off;
			pipe_off = 0;
		}
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
		n = recv(sock_fd, pipe_buf + pipe_len, sizeof(pipe_buf) - pipe_len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		pipe_len += (size_t)n;
	}
	memcpy(out, pipe_buf + pipe_off, len);
	pipe_off += len;
	return 0;
}

/* The other end: a target answers each capsule after the host's wait; a
 * host keeps its queue depth of capsules outstanding, sending the next one
 * when an answer is in. */
static void *peer_main(void *arg)
{
	static char buf[ANSWER_LEN];

	(void)arg;
	for (int i = 1; !peer_is_target && i < peer_qd; i++)
		if (io_all(peer_fd, buf, CAPSULE_LEN, 1))
			return NULL;
	while (!atomic_load(&peer_stop)) {
		if (peer_is_target) {
			if (io_all(peer_fd, buf, CAPSULE_LEN, 0))
				break;
			pause_ns(&peer_d, peer_d.wait_ns);
			if (io_all(peer_fd, buf, ANSWER_LEN, 1))
				break;
		} else {
			if (io_all(peer_fd, buf, CAPSULE_LEN, 1) || io_all(peer_fd, buf, ANSWER_LEN, 0))
				break;
		}
	}
	return NULL;
}

int standin_sock_open(int target, const struct standin_delays *d, int qd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l, one = 1;

	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &al))
		goto fail;
	peer_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (peer_fd < 0 || connect(peer_fd, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	sock_fd = accept(l, NULL, NULL);
	if (sock_fd < 0)
		goto fail;
	close(l);
	l = -1;
	/* the stand-in is the accepted end (a target's) or, as a host, swaps
	 * roles with it: the ports in the records are this end's */
	if (!target) {
		int t = sock_fd;

		sock_fd = peer_fd;
		peer_fd = t;
	}
	setsockopt(sock_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(peer_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	al = sizeof(a);
	if (getsockname(sock_fd, (struct sockaddr *)&a, &al))
		goto fail;
	sock_lport = ntohs(a.sin_port);
	al = sizeof(a);
	if (getpeername(sock_fd, (struct sockaddr *)&a, &al))
		goto fail;
	sock_rport = ntohs(a.sin_port);
	peer_d = *d;
	peer_is_target = !target;
	peer_qd = qd > 0 ? qd : 1;
	if (pthread_create(&peer, NULL, peer_main, NULL)) {
		errno = EAGAIN;
		goto fail;
	}
	return 0;
fail:
	if (l >= 0)
		close(l);
	return -1;
}

void standin_sock_close(void)
{
	if (sock_fd < 0)
		return;
	atomic_store(&peer_stop, 1);
	shutdown(sock_fd, SHUT_RDWR);
	pthread_join(peer, NULL);
	close(sock_fd);
	close(peer_fd);
	sock_fd = peer_fd = -1;
}

/* --hold-us: a sampled command still in flight when the recorder stops
 * (the variable back to 0: said on stderr with the time it was seen),
 * finishing hold_ns later; --abandon: the first
 * one is freed without being handed over (as a qpair torn down), its probe
 * never fired. 1 when it was abandoned. */
static int hold(struct ntp_spdk_rec *r, const struct standin_delays *d)
{
	static int abandoned;

	if (!d->hold || !r->abi)
		return 0;
	while (ntprof_sample_n && !standin_quit)
		pause_ns(d, 200000);
	{
		struct timespec ts;

		/* for the tests' timing of the stop (CLOCK_REALTIME, as date +%s%N) */
		clock_gettime(CLOCK_REALTIME, &ts);
		fprintf(stderr, "standin: stop seen at %lld%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	}
	if (d->abandon && !abandoned) {
		abandoned = 1;
		r->abi = 0;
		return 1;
	}
	while (d->rearm && !ntprof_sample_n && !standin_quit)
		pause_ns(d, 200000);
	pause_ns(d, d->hold_ns);
	return 0;
}

static int is_write_r2t(const struct standin_cmd *c, const struct standin_delays *d)
{
	return c->opc == 0x01 && c->len > 8192 && d->r2t_ns;
}

int standin_host_cmd(const struct standin_cmd *c, const struct standin_delays *d, int rdma)
{
	struct ntp_spdk_rec r;
	uint32_t cdw12 = c->nlb;
	int sampled;

	ntprof_begin(&r, c->qid, c->cid, c->opc, c->nsid, (uint32_t)c->slba, (uint32_t)(c->slba >> 32), cdw12,
		     NTP_SPDK_H_SUBMIT, 0);
	sampled = r.abi != 0;
	if (sampled && d->submit_fail) {
		static int failed;

		/* as SPDK's RDMA host when the request cannot be built after
		 * the command was picked: put back unsent, the error returned */
		if (!failed) {
			failed = 1;
			NTPROF_DROP(&r);
			fprintf(stderr, "standin: a sampled command's submission failed\n");
			return 0;
		}
	}
	NTPROF_STAMP(&r, NTP_SPDK_H_CMD_SENT);
	if (!rdma && is_write_r2t(c, d)) {
		pause_ns(d, d->r2t_ns);
		NTPROF_STAMP(&r, NTP_SPDK_H_R2T_RECV);
		NTPROF_STAMP(&r, NTP_SPDK_H_DATA_SENT);
	}
	if (sock_fd >= 0 && !rdma) {
		static char buf[ANSWER_LEN];

		r.lport = sock_lport;
		r.rport = sock_rport;
		/* SPDK writes the queued capsule at its next flush */
		pause_ns(d, d->flush_ns);
		if (io_all(sock_fd, buf, CAPSULE_LEN, 1))
			return sampled;
		/* the answer's first read: its PDU header is parsed at once */
		if (io_all(sock_fd, buf, 24, 0))
			return sampled;
		NTPROF_STAMP(&r, NTP_SPDK_H_RSP_RECV);
		if (io_all(sock_fd, buf + 24, ANSWER_LEN - 24, 0))
			return sampled;
	} else {
		pause_ns(d, d->wait_ns);
	}
	if (hold(&r, d))
		return sampled;
	NTPROF_STAMP(&r, NTP_SPDK_H_RSP_RECV);
	r.cntlid = c->cntlid;
	r.len = c->len;
	/* as SPDK's hosts over TCP and RDMA: COMPLETE where the application's
	 * callback is called, the probe after the callback returned */
	NTPROF_STAMP(&r, NTP_SPDK_H_COMPLETE);
	if (rdma)
		DONE(nvme_rdma_done, &r);
	else
		DONE(nvme_tcp_done, &r);
	return sampled;
}

int standin_target_cmd(const struct standin_cmd *c, const struct standin_delays *d, int rdma)
{
	static char buf[ANSWER_LEN];
	int sock = sock_fd >= 0 && !rdma;
	struct ntp_spdk_rec r;
	int sampled;

	/* the capsule is read before SPDK knows the command */
	if (sock && pipe_read(buf, CAPSULE_LEN))
		return 0;
	ntprof_begin(&r, c->qid, c->cid, c->opc, c->nsid, (uint32_t)c->slba, (uint32_t)(c->slba >> 32), c->nlb,
		     NTP_SPDK_T_CMD_RECV, 0);
	sampled = r.abi != 0;
	if (sock) {
		r.lport = sock_lport;
		r.rport = sock_rport;
	}
	if (is_write_r2t(c, d)) {
		NTPROF_STAMP(&r, NTP_SPDK_T_R2T_SENT);
		pause_ns(d, d->r2t_ns);
		NTPROF_STAMP(&r, NTP_SPDK_T_DATA_RECV);
	}
	r.len = c->len;
	NTPROF_STAMP(&r, NTP_SPDK_T_EXEC);
	pause_ns(d, d->storage_ns);
	if (hold(&r, d))
		return sampled;
	NTPROF_STAMP(&r, NTP_SPDK_T_DONE);
	NTPROF_STAMP(&r, NTP_SPDK_T_RSP_QUEUED);
	NTPROF_STAMP_AS(&r, NTP_SPDK_T_RSP_SENT, NTP_SPDK_T_RSP_QUEUED);
	if (sock) {
		/* SPDK writes queued PDUs at its socket group's next flush */
		pause_ns(d, d->flush_ns);
		if (io_all(sock_fd, buf, ANSWER_LEN, 1))
			return sampled;
	}
	r.cntlid = c->cntlid;
	if (rdma)
		DONE(nvmf_rdma_done, &r);
	else
		DONE(nvmf_tcp_done, &r);
	return sampled;
}
