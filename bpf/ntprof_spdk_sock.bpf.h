/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntprof_spdk_sock.bpf.h - the kernel socket calls of SPDK's NVMe/TCP, which
 * still sends and receives through the kernel's TCP (docs/spdk.md, "The
 * socket hooks"). Included by ntprof_spdk.bpf.c: its USDT programs, fired
 * once per sampled command when the command is finished on its side, take
 * from here what SPDK cannot see itself:
 *
 *   tcp_recvmsg             SPDK's poller reads a socket (context only)
 *   skb_copy_datagram_iter  an skb of that socket is copied to SPDK: its
 *                           receive time (skb->tstamp) is when the data
 *                           reached the socket
 *   tcp_sendmsg             SPDK hands PDUs to the kernel (the target's
 *                           response, the host's capsule and data leave at
 *                           its socket layer's next flush)
 *
 * Every program first checks that the calling process is one being recorded
 * (spdk_pids, filled by src/collector/spdk.c); any other process pays that
 * one lookup and nothing more.
 *
 * Per connection (key: process, local and remote port; the patch puts the
 * ports in the command's record) two small rings: the reads that copied
 * data (time of the read, arrival of the newest skb it copied) and the
 * sends. A command's record gives, per side, the time SPDK parsed a PDU of
 * it (target CMD_RECV, DATA_RECV; host RSP_RECV, R2T_RECV): SPDK's posix
 * socket layer reads a socket only when its buffer is empty, so the PDU's
 * bytes came with the last read of that connection before that time; the
 * PDU had arrived at the latest with the newest skb of that read. The
 * target's response was written by the first send on the connection after
 * it was queued (RSP_QUEUED), the host's capsule and H2C data likewise
 * (CMD_SENT, DATA_SENT). Times of other commands on the same
 * connection never enter: the rings are searched by the command's own
 * times, which holds at any queue depth.
 */
#ifndef NTP_SPDK_SOCK_BPF_H
#define NTP_SPDK_SOCK_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#define NTP_SREADS 64
#define NTP_SSENDS 32

/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns, written by user space: the
 * kernel stamps received skbs with the real-time clock (net_timestamp_check,
 * once any socket asked for receive timestamps; the collector keeps one
 * such socket open while it records). */
volatile __s64 real_minus_mono = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);		/* tgid */
	__type(value, __u8);
} spdk_pids SEC(".maps");

struct ntp_sconn {
	__u64 rd_t[NTP_SREADS];		/* entry of a tcp_recvmsg that copied data */
	__u64 rd_a[NTP_SREADS];		/* arrival of the newest skb it copied; 0: unknown */
	__u64 sd_t[NTP_SSENDS];		/* entry of a tcp_sendmsg */
	__u32 rd_head, sd_head;
};

static const struct ntp_sconn sconn_zero = {};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct ntp_sconn);
} spdk_conns SEC(".maps");

/* The read in progress, per thread. */
struct ntp_sread {
	__u64 sk;
	__u64 key;
	__u64 t;
	__u32 idx;
	__u32 pushed;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ntp_sread);
} spdk_reads SEC(".maps");

static __always_inline __u64 sconn_key(__u32 tgid, __u16 lport, __u16 rport)
{
	return (__u64)tgid << 32 | (__u32)lport << 16 | rport;
}

static __always_inline __u64 sk_sconn_key(struct sock *sk, __u32 tgid)
{
	__u16 lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	__u16 rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));

	return sconn_key(tgid, lport, rport);
}

static __always_inline struct ntp_sconn *sconn_get(__u64 key)
{
	struct ntp_sconn *c = bpf_map_lookup_elem(&spdk_conns, &key);

	if (c)
		return c;
	/* too big for the stack: a zeroed value from .rodata */
	bpf_map_update_elem(&spdk_conns, &key, (const void *)&sconn_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&spdk_conns, &key);
}

static __always_inline int s_recv(struct sock *sk)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tgid = pt >> 32, tid = (__u32)pt;
	struct ntp_sread r = {};

	if (!bpf_map_lookup_elem(&spdk_pids, &tgid))
		return 0;
	r.sk = (__u64)sk;
	r.key = sk_sconn_key(sk, tgid);
	r.t = bpf_ktime_get_ns();
	bpf_map_update_elem(&spdk_reads, &tid, &r, BPF_ANY);
	return 0;
}

static __always_inline int s_copy(const struct sk_buff *skb)
{
	__u64 pt = bpf_get_current_pid_tgid(), now, a;
	__u32 tgid = pt >> 32, tid = (__u32)pt, i;
	struct ntp_sconn *c;
	struct ntp_sread *r;
	__s64 ts;

	if (!bpf_map_lookup_elem(&spdk_pids, &tgid))
		return 0;
	r = bpf_map_lookup_elem(&spdk_reads, &tid);
	/* the skb of the socket this thread's last tcp_recvmsg reads (UDP and
	 * unix sockets copy with this function too) */
	if (!r || r->sk != (__u64)BPF_CORE_READ(skb, sk))
		return 0;
	now = bpf_ktime_get_ns();
	ts = BPF_CORE_READ(skb, tstamp);
	a = ts ? (__u64)(ts - real_minus_mono) : 0;
	/* not the real-time clock (no receive timestamps, or a delivery time of
	 * another clock): unknown */
	if (a > now || now - a > 10000000000ull)
		a = 0;
	c = sconn_get(r->key);
	if (!c)
		return 0;
	if (!r->pushed) {
		i = c->rd_head % NTP_SREADS;
		c->rd_t[i] = r->t;
		c->rd_a[i] = a;
		c->rd_head += 1;
		r->idx = i;
		r->pushed = 1;
	} else if (a) {
		i = r->idx % NTP_SREADS;
		c->rd_a[i] = a;
	}
	return 0;
}

static __always_inline int s_send(struct sock *sk)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, i;
	struct ntp_sconn *c;

	if (!bpf_map_lookup_elem(&spdk_pids, &tgid))
		return 0;
	c = sconn_get(sk_sconn_key(sk, tgid));
	if (!c)
		return 0;
	i = c->sd_head % NTP_SSENDS;
	c->sd_t[i] = bpf_ktime_get_ns();
	c->sd_head += 1;
	return 0;
}

SEC("fentry/tcp_recvmsg")
int BPF_PROG(ntp_s_recvmsg_fe, struct sock *sk)
{
	return s_recv(sk);
}

SEC("kprobe/tcp_recvmsg")
int BPF_KPROBE(ntp_s_recvmsg_kp, struct sock *sk)
{
	return s_recv(sk);
}

SEC("fentry/skb_copy_datagram_iter")
int BPF_PROG(ntp_s_copy_fe, const struct sk_buff *skb)
{
	return s_copy(skb);
}

SEC("kprobe/skb_copy_datagram_iter")
int BPF_KPROBE(ntp_s_copy_kp, const struct sk_buff *skb)
{
	return s_copy(skb);
}

SEC("fentry/tcp_sendmsg")
int BPF_PROG(ntp_s_sendmsg_fe, struct sock *sk)
{
	return s_send(sk);
}

SEC("kprobe/tcp_sendmsg")
int BPF_KPROBE(ntp_s_sendmsg_kp, struct sock *sk)
{
	return s_send(sk);
}

/* ---- consumed by the USDT programs ---- */

static __always_inline struct ntp_sconn *sconn_of(__u16 lport, __u16 rport)
{
	__u64 key;

	if (!lport || !rport)
		return NULL;
	key = sconn_key(bpf_get_current_pid_tgid() >> 32, lport, rport);
	return bpf_map_lookup_elem(&spdk_conns, &key);
}

/* Arrival of the data of the last read before t (a PDU parsed at t), not
 * before lo (the command cannot have been answered before it was sent); 0:
 * unknown (no such read left in the ring, or its arrival unknown). */
static __always_inline __u64 sconn_arrival(const struct ntp_sconn *c, __u64 t, __u64 lo)
{
	__u64 best = 0, a = 0;

	if (!t)
		return 0;
	for (int k = 0; k < NTP_SREADS; k++) {
		__u64 rt = c->rd_t[k];

		if (rt && rt <= t && rt > best) {
			best = rt;
			a = c->rd_a[k];
		}
	}
	return a && a <= t && a >= lo ? a : 0;
}

/* The first send at or after t; 0 when the ring no longer covers t. */
static __always_inline __u64 sconn_send_after(const struct ntp_sconn *c, __u64 t)
{
	__u64 first = 0;
	bool covered = c->sd_head <= NTP_SSENDS;

	if (!t)
		return 0;
	for (int k = 0; k < NTP_SSENDS; k++) {
		__u64 st = c->sd_t[k];

		if (!st)
			continue;
		if (st < t)
			covered = true;
		else if (!first || st < first)
			first = st;
	}
	return covered ? first : 0;
}

#endif
