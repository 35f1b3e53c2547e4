// SPDX-License-Identifier: GPL-2.0
/*
 * test_spdk_usdt.c - the stamps of spdk/ntprof_usdt.h, the helpers that
 * ntprof's SPDK patch and the stand-in call: a sampled command's stamps are
 * CLOCK_MONOTONIC ns when its probe fires, whether they were taken as clock
 * reads (before this thread knows its counter's rate) or as cycle counter
 * reads (after), each within the clock reads taken around it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>

#if __has_include(<sys/sdt.h>)
#include "../../spdk/ntprof_usdt.h"

volatile uint32_t ntprof_sample_n;

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

/* Not sampled: nothing is stamped, the probe does not fire. */
static void test_unsampled(void **state)
{
	struct ntp_spdk_rec r;

	(void)state;
	ntprof_sample_n = 0;
	memset(&r, 0xff, sizeof(r));
	ntprof_begin(&r, 1, 3, 2, 1, 8, 0, 7, NTP_SPDK_H_SUBMIT, 0);
	assert_int_equal(r.abi, 0);
	NTPROF_STAMP(&r, NTP_SPDK_H_CMD_SENT);
	assert_int_equal(r.ts[NTP_SPDK_H_CMD_SENT], ~0ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_then_cycles),
		cmocka_unit_test(test_given_start_kept),
		cmocka_unit_test(test_unsampled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
	return 0; /* no <sys/sdt.h>: spdk/ntprof_usdt.h is not built here */
}
#endif
