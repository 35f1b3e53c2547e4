/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe_spdk.h - the SPDK part of `ntprof probe` (--spdk-host/--spdk-target):
 * the USDT probes of a binary and its libraries, its running processes with
 * the sampling variable in each, the socket hooks, the USDT program.
 */
#ifndef NTP_PROBE_SPDK_H
#define NTP_PROBE_SPDK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* side: NTP_SIDE_HOST or NTP_SIDE_TARGET. Returns 0 when that side can be
 * recorded, else -1 with the reason in why. */
int ntp_probe_spdk(FILE *f, const char *bin, unsigned side, uint8_t transport, bool fentry_ok, bool kprobes,
		   char *why, size_t whylen);

#endif
