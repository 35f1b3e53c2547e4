/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hostq.h - the host's block-layer limits of its NVMe-oF namespaces, from
 * sysfs: the hardware queues and the tags of each (nr_requests), which cap
 * the commands in flight (docs/what-if.md). ntprof-top reads them for its
 * what-if view; `ntprof record` and ntprof-top's recordings keep them in the
 * file's header (docs/ntp-format.md).
 */
#ifndef NTP_COLLECTOR_HOSTQ_H
#define NTP_COLLECTOR_HOSTQ_H

#include <stddef.h>
#include <stdint.h>
#include "core/store/ntpfile.h"

/* dev: "nvme0n1". *tags: nr_requests (tags per hardware queue), *hw_queues:
 * the blk-mq hardware queues. 0, or -1 when sysfs does not say. root: "" or
 * a directory standing for / (tests). */
int ntp_host_queues(const char *root, const char *dev, uint32_t *tags, uint32_t *hw_queues);

/* The namespaces whose controller's transport is transport (enum
 * ntp_transport), or only session when it is not "" : their limits into
 * out[] (at most max, in name order). Returns how many. */
size_t ntp_host_queues_scan(const char *root, uint8_t transport, const char *session,
			    struct ntp_hostq *out, size_t max);

/*
 * The transport check (docs/recording.md, "The transport check"): the
 * host's NVMe controllers (ROOT/sys/class/nvme/nvmeN/transport, their
 * namespaces as the host's records name them) and the target's nvmet ports
 * (ROOT/sys/kernel/config/nvmet/ports/ID/addr_trtype), against -t.
 */

/* The directory that stands for / in these reads: $NTPROF_SYS_ROOT (for
 * tests: a fake tree), else "". */
const char *ntp_sys_root(void);

/* What was found, one line: "nvme controllers: nvme0 rdma (nvme0n1), ...;
 * nvmet ports: 1 rdma" (host: the controllers; target: the ports; "none"). */
void ntp_transport_found(const char *root, int host, int target, char *buf, size_t len);

/* 1 with one line in buf ("nvme0 (nvme0n1) is NVMe/RDMA, not NVMe/TCP: use
 * -t rdma") when a side has no controller (port) of transport (enum
 * ntp_transport) but one of the other fabric transport; else 0, buf "". */
int ntp_transport_mismatch(const char *root, uint8_t transport, int host, int target, char *buf, size_t len);

#endif
