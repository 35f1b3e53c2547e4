// SPDX-License-Identifier: GPL-2.0
/* render_detail.c - the detail view (the component table of docs/stage-model.md for the selected
 * group) and the help screen, generated from the key table. Pure. */
#include <stdio.h>
#include <string.h>
#include "render.h"

/* Path order: docs/stage-model.md's table. "network and target" (host-only data) stands
 * where the network's components would be, right after the host's submission. */
static const enum ntp_component path_order[] = {
	NTP_COMP_HOST_BLK_SUB,  NTP_COMP_HOST_DRV_SUB,  NTP_COMP_NET_AND_TARGET, NTP_COMP_WIRE,
	NTP_COMP_BP_WIRE,       NTP_COMP_TGT_RECV_CMD,  NTP_COMP_BP_RECV,        NTP_COMP_TGT_DRV_SUB,
	NTP_COMP_DATA_XFER,     NTP_COMP_HOST_RECV_R2T, NTP_COMP_HOST_DRV_DATA,  NTP_COMP_TGT_RECV_DATA,
	NTP_COMP_TGT_DRV_DATA,  NTP_COMP_STORAGE,       NTP_COMP_TGT_DRV_COMP,   NTP_COMP_BP_RSP,
	NTP_COMP_HOST_RECV_RSP, NTP_COMP_HOST_DRV_COMP, NTP_COMP_HOST_BLK_COMP,
};

static void comp_row(struct ntp_screen *scr, int row, int name_w, uint8_t role, const char *name, uint64_t n,
		     double mean, double l, double p50, double p99)
{
	int enough = ntp_pct_enough(n, 0.99);

	ntp_screen_put(scr, row, 1, name_w, role, name);
	/* '?': a p99 of fewer than 100 samples, the largest seen (as the main screen) */
	ntp_screen_printf(scr, row, 1 + name_w, -1, role, " %7llu %8.2f %6.2f %8.2f %*.2f%s", (unsigned long long)n,
			  mean, l, p50, enough ? 8 : 7, p99, enough ? "" : "?");
}

void ntp_render_detail(struct ntp_screen *scr, const struct ntp_layout *l, const struct ntp_view *v,
		       const struct ntp_snapshot *s, const struct ntp_top_info *info)
{
	int idx[NTP_SNAP_MAX_GROUPS], n, row = 2, name_w = scr->cols - 43;
	const struct ntp_snap_group *g;
	char label[64], rate[32];

	(void)info;
	if (name_w > 38)
		name_w = 38;
	ntp_screen_put(scr, row++, 1, -1, NTP_ROLE_LABEL, "detail of the selected group (d or Esc: back, Up/Down: another)");
	n = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS);
	if (!n) {
		ntp_screen_put(scr, row + 1, 2, -1, NTP_ROLE_DIM, s ? "no group in this interval" : "waiting for the first interval...");
		return;
	}
	g = &s->groups[idx[v->selected < n ? v->selected : n - 1]];
	ntp_group_label(g, label, sizeof(label));
	ntp_rate_label(g->rate, rate, sizeof(rate));
	/* "about": estimated from the sampled commands; exact from the kernel's counts */
	ntp_screen_printf(scr, row++, 1, -1, NTP_ROLE_GROUP, "== %s: %llu sampled of %s%s commands/s%s",
			  label, (unsigned long long)g->sampled, g->commands ? "" : "about ", rate,
			  g->host_only ? ", host side only" : g->target_only ? ", target side only" : "");
	ntp_screen_printf(scr, row++, 1, -1, NTP_ROLE_TEXT, "latency (us): mean %.2f, p50 %.2f, p99 %.2f%s, p99.9 %.2f%s",
			  g->e2e_mean_us, g->e2e_p50_us, g->e2e_p99_us, ntp_pct_enough(g->sampled, 0.99) ? "" : "?",
			  g->e2e_p999_us, ntp_pct_enough(g->sampled, 0.999) ? "" : "?");
	row++;
	ntp_screen_put(scr, row++, 1, -1, NTP_ROLE_LABEL, "components, in path order (L: commands in each, by Little's law)");
	ntp_screen_put(scr, row, 1, name_w, NTP_ROLE_LABEL, "component (us)");
	ntp_screen_printf(scr, row++, 1 + name_w, -1, NTP_ROLE_LABEL, " %7s %8s %6s %8s %8s", "n", "mean", "L",
			  "p50", "p99");
	for (size_t i = 0; i < sizeof(path_order) / sizeof(path_order[0]); i++) {
		const struct ntp_snap_comp *c = &g->comp[path_order[i]];

		if (!c->n)
			continue;
		if (row >= l->status_row - 1) {
			ntp_screen_put(scr, row, 1, -1, NTP_ROLE_DIM, "... (a taller terminal shows the rest)");
			return;
		}
		comp_row(scr, row++, name_w, NTP_ROLE_TEXT, ntp_component_name(path_order[i]), c->n, c->mean_us,
			 c->avg_qd, c->p50_us, c->p99_us);
	}
	comp_row(scr, row, name_w, NTP_ROLE_VALUE, "end to end", g->sampled, g->e2e_mean_us,
		 g->rate * g->e2e_mean_us / 1e6, g->e2e_p50_us, g->e2e_p99_us);
}

void ntp_render_help(struct ntp_screen *scr, const struct ntp_layout *l, const struct ntp_top_info *info)
{
	int row = 2;

	(void)info;
	ntp_screen_put(scr, row++, 1, -1, NTP_ROLE_LABEL, "keys (h, ? or F1 again: back)");
	for (int i = 0; i < ntp_n_bindings && row < l->status_row; i++) {
		const struct ntp_binding *b = &ntp_bindings[i];

		if (!b->keyname)
			continue;
		ntp_screen_put(scr, row, 3, 12, NTP_ROLE_KEY, b->keyname);
		ntp_screen_put(scr, row++, 16, -1, NTP_ROLE_TEXT, b->help);
	}
	static const char *const legend[] = {
		"",
		"bars: each stage's share of the mean end-to-end latency of its group;",
		"mean and p99 in microseconds; avg QD: commands in the stage on average",
		"(Little's law: mean x rate; cnt QD: counted on every I/O, --exact-queues);",
		"'*': network and target together, the target's side not recorded;",
		"'~': the target's receive path only (target-only); p99?: of fewer than",
		"100 samples, the largest seen; p99 sparkline: the group's recent intervals",
	};
	for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]) && row < l->status_row; i++)
		ntp_screen_put(scr, row++, 3, -1, NTP_ROLE_DIM, legend[i]);
}
