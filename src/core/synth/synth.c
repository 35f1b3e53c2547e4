// SPDX-License-Identifier: GPL-2.0
/*
 * synth.c - the synthetic path model of synth.h.
 *
 * Timestamps of one command, in path order (t = simulated ns, d(X) = a draw
 * of segment X, ser(b) = b bytes at the link rate):
 *
 *   H_BIO_SUBMIT   = arrival (only with bio_stamp)
 *   H_BLK_SUBMIT   = start (arrival, or when a tag frees up)
 *   H_DRV_SUBMIT   = + d(host-block-sub)
 *   H_CMD_SENT     = + d(host-driver-sub)
 *   T_CMD_ARRIVE   = + d(wire)
 *   T_CMD_RECV     = + ser(in-capsule data) + d(target-recv)
 *   read / in-capsule write:
 *     T_STORAGE_SUBMIT = + d(target-driver-sub)
 *   write with R2T (TCP):
 *     T_R2T_SENT   = T_CMD_RECV + d(target-driver-sub)
 *     H_R2T_ARRIVE = + d(wire);  H_R2T_DRV = + d(host-recv);  H_DATA_SENT = + d(host-driver-data)
 *     T_DATA_ARRIVE = + d(wire); T_DATA_RECV = + ser(len) + d(target-recv)
 *     T_STORAGE_SUBMIT = + d(target-driver-data)
 *   write with RDMA READ:
 *     T_R2T_SENT (READ posted) = T_CMD_RECV + d(target-driver-sub)
 *     T_DATA_ARRIVE (READ done) = + 2 d(wire) + ser(len); T_DATA_RECV = + d(target-recv)
 *     T_STORAGE_SUBMIT = + d(target-driver-data)
 *   T_STORAGE_DONE = + d(storage)
 *   T_RSP_QUEUED   = + d(target-driver-comp)
 *   T_RSP_SENT     = + d(target-send)
 *   H_RSP_ARRIVE   = + d(wire) + ser(read data, sent ahead of the response)
 *   H_RSP_DRV      = + d(host-recv)
 *   H_DRV_COMPLETE = + d(host-driver-comp)
 *   H_BLK_COMPLETE = + d(host-block-comp)     (the tag is free again here)
 *   RDMA only: H_SEND_DONE = H_CMD_SENT + 2 d(wire), T_RSP_SEND_DONE = T_RSP_SENT + 2 d(wire)
 *
 * Host timestamps are on the host machine's clock (host_clock0 + t, one
 * machine per controller, each shifted by a further hour, or all on host 1's
 * clock with one_host_clock), target ones on
 * the target's (host_clock0 + target_clock_offset + t): nothing needs the
 * two clocks to agree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "synth.h"
#include "../../../bpf/ntprof_hash.h"
#include "../../../bpf/ntprof_occ.h"
#include "../model/occ.h"

#define NSEC 1000000000ull
#define HOST_CLOCK_STEP (3600 * NSEC + 7777)	/* controller k's machine: + k hours */

static const char *const seg_names[NTP_SEG_COUNT] = {
	[NTP_SEG_HOST_BLOCK_SUB] = "host-block-sub",
	[NTP_SEG_HOST_DRIVER_SUB] = "host-driver-sub",
	[NTP_SEG_WIRE] = "wire",
	[NTP_SEG_TARGET_RECV] = "target-recv",
	[NTP_SEG_TARGET_DRIVER_SUB] = "target-driver-sub",
	[NTP_SEG_HOST_RECV] = "host-recv",
	[NTP_SEG_HOST_DRIVER_DATA] = "host-driver-data",
	[NTP_SEG_TARGET_DRIVER_DATA] = "target-driver-data",
	[NTP_SEG_STORAGE] = "storage",
	[NTP_SEG_TARGET_DRIVER_COMP] = "target-driver-comp",
	[NTP_SEG_TARGET_SEND] = "target-send",
	[NTP_SEG_HOST_DRIVER_COMP] = "host-driver-comp",
	[NTP_SEG_HOST_BLOCK_COMP] = "host-block-comp",
};

int ntp_seg_by_name(const char *name)
{
	for (int i = 0; i < NTP_SEG_COUNT; i++)
		if (seg_names[i] && !strcmp(seg_names[i], name))
			return i;
	return -1;
}

const char *ntp_seg_name(enum ntp_seg seg)
{
	return seg < NTP_SEG_COUNT ? seg_names[seg] : "?";
}

/* ---- PRNG: xoshiro256**, seeded through splitmix64 ---- */
void ntp_rng_seed(struct ntp_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9E3779B97F4A7C15ULL);

		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		r->s[i] = z ^ (z >> 31);
	}
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ntp_rng_u64(struct ntp_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

double ntp_rng_unit(struct ntp_rng *r)
{
	return (double)(ntp_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* uniform integer below n (n > 0), unbiased enough for n << 2^64 (Lemire) */
static inline uint64_t rng_below(struct ntp_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)ntp_rng_u64(r) * n) >> 64);
}

double ntp_delay_draw(struct ntp_rng *r, const struct ntp_delay *d)
{
	double u, v;

	switch (d->dist) {
	case NTP_DIST_UNIFORM:
		return d->mean_ns * (1.0 - d->spread + 2.0 * d->spread * ntp_rng_unit(r));
	case NTP_DIST_EXP:
		return -d->mean_ns * log(1.0 - ntp_rng_unit(r));
	case NTP_DIST_LOGNORMAL:
		/* Box-Muller (one of the pair: the sequence of draws is part of
		 * what a seed means, and goldens elsewhere depend on it); mu is
		 * chosen so that the mean is mean_ns */
		u = 1.0 - ntp_rng_unit(r);
		v = ntp_rng_unit(r);
		return d->mean_ns * exp(d->spread * sqrt(-2.0 * log(u)) * cos(2 * M_PI * v) -
					d->spread * d->spread / 2);
	case NTP_DIST_FIXED:
	default:
		return d->mean_ns;
	}
}

void ntp_synth_defaults(struct ntp_synth_config *c)
{
	static const struct { int seg; uint8_t dist; double us; } def[] = {
		{ NTP_SEG_HOST_BLOCK_SUB, NTP_DIST_LOGNORMAL, 1.5 },
		{ NTP_SEG_HOST_DRIVER_SUB, NTP_DIST_LOGNORMAL, 3.0 },
		{ NTP_SEG_WIRE, NTP_DIST_LOGNORMAL, 6.0 },
		{ NTP_SEG_TARGET_RECV, NTP_DIST_LOGNORMAL, 4.0 },
		{ NTP_SEG_TARGET_DRIVER_SUB, NTP_DIST_LOGNORMAL, 3.0 },
		{ NTP_SEG_HOST_RECV, NTP_DIST_LOGNORMAL, 4.0 },
		{ NTP_SEG_HOST_DRIVER_DATA, NTP_DIST_LOGNORMAL, 3.0 },
		{ NTP_SEG_TARGET_DRIVER_DATA, NTP_DIST_LOGNORMAL, 2.0 },
		{ NTP_SEG_STORAGE, NTP_DIST_EXP, 80.0 },
		{ NTP_SEG_TARGET_DRIVER_COMP, NTP_DIST_LOGNORMAL, 1.5 },
		{ NTP_SEG_TARGET_SEND, NTP_DIST_LOGNORMAL, 3.0 },
		{ NTP_SEG_HOST_DRIVER_COMP, NTP_DIST_LOGNORMAL, 2.0 },
		{ NTP_SEG_HOST_BLOCK_COMP, NTP_DIST_LOGNORMAL, 1.0 },
	};

	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->duration_ns = NSEC;
	c->rate = 50000;
	c->qd = 32;
	c->queues = 1;
	c->hosts = 1;
	c->sampling = 100;
	c->sizes[0] = 4096;
	c->nsizes = 1;
	c->read_pct = 100;
	c->inline_max = 8192;
	c->lba_size = 512;
	c->ns_bytes = 1ull << 30;
	c->nsid = 1;
	c->transport = NTP_TRANSPORT_TCP;
	c->link_gbps = 25;
	c->want_sides = 1u << NTP_SIDE_HOST | 1u << NTP_SIDE_TARGET;
	for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
		c->delay[def[i].seg] = (struct ntp_delay){ def[i].dist, def[i].us * 1000.0, 0.3 };
	c->host_clock0 = 1000 * NSEC + 123;
	c->target_clock_offset = 3 * 86400 * (int64_t)NSEC + 12345;
	snprintf(c->host_dev, sizeof(c->host_dev), "nvme1n1");
	snprintf(c->target_dev, sizeof(c->target_dev), "nullb0");
}

/* ---- pending records: a min-heap on the time they leave their side ----
 * The heap moves 16-byte entries; records stay put in a slab of slots. */
struct hent {
	uint64_t t;			/* simulated leave time */
	uint32_t slot;
};

struct heap {
	struct hent *a;
	size_t n, cap;
	struct ntp_record *recs;	/* slots */
	uint32_t *free_slots;
	size_t nfree, nslots;
};

/* Pushes an entry at time t; returns its zeroed record slot to fill, NULL on ENOMEM. */
static struct ntp_record *heap_push(struct heap *h, uint64_t t)
{
	uint32_t slot;
	size_t i;

	if (h->n == h->cap) {
		size_t nc = h->cap ? 2 * h->cap : 256;
		struct hent *na = realloc(h->a, nc * sizeof(*na));
		struct ntp_record *nr = realloc(h->recs, nc * sizeof(*nr));
		uint32_t *nf = realloc(h->free_slots, nc * sizeof(*nf));

		if (na)
			h->a = na;
		if (nr)
			h->recs = nr;
		if (nf)
			h->free_slots = nf;
		if (!na || !nr || !nf)
			return NULL;
		h->cap = nc;
	}
	slot = h->nfree ? h->free_slots[--h->nfree] : (uint32_t)h->nslots++;
	i = h->n++;
	while (i && h->a[(i - 1) / 2].t > t) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = (struct hent){ t, slot };
	memset(&h->recs[slot], 0, sizeof(h->recs[slot]));
	return &h->recs[slot];
}

static void heap_pop(struct heap *h, struct ntp_record *out)
{
	struct hent top = h->a[0], last = h->a[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1].t < h->a[c].t)
			c++;
		if (h->a[c].t >= last.t)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	*out = h->recs[top.slot];
	h->free_slots[h->nfree++] = top.slot;
}

/* ---- tag pools: one per (controller, queue) ---- */
struct tag_busy { uint64_t free_at; uint16_t tag; };

struct pool {
	struct tag_busy *busy;		/* min-heap on free_at */
	size_t nbusy;
	uint16_t *free;			/* tags free as of the last arrival */
	size_t nfree;
	uint8_t *genctr;		/* per tag, 4 bits used */
};

static void busy_push(struct pool *p, uint64_t t, uint16_t tag)
{
	size_t i = p->nbusy++;

	while (i && p->busy[(i - 1) / 2].free_at > t) {
		p->busy[i] = p->busy[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	p->busy[i] = (struct tag_busy){ t, tag };
}

static struct tag_busy busy_pop(struct pool *p)
{
	struct tag_busy top = p->busy[0], last = p->busy[--p->nbusy];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= p->nbusy)
			break;
		if (c + 1 < p->nbusy && p->busy[c + 1].free_at < p->busy[c].free_at)
			c++;
		if (p->busy[c].free_at >= last.free_at)
			break;
		p->busy[i] = p->busy[c];
		i = c;
	}
	if (p->nbusy)
		p->busy[i] = last;
	return top;
}

/* ---- totals ---- */
struct group {
	struct ntp_total t;
	uint16_t cntlid;		/* host groups: whose; 0 for target */
};

struct ntp_synth {
	struct ntp_synth_config c;
	struct ntp_rng rng;
	struct pool *pools;
	uint32_t npools;
	struct heap hq, tq;		/* host and target records waiting to leave */
	uint64_t arrival;		/* simulated ns of the current arrival */
	uint64_t issued, sampled;
	uint64_t last_t;		/* latest leave time of a sampled command's records,
					 * built or not: ends and seconds do not depend on want_sides */
	uint64_t next_second;
	uint64_t *host_seq;		/* per controller */
	uint64_t target_seq;
	int issuing_done;
	struct group *groups;
	size_t ngroups, groups_cap;
};

struct ntp_synth *ntp_synth_new(const struct ntp_synth_config *c, char *errbuf, size_t errlen)
{
	struct ntp_synth *s;

#define BAD(...) do { snprintf(errbuf, errlen, __VA_ARGS__); return NULL; } while (0)
	if (!c->count && !c->duration_ns)
		BAD("count or duration must be set");
	if (!(c->rate > 0))
		BAD("rate must be positive");
	if (c->qd < 1 || c->qd > 4096)
		BAD("qd %u: must be 1..4096 (the tag is 12 bits of the command id)", c->qd);
	if (c->queues < 1 || c->queues > 1024)
		BAD("queues %u: must be 1..1024", c->queues);
	if (c->hosts < 1 || c->hosts > 1024)
		BAD("hosts %u: must be 1..1024", c->hosts);
	if (c->hosts * c->queues > 256)
		BAD("hosts x queues = %u: at most 256 queues in all", c->hosts * c->queues);
	if (c->sampling < 1)
		BAD("sampling must be at least 1");
	if (c->nsizes < 1 || c->nsizes > NTP_SYNTH_MAX_SIZES)
		BAD("sizes: 1 to %d sizes", NTP_SYNTH_MAX_SIZES);
	if (c->lba_size < 512 || (c->lba_size & (c->lba_size - 1)))
		BAD("lba size %u: must be a power of two >= 512", c->lba_size);
	for (uint32_t i = 0; i < c->nsizes; i++)
		if (!c->sizes[i] || c->sizes[i] % c->lba_size || c->sizes[i] / c->lba_size > 65536 ||
		    c->sizes[i] > c->ns_bytes)
			BAD("size %u: must be a multiple of the LBA size %u, at most 65536 LBAs and the namespace",
			    c->sizes[i], c->lba_size);
	if (c->read_pct > 100)
		BAD("read share %u %%: must be 0..100", c->read_pct);
	if (c->transport != NTP_TRANSPORT_TCP && c->transport != NTP_TRANSPORT_RDMA)
		BAD("transport %u unknown", c->transport);
	if (c->miss_rsp_sent < 0 || c->miss_rsp_sent > 1 || c->drop_target < 0 || c->drop_target > 1)
		BAD("miss/drop fractions must be 0..1");
	for (int i = 0; i < NTP_SEG_COUNT; i++)
		if (!(c->delay[i].mean_ns >= 0) || c->delay[i].mean_ns > 1e12 ||
		    c->delay[i].spread < 0 || c->delay[i].spread > 5 ||
		    (c->delay[i].dist == NTP_DIST_UNIFORM && c->delay[i].spread > 1))
			BAD("delay %s: mean 0..1000 s, spread 0..1 (uniform) or 0..5", seg_names[i]);
#undef BAD
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->c = *c;
	ntp_rng_seed(&s->rng, c->seed);
	s->npools = c->hosts * c->queues;
	s->pools = calloc(s->npools, sizeof(*s->pools));
	s->host_seq = calloc(c->hosts + 1, sizeof(*s->host_seq));
	if (!s->pools || !s->host_seq)
		goto oom;
	for (uint32_t p = 0; p < s->npools; p++) {
		struct pool *pl = &s->pools[p];

		pl->busy = calloc(c->qd, sizeof(*pl->busy));
		pl->free = calloc(c->qd, sizeof(*pl->free));
		pl->genctr = calloc(c->qd, 1);
		if (!pl->busy || !pl->free || !pl->genctr)
			goto oom;
		for (uint32_t t = 0; t < c->qd; t++)
			pl->free[t] = (uint16_t)t;
		pl->nfree = c->qd;
	}
	s->next_second = NSEC;
	return s;
oom:
	snprintf(errbuf, errlen, "out of memory");
	ntp_synth_free(s);
	return NULL;
}

void ntp_synth_free(struct ntp_synth *s)
{
	if (!s)
		return;
	for (uint32_t p = 0; s->pools && p < s->npools; p++) {
		free(s->pools[p].busy);
		free(s->pools[p].free);
		free(s->pools[p].genctr);
	}
	free(s->pools);
	free(s->host_seq);
	free(s->hq.a);
	free(s->hq.recs);
	free(s->hq.free_slots);
	free(s->tq.a);
	free(s->tq.recs);
	free(s->tq.free_slots);
	free(s->groups);
	free(s);
}

uint64_t ntp_synth_clock(const struct ntp_synth *s, uint8_t side, uint16_t cntlid, uint64_t t_ns)
{
	if (side == NTP_SIDE_TARGET)
		return s->c.host_clock0 + (uint64_t)s->c.target_clock_offset + t_ns;
	if (s->c.one_host_clock)
		cntlid = 1;
	return s->c.host_clock0 + (uint64_t)(cntlid ? cntlid - 1 : 0) * HOST_CLOCK_STEP + t_ns;
}

static struct group *count_group(struct ntp_synth *s, uint8_t side, uint16_t cntlid, uint8_t io, uint32_t len)
{
	const char *dev = side == NTP_SIDE_HOST ? s->c.host_dev : s->c.target_dev;
	struct group *g;

	if (side == NTP_SIDE_TARGET)
		cntlid = 0;
	for (size_t i = 0; i < s->ngroups; i++) {
		g = &s->groups[i];
		if (g->t.key.side == side && g->cntlid == cntlid && g->t.key.io == io && g->t.key.len == len) {
			g->t.count.commands++;
			g->t.count.bytes += len;
			return g;
		}
	}
	if (s->ngroups == s->groups_cap) {
		size_t nc = s->groups_cap ? 2 * s->groups_cap : 16;
		struct group *ng = realloc(s->groups, nc * sizeof(*ng));

		if (!ng)
			return NULL;	/* totals then undercount; only under memory exhaustion */
		s->groups = ng;
		s->groups_cap = nc;
	}
	g = &s->groups[s->ngroups++];
	memset(g, 0, sizeof(*g));
	g->cntlid = cntlid;
	g->t.key.side = side;
	g->t.key.io = io;
	g->t.key.len = len;
	snprintf(g->t.key.dev, sizeof(g->t.key.dev), "%s", dev);
	g->t.count.commands = 1;
	g->t.count.bytes = len;
	return g;
}

/* --exact-queues: one command's stage times into its group's sums, computed
 * by the kernel's own code (ntprof_occ.h) from its full timestamps. */
static void occ_group(struct group *g, uint8_t side, const uint64_t *ts, uint32_t valid, uint8_t transport)
{
	struct ntp_record r;

	if (!g)
		return;
	memset(&r, 0, sizeof(r));
	r.side = side;
	r.transport = transport;
	r.ts_valid = valid;
	memcpy(r.ts, ts, NTP_TS_SLOTS * sizeof(ts[0]));
	ntp_occ_add(&g->t.occ, &r);
}

size_t ntp_synth_totals(const struct ntp_synth *s, uint8_t side, uint16_t cntlid,
			struct ntp_total *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->ngroups && n < max; i++) {
		const struct group *g = &s->groups[i];
		size_t j;

		if (g->t.key.side != side || (side == NTP_SIDE_HOST && cntlid && g->cntlid != cntlid))
			continue;
		/* several controllers' host groups of one key merge when cntlid == 0 */
		for (j = 0; j < n; j++)
			if (out[j].key.io == g->t.key.io && out[j].key.len == g->t.key.len)
				break;
		if (j < n) {
			out[j].count.commands += g->t.count.commands;
			out[j].count.bytes += g->t.count.bytes;
			ntp_occ_add_to(&out[j].occ, &g->t.occ);
		} else {
			out[n++] = g->t;
		}
	}
	return n;
}

uint64_t ntp_synth_issued(const struct ntp_synth *s) { return s->issued; }
uint64_t ntp_synth_last_time(const struct ntp_synth *s) { return s->last_t; }
uint64_t ntp_synth_sampled(const struct ntp_synth *s) { return s->sampled; }

static inline uint64_t d(struct ntp_synth *s, enum ntp_seg seg)
{
	double v = ntp_delay_draw(&s->rng, &s->c.delay[seg]);

	return v <= 0 ? 0 : (uint64_t)llround(v);
}

static inline uint64_t ser(const struct ntp_synth *s, uint32_t bytes)
{
	return s->c.link_gbps > 0 ? (uint64_t)llround(bytes * 8.0 / s->c.link_gbps) : 0;
}

static void fill_identity(const struct ntp_synth *s, struct ntp_record *r, uint8_t side, uint16_t cntlid,
			  uint16_t qid, uint16_t cid, uint64_t slba, uint16_t nlb, uint32_t len, int is_read)
{
	const struct ntp_synth_config *c = &s->c;

	r->slba = slba;
	r->len = len;
	r->nsid = c->nsid;
	r->flags = c->sampling == 1 ? NTP_REC_F_SAMPLED_EXACT : 0;
	r->cntlid = cntlid;
	r->qid = qid;
	r->cid = cid;
	r->nlb = nlb;
	r->opcode = is_read ? 0x02 : 0x01;
	r->side = side;
	r->transport = c->transport;
	r->impl = NTP_IMPL_LINUX;
	r->cpu = qid - 1u;
	memcpy(r->dev, side == NTP_SIDE_HOST ? c->host_dev : c->target_dev, NTP_DEV_LEN);
	r->dev[NTP_DEV_LEN - 1] = '\0';
}

#define SET(rec, id, v) do { (rec)->ts[id] = (v); (rec)->ts_valid |= 1u << (id); } while (0)

/* Issues one command at s->arrival; pushes its records if sampled. */
static int issue(struct ntp_synth *s)
{
	const struct ntp_synth_config *c = &s->c;
	uint32_t p = c->hosts * c->queues == 1 ? 0 : (uint32_t)rng_below(&s->rng, s->npools);
	struct pool *pl = &s->pools[p];
	uint16_t cntlid = (uint16_t)(p / c->queues + 1), qid = (uint16_t)(p % c->queues + 1);
	uint64_t start = s->arrival, t, h[NTP_TS_SLOTS] = { 0 }, tg[NTP_TS_SLOTS] = { 0 };
	uint32_t hv = 0, tv = 0, len = c->sizes[c->nsizes == 1 ? 0 : rng_below(&s->rng, c->nsizes)];
	int is_read = rng_below(&s->rng, 100) < c->read_pct;
	uint64_t nblk = len / c->lba_size, slots = (c->ns_bytes / c->lba_size) / nblk;
	uint64_t slba = rng_below(&s->rng, slots) * nblk;
	uint16_t nlb = (uint16_t)(nblk - 1), tag, cid;
	struct tag_busy tb;
	struct group *hg, *tgg;
	uint64_t leave;

	/* tags freed by now join the free set; none free: wait for the first */
	while (pl->nbusy && pl->busy[0].free_at <= start)
		pl->free[pl->nfree++] = busy_pop(pl).tag;
	if (pl->nfree) {
		size_t k = pl->nfree == 1 ? 0 : rng_below(&s->rng, pl->nfree);

		tag = pl->free[k];
		pl->free[k] = pl->free[--pl->nfree];
	} else {
		tb = busy_pop(pl);
		tag = tb.tag;
		start = tb.free_at;
	}
	pl->genctr[tag] = (pl->genctr[tag] + 1) & 0xf;
	cid = (uint16_t)(pl->genctr[tag] << 12 | tag);

#define H(id, v) do { h[id] = (v); hv |= 1u << (id); } while (0)
#define T(id, v) do { tg[id] = (v); tv |= 1u << (id); } while (0)
	if (c->bio_stamp)
		H(NTP_TS_H_BIO_SUBMIT, s->arrival);
	H(NTP_TS_H_BLK_SUBMIT, t = start);
	H(NTP_TS_H_DRV_SUBMIT, t += d(s, NTP_SEG_HOST_BLOCK_SUB));
	H(NTP_TS_H_CMD_SENT, t += d(s, NTP_SEG_HOST_DRIVER_SUB));
	if (c->transport == NTP_TRANSPORT_RDMA)
		H(NTP_TS_H_SEND_DONE, t + 2 * d(s, NTP_SEG_WIRE));
	T(NTP_TS_T_CMD_ARRIVE, t += d(s, NTP_SEG_WIRE));
	if (!is_read && len <= c->inline_max)
		t += ser(s, len);
	T(NTP_TS_T_CMD_RECV, t += d(s, NTP_SEG_TARGET_RECV));
	if (is_read || len <= c->inline_max) {
		T(NTP_TS_T_STORAGE_SUBMIT, t += d(s, NTP_SEG_TARGET_DRIVER_SUB));
	} else if (c->transport == NTP_TRANSPORT_TCP) {
		T(NTP_TS_T_R2T_SENT, t += d(s, NTP_SEG_TARGET_DRIVER_SUB));
		H(NTP_TS_H_R2T_ARRIVE, t += d(s, NTP_SEG_WIRE));
		H(NTP_TS_H_R2T_DRV, t += d(s, NTP_SEG_HOST_RECV));
		H(NTP_TS_H_DATA_SENT, t += d(s, NTP_SEG_HOST_DRIVER_DATA));
		T(NTP_TS_T_DATA_ARRIVE, t += d(s, NTP_SEG_WIRE));
		T(NTP_TS_T_DATA_RECV, t += ser(s, len) + d(s, NTP_SEG_TARGET_RECV));
		T(NTP_TS_T_STORAGE_SUBMIT, t += d(s, NTP_SEG_TARGET_DRIVER_DATA));
	} else {
		T(NTP_TS_T_R2T_SENT, t += d(s, NTP_SEG_TARGET_DRIVER_SUB));
		t += d(s, NTP_SEG_WIRE);
		T(NTP_TS_T_DATA_ARRIVE, t += d(s, NTP_SEG_WIRE) + ser(s, len));
		T(NTP_TS_T_DATA_RECV, t += d(s, NTP_SEG_TARGET_RECV));
		T(NTP_TS_T_STORAGE_SUBMIT, t += d(s, NTP_SEG_TARGET_DRIVER_DATA));
	}
	T(NTP_TS_T_STORAGE_DONE, t += d(s, NTP_SEG_STORAGE));
	T(NTP_TS_T_RSP_QUEUED, t += d(s, NTP_SEG_TARGET_DRIVER_COMP));
	T(NTP_TS_T_RSP_SENT, t += d(s, NTP_SEG_TARGET_SEND));
	if (c->transport == NTP_TRANSPORT_RDMA)
		T(NTP_TS_T_RSP_SEND_DONE, t + 2 * d(s, NTP_SEG_WIRE));
	H(NTP_TS_H_RSP_ARRIVE, t += d(s, NTP_SEG_WIRE) + (is_read ? ser(s, len) : 0));
	H(NTP_TS_H_RSP_DRV, t += d(s, NTP_SEG_HOST_RECV));
	H(NTP_TS_H_DRV_COMPLETE, t += d(s, NTP_SEG_HOST_DRIVER_COMP));
	H(NTP_TS_H_BLK_COMPLETE, t += d(s, NTP_SEG_HOST_BLOCK_COMP));
#undef H
#undef T
	busy_push(pl, t, tag);
	s->issued++;
	hg = count_group(s, NTP_SIDE_HOST, cntlid, is_read ? NTP_IO_READ : NTP_IO_WRITE, len);
	tgg = count_group(s, NTP_SIDE_TARGET, cntlid, is_read ? NTP_IO_READ : NTP_IO_WRITE, len);
	if (c->exact_queues) {
		occ_group(hg, NTP_SIDE_HOST, h, hv, c->transport);
		occ_group(tgg, NTP_SIDE_TARGET, tg, tv, c->transport);
	}
	if (!ntp_sample_pick(cid, slba, nlb, c->sampling))
		return 0;
	s->sampled++;

	if (h[NTP_TS_H_BLK_COMPLETE] > s->last_t)
		s->last_t = h[NTP_TS_H_BLK_COMPLETE];
	if (c->want_sides & (1u << NTP_SIDE_HOST)) {
		struct ntp_record *hr = heap_push(&s->hq, h[NTP_TS_H_BLK_COMPLETE]);

		if (!hr)
			return -1;
		fill_identity(s, hr, NTP_SIDE_HOST, cntlid, qid, cid, slba, nlb, len, is_read);
		hr->seq = s->host_seq[cntlid]++;
		for (int i = 0; i < NTP_TS_SLOTS; i++)
			if (hv & (1u << i))
				SET(hr, i, ntp_synth_clock(s, NTP_SIDE_HOST, cntlid, h[i]));
	}

	/* the target's draws of these two come last so the host's records do
	 * not depend on them */
	if (c->drop_target > 0 && ntp_rng_unit(&s->rng) < c->drop_target)
		return 0;
	if (c->miss_rsp_sent > 0 && ntp_rng_unit(&s->rng) < c->miss_rsp_sent)
		tv &= ~(1u << NTP_TS_T_RSP_SENT);
	/* a target record leaves when its response is sent (or last seen) */
	leave = (tv & (1u << NTP_TS_T_RSP_SENT)) ? tg[NTP_TS_T_RSP_SENT] : tg[NTP_TS_T_RSP_QUEUED];
	if (leave > s->last_t)
		s->last_t = leave;
	if (c->want_sides & (1u << NTP_SIDE_TARGET)) {
		struct ntp_record *tr = heap_push(&s->tq, leave);

		if (!tr)
			return -1;
		fill_identity(s, tr, NTP_SIDE_TARGET, cntlid, qid, cid, slba, nlb, len, is_read);
		tr->seq = s->target_seq;
		for (int i = 0; i < NTP_TS_SLOTS; i++)
			if (tv & (1u << i))
				SET(tr, i, ntp_synth_clock(s, NTP_SIDE_TARGET, cntlid, tg[i]));
	}
	s->target_seq++;
	return 0;
}

/* No command issued later can leave either side before this time. */
static uint64_t watermark(const struct ntp_synth *s)
{
	uint64_t wm = UINT64_MAX;

	if (s->issuing_done)
		return UINT64_MAX;
	/* a pool with a free tag can start at the next arrival (>= s->arrival);
	 * a full one not before its first tag frees */
	for (uint32_t p = 0; p < s->npools; p++) {
		const struct pool *pl = &s->pools[p];
		uint64_t t = pl->nfree || !pl->nbusy || pl->busy[0].free_at <= s->arrival ? s->arrival
											      : pl->busy[0].free_at;
		if (t < wm)
			wm = t;
	}
	return wm;
}

enum ntp_synth_event ntp_synth_next(struct ntp_synth *s, struct ntp_record *rec, uint64_t *t_ns)
{
	for (;;) {
		uint64_t wm = watermark(s);
		struct heap *q = NULL;

		if (s->hq.n && s->hq.a[0].t <= wm)
			q = &s->hq;
		if (s->tq.n && s->tq.a[0].t <= wm && (!q || s->tq.a[0].t < q->a[0].t))
			q = &s->tq;
		if (q) {
			if (q->a[0].t >= s->next_second)
				goto second;
			*t_ns = q->a[0].t;
			heap_pop(q, rec);
			return NTP_SYNTH_RECORD;
		}
		if (s->issuing_done) {
			/* the heaps are empty; seconds up to the last record of
			 * either side, built or not */
			if (s->next_second <= s->last_t)
				goto second;
			return NTP_SYNTH_END;
		}
		if (wm >= s->next_second)
			goto second;
		if ((s->c.count && s->issued >= s->c.count) ||
		    (s->c.duration_ns && s->arrival >= s->c.duration_ns)) {
			s->issuing_done = 1;
			continue;
		}
		if (issue(s))
			return NTP_SYNTH_END;
		/* the next arrival of the Poisson stream */
		s->arrival += (uint64_t)llround(-log(1.0 - ntp_rng_unit(&s->rng)) * 1e9 / s->c.rate);
	}
second:
	*t_ns = s->next_second;
	s->next_second += NSEC;
	return NTP_SYNTH_SECOND;
}
