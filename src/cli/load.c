// SPDX-License-Identifier: GPL-2.0
/* load.c - recordings -> one snapshot over the whole run, shared by report and compare. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "load.h"
#include "core/join.h"

struct ntp_loaded {
	char host_name[NTP_HOSTNAME_LEN + 1], host_kernel[NTP_KERNEL_LEN + 1];
	char target_name[NTP_HOSTNAME_LEN + 1], target_kernel[NTP_KERNEL_LEN + 1];
};

void ntp_load_free(struct ntp_loaded *l)
{
	free(l);
}

static void close_all(struct ntp_reader **r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i])
			ntp_reader_close(r[i]);
}

int ntp_load(char **paths, size_t n, struct ntp_snapshot *snap, struct ntp_report_meta *meta,
	     struct ntp_loaded **keep)
{
	struct ntp_reader **r = calloc(n, sizeof(*r));
	struct ntp_join_input *in = calloc(n, sizeof(*in));
	struct ntp_loaded *l = calloc(1, sizeof(*l));
	struct ntp_total *tot = NULL;
	size_t ntot = 0, primary;
	struct ntp_model_config cfg;
	struct ntp_model *m = NULL;
	char err[NTP_ERR_LEN];
	uint64_t last, end;
	int ret = 1;

	memset(meta, 0, sizeof(*meta));
	if (!r || !in || !l) {
		ntp_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		r[i] = ntp_reader_open(paths[i], err, sizeof(err));
		if (!r[i]) {
			ntp_err("%s", err);
			goto out;
		}
		in[i].path = paths[i];
		in[i].info = ntp_reader_info(r[i]);
	}
	if (ntp_join_check(in, n, &cfg, err, sizeof(err))) {
		ntp_err("%s", err);
		goto out;
	}
	m = ntp_model_new(&cfg);
	if (!m) {
		ntp_err("out of memory");
		goto out;
	}
	primary = ntp_join_primary(in, n);
	ntp_model_set_start(m, in[primary].info->start_mono_ns);
	{
		int64_t *adj = calloc(n, sizeof(*adj));

		if (!adj) {
			ntp_err("out of memory");
			goto out;
		}
		if (n > 1)
			ntp_join_align(in, n, primary, adj);
		last = ntp_join_feed(r, n, primary, adj, m);
		free(adj);
	}

	/* Exact command counts: every file's latest totals (each row says its side). */
	for (size_t i = 0; i < n; i++) {
		size_t k;
		const struct ntp_total *t = ntp_reader_totals(r[i], &k, NULL);
		struct ntp_total *grown;

		if (!k)
			continue;
		grown = realloc(tot, (ntot + k) * sizeof(*tot));
		if (!grown) {
			ntp_err("out of memory");
			goto out;
		}
		tot = grown;
		memcpy(tot + ntot, t, k * sizeof(*t));
		ntot += k;
	}
	ntp_model_set_totals(m, tot, ntot, last);

	/* A file cut short: the report is of what was read, and says so. */
	for (size_t i = 0; i < n; i++) {
		const struct ntp_read_stats *st = ntp_reader_stats(r[i]);

		if (st->corrupt && !meta->damaged[0])
			snprintf(meta->damaged, sizeof(meta->damaged), "%s: %s; %llu records read, %llu dropped",
				 paths[i], st->why, (unsigned long long)st->records,
				 (unsigned long long)st->dropped);
		if (st->truncated || st->corrupt)
			ntp_report_note(meta, "%s %s (%s): %llu records read, %llu dropped; "
					"this report is of the records read", paths[i],
					st->corrupt ? "is damaged" : "was cut short",
					st->why[0] ? st->why : "no trailer",
					(unsigned long long)st->records, (unsigned long long)st->dropped);
	}
	end = ntp_reader_stats(r[primary])->end_mono_ns;
	if (!end || end < last)
		end = last;
	if (end < in[primary].info->start_mono_ns)
		end = in[primary].info->start_mono_ns;
	{
		struct ntp_snapshot *tmp = malloc(sizeof(*tmp));

		if (!tmp) {
			ntp_err("out of memory");
			goto out;
		}
		ntp_model_close_interval(m, end, tmp);
		free(tmp);
	}
	ntp_model_total(m, snap);

	for (size_t i = 0; i < n; i++) {
		const struct ntp_file_info *fi = in[i].info;

		if (fi->role != NTP_ROLE_TARGET && !l->host_name[0]) {
			memcpy(l->host_name, fi->hostname, NTP_HOSTNAME_LEN);
			memcpy(l->host_kernel, fi->kernel, NTP_KERNEL_LEN);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct ntp_file_info *fi = in[i].info;

		if (fi->role == NTP_ROLE_TARGET && !l->target_name[0] &&
		    strncmp(fi->hostname, l->host_name, NTP_HOSTNAME_LEN)) {
			memcpy(l->target_name, fi->hostname, NTP_HOSTNAME_LEN);
			memcpy(l->target_kernel, fi->kernel, NTP_KERNEL_LEN);
		}
	}
	meta->host_name = l->host_name[0] ? l->host_name : NULL;
	meta->host_kernel = l->host_kernel;
	meta->target_name = l->target_name[0] ? l->target_name : NULL;
	meta->target_kernel = l->target_kernel;
	*keep = l;
	l = NULL;
	ret = 0;
out:
	ntp_model_free(m);
	close_all(r, n);
	free(r);
	free(in);
	free(tot);
	free(l);
	return ret;
}
