/* SPDX-License-Identifier: GPL-2.0 */
/*
 * clock.h - the two clocks a recording is stamped with: CLOCK_MONOTONIC (the
 * clock of bpf_ktime_get_ns(), so of every record's timestamps) and
 * CLOCK_REALTIME (to date the file). Shared by `ntprof record` and ntprof-top.
 */
#ifndef NTP_CLOCK_H
#define NTP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t ntp_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ntp_mono_ns(void)
{
	return ntp_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t ntp_real_ns(void)
{
	return ntp_clock_ns(CLOCK_REALTIME);
}

#endif
