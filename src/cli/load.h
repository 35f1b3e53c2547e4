/* SPDX-License-Identifier: GPL-2.0 */
/* load.h - recordings -> one snapshot over the whole run (report, compare). */
#ifndef NTP_CLI_LOAD_H
#define NTP_CLI_LOAD_H

#include <stddef.h>
#include "core/model/model.h"
#include "core/render/report.h"

/* Opens, checks and joins the files, reduces them into *snap (one interval
 * over the run) and fills *meta (machines, notes on files cut short). The
 * strings in meta stay valid until ntp_load_free(). 0, or 1 after ntp_err().
 * no_quantiles: the quantiles the caller will not print (NTP_MODEL_NO_*, model.h),
 * left 0 in *snap and not computed. */
struct ntp_loaded;
int ntp_load(char **paths, size_t n, unsigned no_quantiles, struct ntp_snapshot *snap,
	     struct ntp_report_meta *meta, struct ntp_loaded **keep);
void ntp_load_free(struct ntp_loaded *l);

#endif
