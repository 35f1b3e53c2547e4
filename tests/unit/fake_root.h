/* SPDX-License-Identifier: GPL-2.0 */
/* fake_root.h - a throw-away directory that stands for / in tests of code
 * that reads sysfs and configfs through a root argument (collector/session.c,
 * collector/hostq.c). Include after cmocka.h. */
#ifndef NTP_TEST_FAKE_ROOT_H
#define NTP_TEST_FAKE_ROOT_H

#include <stdio.h>
#include <stdlib.h>

static char root[64];

/* a fresh root under /tmp named after the test */
static void fake_root_make(const char *name)
{
	snprintf(root, sizeof(root), "/tmp/ntp-%s-XXXXXX", name);
	assert_non_null(mkdtemp(root));
}

/* the file root/rel holding text, its directories made as needed */
static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s/%s')\"", root, rel);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* the directory root/rel (an empty one stands for a hardware queue) */
static inline void dir(const char *rel)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

#endif
