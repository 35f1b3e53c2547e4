// SPDX-License-Identifier: GPL-2.0
/* load.c - recordings -> one snapshot over the whole run, shared by report and
 * compare: the files source pumped to its end, no grid (core/pump.h). */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "load.h"
#include "core/pump/pump_files.h"

struct ntp_loaded {
	struct ntp_file_info hostq;	/* the host files' queue tables, merged */
	char host_name[NTP_HOSTNAME_LEN + 1], host_kernel[NTP_KERNEL_LEN + 1];
	char target_name[NTP_HOSTNAME_LEN + 1], target_kernel[NTP_KERNEL_LEN + 1];
	char hosts[NTP_REPORT_MAX_HOSTS][NTP_HOSTNAME_LEN + 1];	/* ntp_report_meta.hosts */
};

void ntp_load_free(struct ntp_loaded *l)
{
	free(l);
}

/* A file cut short: the report is of what was read, and says so; of a
 * join, each file's records lost before its recording. */
static void note_damage(struct ntp_files *f, char **paths, struct ntp_report_meta *meta)
{
	const char *left;
	size_t i;

	/* files not aligned: said first, each naming its file, the first few
	 * of many (a target not aligned leaves all its hosts unaligned) */
	for (i = 0; (left = ntp_files_unaligned(f, i)); i++)
		if (i < 4)
			ntp_report_note(meta, "%s", left);
	if (i > 4)
		ntp_report_note(meta, "%zu more file%s not aligned either", i - 4, i - 4 == 1 ? " was" : "s were");
	for (size_t i = 0; i < ntp_files_count(f); i++) {
		const struct ntp_read_stats *st = ntp_reader_stats(ntp_files_reader(f, i));

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
		/* a join's total is in the report's own note; which file lost
		 * them is said here (docs/ntp-format.md, type 4) */
		if (st->lost_before && ntp_files_count(f) > 1)
			ntp_report_note(meta, "%s: records lost before reaching the recording: %llu (%s)",
					paths[i], (unsigned long long)st->lost_before, NTP_LOST_WHY);
	}
}

/* The machines: the first host-side file's, and the first target file's
 * when it is another machine (a loop-back -r both names one). */
static void name_machines(struct ntp_files *f, struct ntp_loaded *l, struct ntp_report_meta *meta)
{
	size_t n = ntp_files_count(f);

	for (size_t i = 0; i < n; i++) {
		const struct ntp_file_info *fi = ntp_reader_info(ntp_files_reader(f, i));

		if (fi->role != NTP_ROLE_TARGET && !l->host_name[0]) {
			memcpy(l->host_name, fi->hostname, NTP_HOSTNAME_LEN);
			memcpy(l->host_kernel, fi->kernel, NTP_KERNEL_LEN);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct ntp_file_info *fi = ntp_reader_info(ntp_files_reader(f, i));

		if (fi->role == NTP_ROLE_TARGET && !l->target_name[0] &&
		    strncmp(fi->hostname, l->host_name, NTP_HOSTNAME_LEN)) {
			memcpy(l->target_name, fi->hostname, NTP_HOSTNAME_LEN);
			memcpy(l->target_kernel, fi->kernel, NTP_KERNEL_LEN);
		}
	}
	/* the host-side machines: distinct hostnames, the first ones named */
	for (size_t i = 0; i < n; i++) {
		const struct ntp_file_info *fi = ntp_reader_info(ntp_files_reader(f, i));
		int seen = 0;

		if (fi->role == NTP_ROLE_TARGET)
			continue;
		for (size_t j = 0; j < i && !seen; j++) {
			const struct ntp_file_info *fj = ntp_reader_info(ntp_files_reader(f, j));

			seen = fj->role != NTP_ROLE_TARGET && !strncmp(fi->hostname, fj->hostname, NTP_HOSTNAME_LEN);
		}
		if (seen)
			continue;
		if (meta->n_hosts < NTP_REPORT_MAX_HOSTS) {
			memcpy(l->hosts[meta->n_hosts], fi->hostname, NTP_HOSTNAME_LEN);
			meta->hosts[meta->n_hosts] = l->hosts[meta->n_hosts];
		}
		meta->n_hosts++;
	}
	for (size_t i = 0; i < n; i++)
		ntp_hostq_merge(&l->hostq, ntp_reader_info(ntp_files_reader(f, i)));
	meta->hostq = l->hostq.n_hostq ? l->hostq.hostq : NULL;
	meta->n_hostq = l->hostq.n_hostq;
	meta->host_name = l->host_name[0] ? l->host_name : NULL;
	meta->host_kernel = l->host_kernel;
	meta->target_name = l->target_name[0] ? l->target_name : NULL;
	meta->target_kernel = l->target_kernel;
}

int ntp_load(char **paths, size_t n, unsigned no_quantiles, struct ntp_snapshot *snap,
	     struct ntp_report_meta *meta, struct ntp_loaded **keep)
{
	struct ntp_model_config cfg;
	struct ntp_loaded *l = calloc(1, sizeof(*l));
	struct ntp_files *f = NULL;
	struct ntp_model *m = NULL;
	struct ntp_pump *p = NULL;
	struct ntp_pump_config pc = { 0 };
	struct ntp_pump_source src = { ntp_files_pull, NULL };
	char err[NTP_ERR_LEN];
	int ret = 1;

	ntp_report_meta_init(meta);
	f = ntp_files_open_ahead(paths, n, 1, err, sizeof(err));	/* read at full speed */
	if (!f) {
		ntp_err("%s", err);
		goto out;
	}
	cfg = *ntp_files_model_config(f);
	cfg.no_quantiles = (uint8_t)no_quantiles;
	pc.model = m = ntp_model_new(&cfg);
	pc.start_ns = ntp_files_start(f);
	p = m ? ntp_pump_new(&pc) : NULL;
	if (!l || !p) {
		ntp_err("out of memory");
		goto out;
	}
	src.ctx = f;
	ntp_pump_run(p, &src, NULL, NULL);	/* files and no sinks: it cannot fail */
	ntp_pump_finish(p, ntp_files_end(f), snap);
	note_damage(f, paths, meta);
	/* host and target records and not one pair: every command ID of one
	 * side missing from the other is what files of different runs (or of
	 * another target) give, and "0 matched" alone does not say why */
	if (snap->host_records && snap->target_records && !snap->matched)
		ntp_report_note(meta, "no host record joined a target record: "
				"recordings of different runs, or of another target?");
	name_machines(f, l, meta);
	*keep = l;
	l = NULL;
	ret = 0;
out:
	ntp_pump_free(p);
	ntp_model_free(m);
	ntp_files_close(f);
	free(l);
	return ret;
}
