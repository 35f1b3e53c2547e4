// SPDX-License-Identifier: GPL-2.0
/* test_session.c - the target side of a session (src/collector/session.h):
 * from -r both's --session through sysfs and nvmet's configfs, from
 * --target-session NQN:NSID, and the refusals, on a fake root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "fake_root.h"
#include "collector/session.h"

#define NQN "nqn.2014-08.org.ntprof:tb:x"

static int setup(void **state)
{
	(void)state;
	fake_root_make("session");
	put("sys/block/nvme3n1/device/subsysnqn", NQN "\n");
	put("sys/block/nvme3n1/nsid", "2\n");
	put("sys/kernel/config/nvmet/subsystems/" NQN "/namespaces/1/device_path", "/dev/nullb0\n");
	put("sys/kernel/config/nvmet/subsystems/" NQN "/namespaces/2/device_path", "/dev/nullb1\n");
	return 0;
}

static void test_follows_the_host(void **state)
{
	struct ntp_collector_opts o = { .role = NTP_ROLE_BOTH, .session = "nvme3n1" };
	char dev[NTP_DEV_LEN], want[NTP_DEV_LEN] = "nullb1", err[512];

	(void)state;
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), 1);
	assert_memory_equal(dev, want, NTP_DEV_LEN);	/* zero-padded: the BPF side compares words */
	/* the host only: nothing to follow on a target */
	o.role = NTP_ROLE_HOST;
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), 0);
	/* no --session: every namespace */
	o.role = NTP_ROLE_BOTH;
	o.session[0] = '\0';
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), 0);
}

static void test_named(void **state)
{
	struct ntp_collector_opts o = { .role = NTP_ROLE_TARGET };
	char dev[NTP_DEV_LEN], err[512];

	(void)state;
	snprintf(o.target_session, sizeof(o.target_session), "%s:1", NQN);
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), 1);
	assert_string_equal(dev, "nullb0");
	snprintf(o.target_session, sizeof(o.target_session), "%s:7", NQN);
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no namespace 7 of subsystem " NQN));
	snprintf(o.target_session, sizeof(o.target_session), "%s", NQN);	/* the NSID is "x" */
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not NQN:NSID"));
	/* -r target with a host's namespace name: refused, naming the option to use */
	o.target_session[0] = '\0';
	snprintf(o.session, sizeof(o.session), "nvme3n1");
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--target-session NQN:NSID"));
	/* -r both on a namespace whose subsystem is not exported here */
	o.role = NTP_ROLE_BOTH;
	snprintf(o.session, sizeof(o.session), "nvme9n1");
	assert_int_equal(ntp_target_session_dev(&o, root, dev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--session nvme9n1: its subsystem is unknown"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_follows_the_host),
		cmocka_unit_test(test_named),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
