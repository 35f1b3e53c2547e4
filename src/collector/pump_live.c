// SPDX-License-Identifier: GPL-2.0
/* pump_live.c - the live collector as a pump source (see pump_live.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include "pump_live.h"
#include "hostq.h"
#include "core/clock.h"
#include "core/store/merge.h"

/* Feeds a record, and keeps its latest stamp: the recording's end is not
 * before it (ntp_live_drain). */
static void to_pump(void *ctx, const struct ntp_record *r)
{
	struct ntp_live_source *ls = ctx;
	uint64_t t = ntp_record_last_ts(r);

	if (t > ls->last_ts)
		ls->last_ts = t;
	ntp_pump_record(ls->pump, r);
}

static void read_counters(struct ntp_live_source *ls, struct ntp_pump *p, uint64_t as_of)
{
	int n = ntp_collector_totals(ls->c, ls->tot, NTP_LIVE_MAX_TOTALS);

	if (n > 0)
		ntp_pump_totals(p, ls->tot, (size_t)n, as_of);
	ntp_pump_lost(p, ntp_collector_lost(ls->c));
	ntp_pump_skipped(p, ntp_collector_skipped(ls->c));
}

int ntp_live_pull(void *ctx, struct ntp_pump *p, uint64_t until_ns, uint64_t *reached)
{
	struct ntp_live_source *ls = ctx;
	uint64_t now;
	int n;

	if (ls->before_poll) {
		n = ls->before_poll(ls->ctx, p);
		if (n)
			return n;
		until_ns = ntp_pump_next_boundary(p);	/* the interval may have changed */
	}
	ls->pump = p;
	n = ntp_collector_poll(ls->c, ls->poll_ms ? ls->poll_ms : 100, to_pump, ls);
	if (n < 0 && n != -EINTR)
		return n;
	now = ntp_mono_ns();
	/* -d's end passed: what is left comes in now, before the pump closes
	 * the last interval at the end; closed first, the interval would
	 * leave out the records drained after it, which the file holds */
	if (ls->end_ns && now >= ls->end_ns) {
		*reached = ntp_live_drain(ls, p, 1, ls->end_ns);
		return 0;
	}
	/* the boundary passed: the counters as of now close the interval */
	if (now >= until_ns)
		read_counters(ls, p, now);
	*reached = now;
	return 1;
}

uint64_t ntp_live_drain(struct ntp_live_source *ls, struct ntp_pump *p, int drain, uint64_t end_ns)
{
	uint64_t now;

	if (ls->drained)
		return ls->drained;
	ls->pump = p;
	while (drain && ntp_collector_poll(ls->c, 0, to_pump, ls) > 0)
		;
	now = ntp_mono_ns();
	if (end_ns && now > end_ns)
		now = end_ns;
	/* the commands in flight now end the recording, as they did before
	 * the stop's wait (which is not recording time) */
	if (drain)
		ntp_collector_stop(ls->c, to_pump, ls);
	/* ... unless a record came in with a later stamp (drained past -d's
	 * end, or handed over in the stop's wait): `ntprof report` of the
	 * file ends there (the latest stamp, when past the file's end), and
	 * so does the live report, with the same records in the same time */
	if (ls->last_ts > now)
		now = ls->last_ts;
	read_counters(ls, p, now);
	ls->drained = now;
	return now;
}

void ntp_live_file_info(struct ntp_file_info *fi, const struct ntp_collector_opts *co,
			uint64_t start_mono_ns, const char *tool)
{
	struct utsname u;

	memset(fi, 0, sizeof(*fi));
	fi->role = co->role;
	fi->transport = co->transport;
	fi->impl_host = co->spdk_host ? NTP_IMPL_SPDK : NTP_IMPL_LINUX;
	fi->impl_target = co->spdk_target ? NTP_IMPL_SPDK : NTP_IMPL_LINUX;
	fi->sampling = co->sampling;
	fi->record_size = sizeof(struct ntp_record);
	fi->start_mono_ns = start_mono_ns;
	/* the wall clock at the same instant, as near as two reads get */
	fi->start_real_ns = ntp_real_ns() - (ntp_mono_ns() - start_mono_ns);
	if (!uname(&u)) {
		snprintf(fi->hostname, sizeof(fi->hostname), "%.*s", (int)sizeof(fi->hostname) - 1, u.nodename);
		snprintf(fi->kernel, sizeof(fi->kernel), "%.*s", (int)sizeof(fi->kernel) - 1, u.release);
	}
	snprintf(fi->tool_version, sizeof(fi->tool_version), "%s", tool);
	/* the host's queues as they are now: what caps the commands in flight
	 * when the recording is read on another machine (docs/what-if.md); an
	 * SPDK host has no block layer */
	if (co->role != NTP_ROLE_TARGET && !co->spdk_host)
		fi->n_hostq = (uint32_t)ntp_host_queues_scan("", co->transport, co->session, fi->hostq, NTP_HOSTQ_MAX);
}
