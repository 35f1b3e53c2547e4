/* SPDX-License-Identifier: GPL-2.0 */
/* hostq.h - the host's block-layer limits of a namespace, from sysfs: what
 * the what-if view needs and no recording carries (docs/what-if.md). */
#ifndef NTP_TOP_HOSTQ_H
#define NTP_TOP_HOSTQ_H

#include <stdint.h>

/* dev: "nvme0n1". *tags: nr_requests (tags per hardware queue), *hw_queues:
 * the blk-mq hardware queues. 0, or -1 when sysfs does not say. */
int top_host_queues(const char *dev, uint32_t *tags, uint32_t *hw_queues);

#endif
