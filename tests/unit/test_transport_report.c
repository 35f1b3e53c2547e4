// SPDX-License-Identifier: GPL-2.0
/*
 * test_transport_report.c - the report of a recording made with the wrong
 * -t (docs/recording.md, "The transport check"): a group whose host records
 * all lack the driver's timestamps says so and asks about -t; one with no
 * target record in a recording of both sides names both causes; others keep
 * "no command to break down".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/render/report.h"

static char *report_of(const struct ntp_snapshot *s)
{
	struct ntp_report_meta m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	memset(&m, 0, sizeof(m));
	ntp_report_print(f, s, &m);
	fclose(f);
	return buf;
}

static struct ntp_snapshot *snap(uint8_t role, uint8_t transport)
{
	struct ntp_snapshot *s = calloc(1, sizeof(*s));
	struct ntp_snap_group *g = &s->groups[0];

	assert_non_null(s);
	s->role = role;
	s->transport = transport;
	s->sampling = 1;
	s->seconds = 5;
	s->n_groups = 1;
	s->host_records = 6708;
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme0n1");
	g->seen = 6708;
	g->commands = 6708;
	g->rate = 1341.6;
	return s;
}

static void test_host_only(void **state)
{
	struct ntp_snapshot *s = snap(NTP_ROLE_HOST, NTP_TRANSPORT_TCP);
	char *out;

	(void)state;
	s->groups[0].host_only = 1;
	s->groups[0].incomplete_records = 6708;
	out = report_of(s);
	assert_non_null(strstr(out, "\nno record has the NVMe/TCP driver's timestamps: recorded with the wrong -t?\n"));
	assert_null(strstr(out, "no command to break down"));
	free(out);
	/* one record with them: not every record lacks them */
	s->groups[0].incomplete_records = 6707;
	out = report_of(s);
	assert_non_null(strstr(out, "\nno command to break down\n"));
	free(out);
	s->transport = NTP_TRANSPORT_RDMA;
	s->groups[0].incomplete_records = 6708;
	out = report_of(s);
	assert_non_null(strstr(out, "no record has the NVMe/RDMA driver's timestamps"));
	free(out);
	free(s);
}

static void test_both(void **state)
{
	struct ntp_snapshot *s = snap(NTP_ROLE_BOTH, NTP_TRANSPORT_TCP);
	char *out;

	(void)state;
	s->groups[0].unmatched = 6708;
	out = report_of(s);
	assert_non_null(strstr(out, "\nno command to break down: no target record (recorded with the wrong -t, "
				    "or the target is not on this machine: -r host?)\n"));
	free(out);
	/* target records there, none of this group's: the plain line */
	s->target_records = 10;
	out = report_of(s);
	assert_non_null(strstr(out, "\nno command to break down\n"));
	free(out);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_only),
		cmocka_unit_test(test_both),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
