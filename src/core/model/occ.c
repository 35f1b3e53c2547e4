// SPDX-License-Identifier: GPL-2.0
/*
 * occ.c - counted queue depths from the kernel's stage sums (occ.h).
 */
#include <string.h>
#include "occ.h"

/* a sum of signed spans held modulo 2^64 (a loopback wire can be negative) */
static double ns_of(uint64_t v)
{
	return (double)(int64_t)v;
}

int ntp_occ_stage_qd(const struct ntp_group_occ *h, const struct ntp_group_occ *t, double seconds,
		     struct ntp_occ_qd *out)
{
	double per = seconds > 0 ? 1.0 / (seconds * 1e9) : 0;

	memset(out, 0, sizeof(*out));
	if (!(seconds > 0) || (!h && !t))
		return -1;
	if (h) {
		out->stage[NTP_STAGE_HOST_BLOCK] = ns_of(h->ns[NTP_OCC_H_BLOCK]) * per;
		out->stage[NTP_STAGE_HOST_DRIVER] = ns_of(h->ns[NTP_OCC_H_DRIVER]) * per;
		out->host_recv = ns_of(h->ns[NTP_OCC_H_RECV]) * per;
		out->summed = h->summed;
		out->incomplete = h->incomplete;
	}
	if (h && t) {
		out->stage[NTP_STAGE_NETWORK] = ns_of(h->ns[NTP_OCC_H_WAIT] + h->ns[NTP_OCC_H_RECV] -
						      t->ns[NTP_OCC_T_DRIVER] - t->ns[NTP_OCC_T_STORAGE]) * per;
		out->host_recv = 0;
	} else if (h) {
		out->stage[NTP_STAGE_NETWORK] = ns_of(h->ns[NTP_OCC_H_WAIT] + h->ns[NTP_OCC_H_RECV]) * per;
	} else {
		out->stage[NTP_STAGE_NETWORK] = ns_of(t->ns[NTP_OCC_T_RECV] + t->ns[NTP_OCC_T_XFER]) * per;
		out->summed = t->summed;
		out->incomplete = t->incomplete;
	}
	if (t) {
		out->stage[NTP_STAGE_TARGET_DRIVER] = ns_of(t->ns[NTP_OCC_T_DRIVER]) * per;
		out->stage[NTP_STAGE_STORAGE] = ns_of(t->ns[NTP_OCC_T_STORAGE]) * per;
	}
	return 0;
}

void ntp_occ_add_to(struct ntp_group_occ *a, const struct ntp_group_occ *b)
{
	a->summed += b->summed;
	a->incomplete += b->incomplete;
	for (int i = 0; i < NTP_OCC_SLOTS; i++)
		a->ns[i] += b->ns[i];
}

void ntp_occ_delta(const struct ntp_group_occ *cur, const struct ntp_group_occ *base, struct ntp_group_occ *d)
{
	d->summed = cur->summed - base->summed;
	d->incomplete = cur->incomplete - base->incomplete;
	for (int i = 0; i < NTP_OCC_SLOTS; i++)
		d->ns[i] = cur->ns[i] - base->ns[i];
}

int ntp_occ_any(const struct ntp_group_occ *o)
{
	return o->summed || o->incomplete;
}
