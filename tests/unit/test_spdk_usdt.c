// SPDX-License-Identifier: GPL-2.0
/*
 * test_spdk_usdt.c - the stamps of spdk/ntprof_usdt.h, the helpers that
 * ntprof's SPDK patch and the stand-in call: a sampled command's stamps are
 * CLOCK_MONOTONIC ns when its probe fires, whether they were taken as clock
 * reads (before this thread knows its counter's rate) or as cycle counter
 * reads (after), each within the clock reads taken around it; the count of
 * sampled commands in flight (ntprof_inflight): begun and done per thread,
 * each thread in a slot of its own up to the last, shared one, nothing
 * counted for an unsampled command, and a dropped one (its submission
 * failed) counted done without its probe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>
#include <pthread.h>

#if __has_include(<sys/sdt.h>)
#include "../../spdk/ntprof_usdt.h"

volatile uint32_t ntprof_sample_n;
struct ntp_spdk_flight ntprof_inflight;

/* begun and done summed over the slots, as the recorder sums them */
static void flight_sums(uint64_t *begun, uint64_t *done)
{
	*begun = *done = 0;
	for (unsigned i = 0; i < NTP_SPDK_FLIGHT_SLOTS; i++) {
		*begun += ntprof_inflight.slot[i].begun;
		*done += ntprof_inflight.slot[i].done;
	}
}

/* what a stamp may differ from the clock reads around it: the two reads
 * that anchor the cycle stamps at the probe are ~100 ns apart here, and a
 * sanitized build is slower */
#define SLACK_NS 2000

static void spin_ns(uint64_t ns)
{
	uint64_t end = ntprof_now() + ns;

	while (ntprof_now() < end)
		;
}

/* One sampled command on the target's side: each stamp taken between two
 * clock reads, 200 us apart, the two response slots from one read. */
static void one_command(struct ntp_spdk_rec *r, uint64_t lo[NTP_SPDK_TS], uint64_t hi[NTP_SPDK_TS],
			uint32_t *cyc_at_done)
{
	static const unsigned slots[] = { NTP_SPDK_T_EXEC, NTP_SPDK_T_DONE, NTP_SPDK_T_RSP_QUEUED };
	unsigned i;

	lo[NTP_SPDK_T_CMD_RECV] = ntprof_now();
	ntprof_begin(r, 1, 7, 2, 1, 4096, 0, 7, NTP_SPDK_T_CMD_RECV, 0);
	hi[NTP_SPDK_T_CMD_RECV] = ntprof_now();
	assert_int_equal(r->abi, NTP_SPDK_ABI);
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		spin_ns(200000);
		lo[slots[i]] = ntprof_now();
		NTPROF_STAMP(r, slots[i]);
		hi[slots[i]] = ntprof_now();
	}
	NTPROF_STAMP_AS(r, NTP_SPDK_T_RSP_SENT, NTP_SPDK_T_RSP_QUEUED);
	lo[NTP_SPDK_T_RSP_SENT] = lo[NTP_SPDK_T_RSP_QUEUED];
	hi[NTP_SPDK_T_RSP_SENT] = hi[NTP_SPDK_T_RSP_QUEUED];
	*cyc_at_done = r->cyc;
	NTPROF_DONE(nvmf_tcp_done, r);
}

static void check_stamps(const struct ntp_spdk_rec *r, const uint64_t lo[NTP_SPDK_TS],
			 const uint64_t hi[NTP_SPDK_TS], uint64_t slack)
{
	static const unsigned slots[] = { NTP_SPDK_T_CMD_RECV, NTP_SPDK_T_EXEC, NTP_SPDK_T_DONE,
					  NTP_SPDK_T_RSP_QUEUED, NTP_SPDK_T_RSP_SENT };
	unsigned i;

	assert_int_equal(r->abi, 0); /* handed over */
	assert_int_equal(r->cyc, 0); /* every slot in ns again */
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		unsigned s = slots[i];

		if (r->ts[s] + slack < lo[s] || r->ts[s] > hi[s] + slack)
			fail_msg("slot %u: %llu ns, outside [%llu, %llu] +- %llu", s, (unsigned long long)r->ts[s],
				 (unsigned long long)lo[s], (unsigned long long)hi[s], (unsigned long long)slack);
	}
	assert_int_equal(r->ts[NTP_SPDK_T_RSP_SENT], r->ts[NTP_SPDK_T_RSP_QUEUED]);
	assert_int_equal(r->ts[NTP_SPDK_T_R2T_SENT], 0);
}

static void test_clock_then_cycles(void **state)
{
	struct ntp_spdk_rec r;
	uint64_t lo[NTP_SPDK_TS] = { 0 }, hi[NTP_SPDK_TS] = { 0 };
	uint32_t cyc;
	int n;

	(void)state;
	ntprof_sample_n = 1;
	/* a fresh thread: stamps are clock reads, exactly between their bounds */
	one_command(&r, lo, hi, &cyc);
	assert_int_equal(cyc, 0);
	check_stamps(&r, lo, hi, 0);
	if (!ntprof_cycles_usable()) {
		assert_int_equal(ntprof_cal_t.state, -1);
		return;
	}
	/* the rate is known once a probe fired NTPROF_CAL_NS after the first */
	for (n = 0; ntprof_cal_t.state != 2 && n < 100; n++) {
		spin_ns(1000000);
		one_command(&r, lo, hi, &cyc);
		check_stamps(&r, lo, hi, cyc ? SLACK_NS : 0);
	}
	assert_int_equal(ntprof_cal_t.state, 2);
	for (n = 0; n < 20; n++) {
		one_command(&r, lo, hi, &cyc);
		/* all five slots stamped as cycles, and the flag */
		assert_int_equal(cyc, NTPROF_CYC_ON | 1u << NTP_SPDK_T_CMD_RECV | 1u << NTP_SPDK_T_EXEC |
					      1u << NTP_SPDK_T_DONE | 1u << NTP_SPDK_T_RSP_QUEUED |
					      1u << NTP_SPDK_T_RSP_SENT);
		check_stamps(&r, lo, hi, SLACK_NS);
	}
	ntprof_sample_n = 0;
}

/* A start time handed in (the host's, taken when the request was built) is
 * kept as it is: only the slots stamped as cycles are converted. */
static void test_given_start_kept(void **state)
{
	struct ntp_spdk_rec r;
	uint64_t t0;

	(void)state;
	ntprof_sample_n = 1;
	t0 = ntprof_now() - 5000;
	ntprof_begin(&r, 1, 3, 2, 1, 8, 0, 7, NTP_SPDK_H_SUBMIT, t0);
	assert_int_equal(r.ts[NTP_SPDK_H_SUBMIT], t0);
	assert_int_equal(r.cyc & (1u << NTP_SPDK_H_SUBMIT), 0);
	NTPROF_STAMP(&r, NTP_SPDK_H_CMD_SENT);
	NTPROF_STAMP(&r, NTP_SPDK_H_COMPLETE);
	NTPROF_DONE(nvme_tcp_done, &r);
	assert_int_equal(r.ts[NTP_SPDK_H_SUBMIT], t0);
	assert_true(r.ts[NTP_SPDK_H_CMD_SENT] > t0);
	assert_true(r.ts[NTP_SPDK_H_COMPLETE] + SLACK_NS >= r.ts[NTP_SPDK_H_CMD_SENT]);
	assert_true(r.ts[NTP_SPDK_H_COMPLETE] <= ntprof_now() + SLACK_NS);
	ntprof_sample_n = 0;
}

/* Not sampled: nothing is stamped, the probe does not fire, nothing is
 * counted (with sampling on, a command the hash does not pick either). */
static void test_unsampled(void **state)
{
	struct ntp_spdk_flight before = ntprof_inflight;
	struct ntp_spdk_rec r;
	unsigned picked = 0;

	(void)state;
	ntprof_sample_n = 0;
	memset(&r, 0xff, sizeof(r));
	ntprof_begin(&r, 1, 3, 2, 1, 8, 0, 7, NTP_SPDK_H_SUBMIT, 0);
	assert_int_equal(r.abi, 0);
	NTPROF_STAMP(&r, NTP_SPDK_H_CMD_SENT);
	assert_int_equal(r.ts[NTP_SPDK_H_CMD_SENT], ~0ull);
	NTPROF_DONE(nvme_tcp_done, &r);
	assert_memory_equal(&before, &ntprof_inflight, sizeof(before));
	ntprof_sample_n = 1000;
	for (uint16_t cid = 0; cid < 64; cid++) {
		ntprof_begin(&r, 1, cid, 2, 1, 8u * cid, 0, 7, NTP_SPDK_H_SUBMIT, 0);
		picked += r.abi != 0;
		NTPROF_DONE(nvme_tcp_done, &r);
	}
	ntprof_sample_n = 0;
	if (!picked)
		assert_memory_equal(&before, &ntprof_inflight, sizeof(before));
}

/* Each thread's sampled commands: begun at ntprof_begin, done after the
 * probe; in flight in between. */
#define PER_THREAD 1000
#define THREADS (NTP_SPDK_FLIGHT_SLOTS + 8)

static void *flight_thread(void *arg)
{
	struct ntp_spdk_rec r;

	for (unsigned i = 0; i < PER_THREAD; i++) {
		ntprof_begin(&r, 1, (uint16_t)i, 2, 1, 8 * i, 0, 7, NTP_SPDK_T_CMD_RECV, 0);
		NTPROF_DONE(nvmf_tcp_done, &r);
	}
	*(struct ntp_spdk_flight_slot **)arg = ntprof_slot_t;
	return NULL;
}

static void test_inflight(void **state)
{
	struct ntp_spdk_flight_slot *slot[THREADS];
	pthread_t t[THREADS];
	uint64_t b0, d0, b, d;
	struct ntp_spdk_rec r;
	unsigned i, k;

	(void)state;
	ntprof_sample_n = 1;
	flight_sums(&b0, &d0);
	/* one command in flight on this thread, then handed over */
	ntprof_begin(&r, 1, 9, 2, 1, 8, 0, 7, NTP_SPDK_T_CMD_RECV, 0);
	flight_sums(&b, &d);
	assert_int_equal(b - d, b0 - d0 + 1);
	assert_non_null(ntprof_slot_t);
	assert_int_equal(ntprof_slot_t->begun - ntprof_slot_t->done, 1);
	NTPROF_DONE(nvmf_tcp_done, &r);
	flight_sums(&b, &d);
	assert_int_equal(b - d, b0 - d0);
	assert_int_equal(b - b0, 1);
	/* threads at once: all counted, past the slots' number too (the last
	 * slot shared with atomics); each of the first ones on its own slot */
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, flight_thread, &slot[i]), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	flight_sums(&b, &d);
	assert_int_equal(b - b0, 1 + (uint64_t)THREADS * PER_THREAD);
	assert_int_equal(d - d0, 1 + (uint64_t)THREADS * PER_THREAD);
	assert_true(ntprof_inflight.taken >= THREADS);
	for (i = 0; i < THREADS; i++) {
		unsigned same = 0;

		for (k = 0; k < THREADS; k++)
			same += slot[k] == slot[i];
		if (slot[i] != &ntprof_inflight.slot[NTP_SPDK_FLIGHT_SLOTS - 1])
			assert_int_equal(same, 1);
	}
	assert_int_equal(ntprof_inflight.slot[NTP_SPDK_FLIGHT_SLOTS - 1].begun,
			 ntprof_inflight.slot[NTP_SPDK_FLIGHT_SLOTS - 1].done);
	assert_true(ntprof_inflight.slot[NTP_SPDK_FLIGHT_SLOTS - 1].begun >= 9ull * PER_THREAD);
	ntprof_sample_n = 0;
}

/* A sampled command whose submission fails after ntprof_begin (SPDK's RDMA
 * host puts the request back unsent): NTPROF_DROP counts it done, so begun
 * - done is back where it was and the recorder's stop does not wait for
 * it; the record is spent, a DONE after it counts nothing. Unsampled, it
 * does nothing. */
static void test_dropped(void **state)
{
	struct ntp_spdk_rec r;
	uint64_t b0, d0, b, d;

	(void)state;
	ntprof_sample_n = 1;
	flight_sums(&b0, &d0);
	ntprof_begin(&r, 1, 5, 2, 1, 8, 0, 7, NTP_SPDK_H_SUBMIT, 0);
	assert_int_equal(r.abi, NTP_SPDK_ABI);
	flight_sums(&b, &d);
	assert_int_equal(b - d, b0 - d0 + 1);
	NTPROF_DROP(&r);
	assert_int_equal(r.abi, 0);
	flight_sums(&b, &d);
	assert_int_equal(b - b0, 1);
	assert_int_equal(d - d0, 1);
	NTPROF_DROP(&r);
	NTPROF_DONE(nvme_rdma_done, &r);
	ntprof_sample_n = 0;
	ntprof_begin(&r, 1, 6, 2, 1, 16, 0, 7, NTP_SPDK_H_SUBMIT, 0);
	NTPROF_DROP(&r);
	flight_sums(&b, &d);
	assert_int_equal(b - b0, 1);
	assert_int_equal(d - d0, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_then_cycles),
		cmocka_unit_test(test_given_start_kept),
		cmocka_unit_test(test_unsampled),
		cmocka_unit_test(test_inflight),
		cmocka_unit_test(test_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
	return 0; /* no <sys/sdt.h>: spdk/ntprof_usdt.h is not built here */
}
#endif
