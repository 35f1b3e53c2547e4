// SPDX-License-Identifier: GPL-2.0
/*
 * test_transport.c - the transport check (src/collector/hostq.h) on fake
 * roots: the controllers in /sys/class/nvme and the nvmet ports in configfs
 * against -t; a warning only when no controller (port) of -t's transport
 * exists but one of the other does (docs/recording.md).
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

static char rdma_root[64], mixed_root[64];

static int setup(void **state)
{
	(void)state;
	/* an NVMe/RDMA machine: controller nvme0 with a multipath path to
	 * nvme0n1 and nvme0n2, a PCIe drive, and an nvmet RDMA port */
	fake_root_make("tr-rdma");
	put("sys/class/nvme/nvme0/transport", "rdma\n");
	dir("sys/class/nvme/nvme0/nvme0c0n2");
	dir("sys/class/nvme/nvme0/nvme0c0n1");
	dir("sys/class/nvme/nvme0/power");
	put("sys/class/nvme/nvme1/transport", "pcie\n");
	dir("sys/class/nvme/nvme1/nvme1n1");
	put("sys/class/nvme/nvme2/transport", "rdma\n");
	put("sys/kernel/config/nvmet/ports/1/addr_trtype", "rdma\n");
	snprintf(rdma_root, sizeof(rdma_root), "%s", root);
	/* both transports on the host, a TCP port on the target */
	fake_root_make("tr-mixed");
	put("sys/class/nvme/nvme0/transport", "rdma\n");
	put("sys/class/nvme/nvme3/transport", "tcp\n");
	dir("sys/class/nvme/nvme3/nvme3n1");
	put("sys/kernel/config/nvmet/ports/2/addr_trtype", "tcp\n");
	snprintf(mixed_root, sizeof(mixed_root), "%s", root);
	return 0;
}

static int teardown_both(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rdma_root);
	if (system(cmd))
		return 1;
	return teardown(state);	/* root: the mixed one */
}

static void test_found(void **state)
{
	char buf[512];

	(void)state;
	ntp_transport_found(rdma_root, 1, 1, buf, sizeof(buf));
	assert_string_equal(buf, "nvme controllers: nvme0 rdma (nvme0n1, nvme0n2), nvme1 pcie (nvme1n1), "
			    "nvme2 rdma; nvmet ports: 1 rdma");
	ntp_transport_found(rdma_root, 0, 1, buf, sizeof(buf));
	assert_string_equal(buf, "nvmet ports: 1 rdma");
	ntp_transport_found("/nonexistent", 1, 1, buf, sizeof(buf));
	assert_string_equal(buf, "nvme controllers: none; nvmet ports: none");
}

static void test_mismatch(void **state)
{
	char buf[512];

	(void)state;
	/* -t tcp on the RDMA machine: host, target, both */
	assert_int_equal(ntp_transport_mismatch(rdma_root, NTP_TRANSPORT_TCP, 1, 0, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "nvme0 (nvme0n1, nvme0n2) and 1 more controller are NVMe/RDMA, not NVMe/TCP: "
			    "use -t rdma");
	assert_int_equal(ntp_transport_mismatch(rdma_root, NTP_TRANSPORT_TCP, 0, 1, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "nvmet port 1 is NVMe/RDMA, not NVMe/TCP: use -t rdma");
	assert_int_equal(ntp_transport_mismatch(rdma_root, NTP_TRANSPORT_TCP, 1, 1, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "nvme0 (nvme0n1, nvme0n2) and 1 more controller and nvmet port 1 are "
			    "NVMe/RDMA, not NVMe/TCP: use -t rdma");
	/* the right -t: nothing */
	assert_int_equal(ntp_transport_mismatch(rdma_root, NTP_TRANSPORT_RDMA, 1, 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* one controller of -t's transport is enough; the target's port is not */
	assert_int_equal(ntp_transport_mismatch(mixed_root, NTP_TRANSPORT_TCP, 1, 1, buf, sizeof(buf)), 0);
	assert_int_equal(ntp_transport_mismatch(mixed_root, NTP_TRANSPORT_RDMA, 1, 0, buf, sizeof(buf)), 0);
	assert_int_equal(ntp_transport_mismatch(mixed_root, NTP_TRANSPORT_RDMA, 1, 1, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "nvmet port 2 is NVMe/TCP, not NVMe/RDMA: use -t tcp");
	/* nothing of either (a machine between connections): no warning */
	assert_int_equal(ntp_transport_mismatch("/nonexistent", NTP_TRANSPORT_TCP, 1, 1, buf, sizeof(buf)), 0);
}

static void test_env_root(void **state)
{
	(void)state;
	unsetenv("NTPROF_SYS_ROOT");
	assert_string_equal(ntp_sys_root(), "");
	setenv("NTPROF_SYS_ROOT", rdma_root, 1);
	assert_string_equal(ntp_sys_root(), rdma_root);
	unsetenv("NTPROF_SYS_ROOT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_mismatch),
		cmocka_unit_test(test_env_root),
	};

	return cmocka_run_group_tests(tests, setup, teardown_both);
}
