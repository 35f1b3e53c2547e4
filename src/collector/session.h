/* SPDX-License-Identifier: GPL-2.0 */
/*
 * session.h - the target side of a session: which of the target's namespaces
 * the recording follows, named by the backing device its records carry (the
 * nvmet namespace's device_path, as the target hooks read it: "/dev/nullb0"
 * -> "nullb0"). From --target-session NQN:NSID, or with -r both from the
 * host's --session namespace (its subsystem NQN and NSID in sysfs), looked
 * up in this machine's nvmet configfs.
 */
#ifndef NTP_COLLECTOR_SESSION_H
#define NTP_COLLECTOR_SESSION_H

#include <stddef.h>
#include "collector.h"

/* The checks of --session and --target-session that need no machine, for
 * option parsing (before the kernel is looked at): --session with -r target
 * (refused, naming --target-session), --target-session with -r host or
 * --spdk-target (nothing to follow), and NQN:NSID's syntax. 0, or -1 with a
 * one-line reason naming the option. */
int ntp_session_opts_check(const struct ntp_collector_opts *o, char *err, size_t errlen);

/* Fills dev (NTP_DEV_LEN bytes, zero-padded) with the target-side device to
 * follow: 1; 0 when the target side follows every namespace; -1 with a
 * one-line reason. root: "" or a directory standing for / (tests). */
int ntp_target_session_dev(const struct ntp_collector_opts *o, const char *root, char *dev,
			   char *err, size_t errlen);

#endif
