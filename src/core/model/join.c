// SPDX-License-Identifier: GPL-2.0
/*
 * join.c - which recordings go together, and feeding them to the model.
 *
 * Memory with several files: each reader holds one block; the model holds
 * the pending records of both sides in a bounded window (pending.h). Files
 * are merged by emission time on the wall clock, corrected by the offset
 * join_align.c estimates from the files' first records, so a record's twin
 * arrives within the window (2^16 records per side: at 100k sampled
 * commands/s about 0.6 s of skew). If the files share no command at their
 * start and the wall clocks disagree by more than that, records go unmatched
 * and the records line says how many matched: the stage times of the matched
 * ones stay exact, since no stage time uses the wall clock.
 */
#include <stdio.h>
#include <string.h>
#include "join.h"

#define TWO_FILE_WINDOW 65536

static int has_host(uint8_t role)
{
	return role == NTP_ROLE_HOST || role == NTP_ROLE_BOTH;
}

static int has_target(uint8_t role)
{
	return role == NTP_ROLE_TARGET || role == NTP_ROLE_BOTH;
}

size_t ntp_join_primary(const struct ntp_join_input *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (has_host(in[i].info->role))
			return i;
	return 0;
}

int ntp_join_check(const struct ntp_join_input *in, size_t n, struct ntp_model_config *cfg,
		   char *err, size_t errlen)
{
	int hosts = 0, targets = 0;
	size_t last_host = 0, last_target = 0;

	memset(cfg, 0, sizeof(*cfg));
	if (!n) {
		snprintf(err, errlen, "no recording given");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ntp_file_info *a = in[i].info;

		if (a->role < NTP_ROLE_HOST || a->role > NTP_ROLE_BOTH) {
			snprintf(err, errlen, "%s: unknown role %u in the header", in[i].path, a->role);
			return -1;
		}
		if (a->sampling != in[0].info->sampling) {
			snprintf(err, errlen, "%s was recorded with -s %u and %s with -s %u: both sides "
				 "must use the same -s to sample the same commands", in[0].path,
				 in[0].info->sampling, in[i].path, a->sampling);
			return -1;
		}
		if (a->transport != in[0].info->transport) {
			snprintf(err, errlen, "%s was recorded over %s and %s over %s", in[0].path,
				 ntp_transport_name(in[0].info->transport), in[i].path,
				 ntp_transport_name(a->transport));
			return -1;
		}
		for (size_t j = 0; j < i; j++) {
			const struct ntp_file_info *b = in[j].info;

			if (strncmp(a->hostname, b->hostname, NTP_HOSTNAME_LEN))
				continue;
			if (a->role == NTP_ROLE_BOTH && b->role == NTP_ROLE_BOTH) {
				snprintf(err, errlen, "%s and %s each record both sides of %.*s: pass one of them",
					 in[j].path, in[i].path, NTP_HOSTNAME_LEN, a->hostname);
				return -1;
			}
			if ((has_host(a->role) && has_host(b->role)) ||
			    (has_target(a->role) && has_target(b->role))) {
				snprintf(err, errlen, "%s and %s are both %s recordings of %.*s: "
					 "pass one of them", in[j].path, in[i].path,
					 ntp_role_name(a->role == b->role ? a->role :
						       has_host(a->role) && has_host(b->role)
						       ? NTP_ROLE_HOST : NTP_ROLE_TARGET),
					 NTP_HOSTNAME_LEN, a->hostname);
				return -1;
			}
		}
		if (has_host(a->role)) {
			hosts++;
			last_host = i;
		}
		if (has_target(a->role)) {
			targets++;
			last_target = i;
		}
	}
	if (n > 1 && !targets) {
		snprintf(err, errlen, "%s is a host recording where a target's is expected: "
			 "several files are joined as hosts with their target "
			 "(ntprof report HOST.ntp... TARGET.ntp)", in[last_host].path);
		return -1;
	}
	if (n > 1 && !hosts) {
		snprintf(err, errlen, "%s is a target recording where a host's is expected: "
			 "several files are joined as hosts with their target "
			 "(ntprof report HOST.ntp... TARGET.ntp)", in[last_target].path);
		return -1;
	}
	cfg->role = hosts && targets ? NTP_ROLE_BOTH : hosts ? NTP_ROLE_HOST : NTP_ROLE_TARGET;
	cfg->transport = in[0].info->transport;
	cfg->sampling = in[0].info->sampling;
	for (size_t i = n; i-- > 0;) {
		if (has_host(in[i].info->role))
			cfg->impl_host = in[i].info->impl_host;
		if (has_target(in[i].info->role))
			cfg->impl_target = in[i].info->impl_target;
	}
	cfg->join_window = n > 1 ? TWO_FILE_WINDOW : 0;
	return 0;
}

/* ntp_join_feed() is the files source run to the end: pump_files.c. */
