/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ntprof_usdt.h - the few helpers that spdk/ntprof-usdt.patch calls from
 * SPDK's NVMe-oF code (and tests/tools/spdk-standin*.c from its own):
 * decide with the kernel side's hash whether a command is sampled, stamp
 * the sampled ones, fire the probe when the command is finished on its side.
 *
 * spdk/apply.sh copies it with bpf/ntprof_spdk.h and bpf/ntprof_hash.h into
 * the SPDK tree's include/spdk_internal/. An unsampled command costs one load
 * of the sampling variable and, when it is not 0, one hash (docs/spdk.md); a
 * sampled one also counts itself begun and done in its thread's slot of
 * ntprof_inflight, for the recorder's stop.
 */
#ifndef NTPROF_USDT_H
#define NTPROF_USDT_H

#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/sdt.h>
#include "ntprof_hash.h"
#include "ntprof_spdk.h"

/* x86-64: each probe fires twice at the same point, on sys/sdt.h's 1-byte
 * nop under its name and on a 5-byte nop (nopl 0x0(%rax,%rax,1)) under its
 * name with "_nop5"; unattached, each is its nop. ntprof attaches one of
 * the two: the _nop5 one where the kernel optimizes uprobes on x86-64
 * (arch_uprobe_optimize in /proc/kallsyms), which turns a probed 5-byte nop
 * into a call to a trampoline and a system call after its first hit, in
 * place of an int3 trap at every sampled command; the 1-byte one on other
 * kernels, which trap on either and single-step a 5-byte nop out of line
 * where they emulate the 1-byte one (docs/performance.md, "The probe's
 * site"). The 5-byte probes are made by functions defined here with
 * sys/sdt.h's _SDT_NOP redefined around them, one per probe name of
 * spdk/ntprof-usdt.patch: the bytes are spelled out since a comma would
 * split sys/sdt.h's macro arguments and the string is an asm template. */
#if defined(__x86_64__)
#undef _SDT_NOP
#define _SDT_NOP .byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00
#define NTPROF_FIRE5_DEF(probe)								\
static inline __attribute__((always_inline)) void ntprof_fire5_##probe(struct ntp_spdk_rec *r)	\
{											\
	DTRACE_PROBE3(ntprof, probe##_nop5, NTP_SPDK_ABI, r, sizeof(*r));		\
}
NTPROF_FIRE5_DEF(nvme_tcp_done)
NTPROF_FIRE5_DEF(nvme_rdma_done)
NTPROF_FIRE5_DEF(nvmf_tcp_done)
NTPROF_FIRE5_DEF(nvmf_rdma_done)
#undef _SDT_NOP
#define _SDT_NOP nop
#define NTPROF_FIRE5(probe, r) ntprof_fire5_##probe(r)
#else
#define NTPROF_FIRE5(probe, r) do { } while (0)
#endif

/* 0: sample nothing (the default); N: one command in N. ntprof writes it in
 * the running process through /proc/PID/mem. Defined once per process (SPDK:
 * lib/nvme), exported by that library's version script. */
extern volatile uint32_t ntprof_sample_n;

/* The sampled commands begun and handed over, per thread (bpf/ntprof_spdk.h,
 * struct ntp_spdk_flight): what ntprof's stop waits on. Defined next to
 * ntprof_sample_n and exported the same way. */
extern struct ntp_spdk_flight ntprof_inflight;

/* This thread's slot, per file that includes this header (begin and done of
 * one command are in the same file); shared: the slot is the last one,
 * shared by the threads that came after the others were taken. */
static __thread struct ntp_spdk_flight_slot *ntprof_slot_t;
static __thread int ntprof_slot_shared_t;

/* Counts a sampled command begun (done 0) or handed over (done 1): a plain
 * store on this thread's own cache line (release: a done is seen after its
 * record); only a thread's first sampled command takes a slot atomically. */
static inline void ntprof_count(int done)
{
	struct ntp_spdk_flight_slot *s = ntprof_slot_t;
	__u64 *c;

	if (__builtin_expect(s == NULL, 0)) {
		uint32_t i = __atomic_fetch_add(&ntprof_inflight.taken, 1, __ATOMIC_RELAXED);

		ntprof_slot_shared_t = i >= NTP_SPDK_FLIGHT_SLOTS - 1;
		s = ntprof_slot_t = &ntprof_inflight.slot[ntprof_slot_shared_t ? NTP_SPDK_FLIGHT_SLOTS - 1 : i];
	}
	c = done ? &s->done : &s->begun;
	if (__builtin_expect(ntprof_slot_shared_t, 0))
		__atomic_fetch_add(c, 1, __ATOMIC_RELEASE);
	else
		__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

static inline uint64_t ntprof_now(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC is the kernel's ktime: SPDK's stamps subtract from
	 * the kernel side's (bpf_ktime_get_ns) on the same machine. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A stamp inside a command's interval is a cycle counter read, not a clock
 * read: a sampled command takes some ten stamps on its two sides while the
 * application's clock runs, and clock_gettime() costs several times what the
 * counter does (a vDSO call that reads it and scales it), which made the
 * sampled commands measurably slower than the others (docs/spdk.md). When
 * the probe fires, outside the interval, ntprof_settle() reads the clock
 * once and turns the counter stamps back into CLOCK_MONOTONIC ns, at the
 * counter's rate measured by this thread over at least NTPROF_CAL_NS. Until
 * then, or where the counter is not a constant-rate one, stamps read the
 * clock as before.
 */
#define NTPROF_CYC_ON	(1u << 31)	/* in cyc: this record stamps in cycles */
#define NTPROF_CAL_NS	10000000ull	/* the shortest span a rate is taken over */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
static inline uint64_t ntprof_cycles(void)
{
	return __rdtsc();
}

/* The TSC ticks at one rate in every P-state and C-state ("invariant TSC",
 * CPUID 0x80000007 EDX bit 8), which is what lets the kernel build its
 * clock on it. */
static inline int ntprof_cycles_usable(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
}
#elif defined(__aarch64__)
static inline uint64_t ntprof_cycles(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

/* The generic timer's counter has a fixed frequency by architecture. */
static inline int ntprof_cycles_usable(void)
{
	return 1;
}
#else
static inline uint64_t ntprof_cycles(void)
{
	return 0;
}

static inline int ntprof_cycles_usable(void)
{
	return 0;
}
#endif

/* Per thread (SPDK's reactors are pinned threads), per file that includes
 * this header: a pair read at the first settle, and once NTPROF_CAL_NS have
 * passed, the counter's rate in ns per cycle. state: 0 not begun, 1 base
 * taken, 2 rate known, -1 no usable counter. */
struct ntprof_cal {
	uint64_t cyc, ns;
	double ns_per_cyc;
	int state;
};
static __thread struct ntprof_cal ntprof_cal_t;

/* The clock and the counter at one instant: the counter read on both sides
 * of the clock read, so the pair is not skewed by the clock read's length. */
static inline void ntprof_pair(uint64_t *cyc, uint64_t *ns)
{
	uint64_t a = ntprof_cycles();

	*ns = ntprof_now();
	*cyc = a + (ntprof_cycles() - a) / 2;
}

/* A stamp: cycles on a record that stamps in cycles, else the clock. */
static inline uint64_t ntprof_stamp_now(uint32_t *cyc, unsigned i)
{
	if (*cyc) {
		*cyc |= 1u << i;
		return ntprof_cycles();
	}
	return ntprof_now();
}

/* Before the probe fires: CLOCK_MONOTONIC ns in every slot, the clock read
 * here anchoring the counter stamps; and this thread's rate updated. */
static inline void ntprof_settle(struct ntp_spdk_rec *r)
{
	struct ntprof_cal *c = &ntprof_cal_t;
	uint64_t cyc, ns;
	unsigned i;

	if (c->state < 0 || (c->state == 0 && !ntprof_cycles_usable())) {
		c->state = -1;
		r->cyc = 0;
		return;
	}
	ntprof_pair(&cyc, &ns);
	if (c->state == 0) {
		c->cyc = cyc;
		c->ns = ns;
		c->state = 1;
	} else if (ns - c->ns >= NTPROF_CAL_NS && cyc > c->cyc) {
		/* over the whole span since the base: the longer, the finer */
		c->ns_per_cyc = (double)(ns - c->ns) / (double)(cyc - c->cyc);
		c->state = 2;
	}
	for (i = 0; i < NTP_SPDK_TS && (r->cyc & ~NTPROF_CYC_ON); i++) {
		uint64_t back;

		if (!(r->cyc & (1u << i)))
			continue;
		r->cyc &= ~(1u << i);
		back = cyc > r->ts[i] ? (uint64_t)((double)(cyc - r->ts[i]) * c->ns_per_cyc) : 0;
		r->ts[i] = back < ns ? ns - back : 1;
	}
	r->cyc = 0;
}

/*
 * A command's identity from its SQE, and the decision. The hash's inputs are
 * the kernel side's (bpf/ntprof.bpf.c): cid, SQE dwords 10-11 and the low
 * half of dword 12, on I/O queues only. t0 is the side's first stamp.
 */
static inline void ntprof_begin(struct ntp_spdk_rec *r, uint16_t sqid, uint16_t cid, uint8_t opc,
				uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw12,
				unsigned first_slot, uint64_t t0)
{
	uint32_t n = ntprof_sample_n;
	uint64_t slba = (uint64_t)cdw11 << 32 | cdw10;
	uint16_t nlb = (uint16_t)(cdw12 & 0xffff);

	r->abi = 0;
	if (__builtin_expect(n == 0, 1) || sqid == 0 || !ntp_sample_pick(cid, slba, nlb, n))
		return;
	memset(r, 0, sizeof(*r));
	r->abi = NTP_SPDK_ABI;
	r->size = sizeof(*r);
	r->sample_n = n;
	r->sqid = sqid;
	r->cid = cid;
	r->opc = opc;
	r->nsid = nsid;
	r->slba = slba;
	r->nlb = nlb;
	/* soon after the decision: the recorder's stop may be looking, having
	 * just written 0 (docs/spdk.md); after the last use of n, which would
	 * otherwise be kept across the call that finds the thread's slot, and
	 * make even an unsampled command save a register. The count and the
	 * second look-up of a thread variable (ntprof_cal_t) fall before the
	 * first stamp on the target, outside the command's times; on the host,
	 * whose first stamp (t0, SUBMIT) was taken when the request was built,
	 * inside SUBMIT -> CMD_SENT (docs/spdk.md, "What a stamp costs"). */
	ntprof_count(0);
	if (ntprof_cal_t.state == 2)
		r->cyc = NTPROF_CYC_ON;
	r->ts[first_slot] = t0 ? t0 : ntprof_stamp_now(&r->cyc, first_slot);
}

/* The first time a sampled command reaches slot i. */
#define NTPROF_STAMP(r, i) do {						\
	if (__builtin_expect((r)->abi != 0, 0) && !(r)->ts[(i)])		\
		(r)->ts[(i)] = ntprof_stamp_now(&(r)->cyc, (i));		\
} while (0)

/* Slot j at the instant slot i was just stamped: the same time without a
 * second read. */
#define NTPROF_STAMP_AS(r, j, i) do {					\
	if (__builtin_expect((r)->abi != 0, 0) && !(r)->ts[(j)]) {	\
		(r)->ts[(j)] = (r)->ts[(i)];				\
		(r)->cyc |= ((r)->cyc >> (i) & 1u) << (j);		\
	}								\
} while (0)

/* The command is finished on this side: hand the record over, once; then
 * count it done (after the probe, whose record is then in ntprof's ring). */
#define NTPROF_DONE(probe, r) do {						\
	if (__builtin_expect((r)->abi != 0, 0)) {				\
		ntprof_settle(r);						\
		DTRACE_PROBE3(ntprof, probe, NTP_SPDK_ABI, (r), sizeof(*(r)));	\
		NTPROF_FIRE5(probe, (r));					\
		(r)->abi = 0;							\
		__asm__ __volatile__("" ::: "memory");				\
		ntprof_count(1);						\
	}									\
} while (0)

/* The command does not start on this side after all: its submission failed
 * after ntprof_begin, the request put back unsent and the error returned to
 * the submitter (SPDK's RDMA host, nvme_rdma_qpair_submit_request). No
 * record: nothing was sent, there is no time to measure and no other side
 * to join. Counted done, or the recorder's stop would wait its second for
 * it and count it lost (docs/spdk.md). */
#define NTPROF_DROP(r) do {						\
	if (__builtin_expect((r)->abi != 0, 0)) {			\
		(r)->abi = 0;						\
		ntprof_count(1);					\
	}								\
} while (0)

#endif /* NTPROF_USDT_H */
