// SPDX-License-Identifier: GPL-2.0
/*
 * test_hostq.c - the host's queues in sysfs (src/collector/hostq.h) on a fake
 * root: a multipath head's tags are its path's, a plain namespace's its own;
 * the scan keeps the namespaces of the recorded transport, by head name and
 * in name order, or the --session one only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "fake_root.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector/hostq.h"

static int setup(void **state)
{
	(void)state;
	fake_root_make("hostq");
	/* nvme0n1: a multipath head over NVMe/TCP, its path nvme0c1n1 holds
	 * 3 hardware queues of 128 tags (the head has no nr_requests) */
	dir("sys/block/nvme0n1/queue");
	put("sys/block/nvme0c1n1/queue/nr_requests", "128\n");
	put("sys/block/nvme0c1n1/device/transport", "tcp\n");
	dir("sys/block/nvme0c1n1/mq/0");
	dir("sys/block/nvme0c1n1/mq/1");
	dir("sys/block/nvme0c1n1/mq/2");
	/* nvme10n2: no multipath, NVMe/TCP, one queue of 32 */
	put("sys/block/nvme10n2/queue/nr_requests", "32\n");
	put("sys/block/nvme10n2/device/transport", "tcp\n");
	dir("sys/block/nvme10n2/mq/0");
	/* nvme2n1: a local PCIe drive, not recorded */
	put("sys/block/nvme2n1/queue/nr_requests", "1023\n");
	put("sys/block/nvme2n1/device/transport", "pcie\n");
	dir("sys/block/nvme2n1/mq/0");
	/* nvme3n1: NVMe/RDMA */
	put("sys/block/nvme3n1/queue/nr_requests", "255\n");
	put("sys/block/nvme3n1/device/transport", "rdma\n");
	dir("sys/block/nvme3n1/mq/0");
	dir("sys/block/nvme3n1/mq/1");
	/* not NVMe */
	put("sys/block/sda/queue/nr_requests", "64\n");
	return 0;
}

static void test_one(void **state)
{
	uint32_t tags, hwq;

	(void)state;
	assert_int_equal(ntp_host_queues(root, "nvme0n1", &tags, &hwq), 0);
	assert_int_equal(tags, 128);
	assert_int_equal(hwq, 3);
	assert_int_equal(ntp_host_queues(root, "nvme10n2", &tags, &hwq), 0);
	assert_int_equal(tags, 32);
	assert_int_equal(hwq, 1);
	assert_int_equal(ntp_host_queues(root, "nvme9n1", &tags, &hwq), -1);
	assert_int_equal(tags, 0);
	assert_int_equal(hwq, 0);
}

static void test_scan(void **state)
{
	struct ntp_hostq q[8];
	size_t n;

	(void)state;
	n = ntp_host_queues_scan(root, NTP_TRANSPORT_TCP, "", q, 8);
	assert_int_equal(n, 2);
	assert_string_equal(q[0].dev, "nvme0n1");	/* the head's name, once */
	assert_int_equal(q[0].tags, 128);
	assert_int_equal(q[0].hw_queues, 3);
	assert_string_equal(q[1].dev, "nvme10n2");	/* after nvme0n1: name order */
	assert_int_equal(q[1].tags, 32);
	n = ntp_host_queues_scan(root, NTP_TRANSPORT_RDMA, "", q, 8);
	assert_int_equal(n, 1);
	assert_string_equal(q[0].dev, "nvme3n1");
	assert_int_equal(q[0].hw_queues, 2);
	/* at most max */
	assert_int_equal(ntp_host_queues_scan(root, NTP_TRANSPORT_TCP, "", q, 1), 1);
	/* --session: that namespace only */
	n = ntp_host_queues_scan(root, NTP_TRANSPORT_TCP, "nvme10n2", q, 8);
	assert_int_equal(n, 1);
	assert_string_equal(q[0].dev, "nvme10n2");
	assert_int_equal(ntp_host_queues_scan(root, NTP_TRANSPORT_TCP, "nvme7n1", q, 8), 0);
	/* no sysfs at all */
	assert_int_equal(ntp_host_queues_scan("/nonexistent", NTP_TRANSPORT_TCP, "", q, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one),
		cmocka_unit_test(test_scan),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
