// SPDX-License-Identifier: GPL-2.0
/*
 * test_kmod.c - a module's state (src/collector/kmod.h) on a fake root: a
 * loaded module has /sys/module/<name>/initstate; a built-in one has none,
 * and either a /sys/module/<name> directory (when it has parameters) or
 * a line of modules.builtin; kbuild's '-' in file names is the module's '_'.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "fake_root.h"
#include "collector/kmod.h"

#define REL "9.9.9-test"

static int setup(void **state)
{
	(void)state;
	fake_root_make("kmod");
	put("sys/module/nvme_tcp/initstate", "live\n");
	put("sys/module/nvme_core/initstate", "live\n");
	/* built in with parameters: a directory, no initstate */
	put("sys/module/ib_core/parameters/recv_queue_size", "256\n");
	put("lib/modules/" REL "/modules.builtin",
	    "kernel/drivers/nvme/host/nvme-rdma.ko\n"
	    "kernel/drivers/infiniband/core/ib_uverbs.ko\n"
	    "kernel/fs/ext4/ext4.ko\n");
	return 0;
}

static void test_loaded(void **state)
{
	(void)state;
	assert_int_equal(ntp_kmod_state(root, REL, "nvme_tcp"), NTP_KMOD_LOADED);
	assert_int_equal(ntp_kmod_state(root, REL, "nvme-core"), NTP_KMOD_LOADED);
}

static void test_builtin_sysfs(void **state)
{
	(void)state;
	assert_int_equal(ntp_kmod_state(root, REL, "ib_core"), NTP_KMOD_BUILTIN);
}

static void test_builtin_listed(void **state)
{
	(void)state;
	/* no /sys/module entry: modules.builtin says, by either spelling */
	assert_int_equal(ntp_kmod_state(root, REL, "nvme_rdma"), NTP_KMOD_BUILTIN);
	assert_int_equal(ntp_kmod_state(root, REL, "nvme-rdma"), NTP_KMOD_BUILTIN);
	assert_int_equal(ntp_kmod_state(root, REL, "ext4"), NTP_KMOD_BUILTIN);
	/* a prefix of a listed name is another module */
	assert_int_equal(ntp_kmod_state(root, REL, "ib_uverb"), NTP_KMOD_ABSENT);
	/* another release's list is not this one's */
	assert_int_equal(ntp_kmod_state(root, "9.9.8-other", "nvme_rdma"), NTP_KMOD_ABSENT);
}

static void test_absent(void **state)
{
	(void)state;
	assert_int_equal(ntp_kmod_state(root, REL, "nvmet_rdma"), NTP_KMOD_ABSENT);
	assert_int_equal(ntp_kmod_state(root, REL, "nvmet"), NTP_KMOD_ABSENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loaded),
		cmocka_unit_test(test_builtin_sysfs),
		cmocka_unit_test(test_builtin_listed),
		cmocka_unit_test(test_absent),
	};

	return cmocka_run_group_tests_name("kmod", tests, setup, teardown);
}
