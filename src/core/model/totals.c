// SPDX-License-Identifier: GPL-2.0
/* totals.c - rows of cumulative exact counters (see totals.h). */
#include <math.h>
#include <string.h>
#include "occ.h"
#include "totals.h"

static const struct ntp_total *find(const struct ntp_total *rows, size_t n, const struct ntp_group_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(&rows[i].key, k, sizeof(*k)))
			return &rows[i];
	return NULL;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void ntp_totals_since(const struct ntp_total *cur, size_t n, const struct ntp_total *base, size_t nb,
		      struct ntp_total *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct ntp_total *b = find(base, nb, &cur[i].key);

		out[i] = cur[i];
		if (!b)
			continue;
		out[i].count.commands = sub0(cur[i].count.commands, b->count.commands);
		out[i].count.bytes = sub0(cur[i].count.bytes, b->count.bytes);
		ntp_occ_delta(&cur[i].occ, &b->occ, &out[i].occ);
	}
}

static uint64_t at(uint64_t p, uint64_t c, uint64_t t0, uint64_t t1, uint64_t t)
{
	double v = (double)p + ((double)c - (double)p) * ((double)t - (double)t0) / (double)(t1 - t0);

	return v <= 0 ? 0 : (uint64_t)llround(v);
}

size_t ntp_totals_at(const struct ntp_total *prev, size_t n_prev, uint64_t t0, const struct ntp_total *cur,
		     size_t n_cur, uint64_t t1, uint64_t t, struct ntp_total *out)
{
	for (size_t i = 0; i < n_cur; i++) {
		const struct ntp_total *p = find(prev, n_prev, &cur[i].key);
		uint64_t pc = p ? p->count.commands : 0, pb = p ? p->count.bytes : 0;

		out[i] = cur[i];
		if (t1 <= t0 || t == t1)
			continue;
		if (t <= t0) {
			out[i].count.commands = pc;
			out[i].count.bytes = pb;
			continue;
		}
		out[i].count.commands = at(pc, cur[i].count.commands, t0, t1, t);
		out[i].count.bytes = at(pb, cur[i].count.bytes, t0, t1, t);
	}
	return n_cur;
}
