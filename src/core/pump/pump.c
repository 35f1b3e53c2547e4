// SPDX-License-Identifier: GPL-2.0
/* pump.c - the one driver from a source to the model and the sinks (see pump.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pump.h"

struct ntp_pump {
	struct ntp_pump_config cfg;
	struct ntp_pump_sink sink[NTP_PUMP_MAX_SINKS];
	unsigned n_sinks;
	uint64_t origin;		/* of the current grid */
	uint64_t boundary;		/* the next grid point; UINT64_MAX without a grid */
	uint64_t last_close;
	uint64_t now;			/* data time reached */
	uint64_t closed;		/* intervals closed */
	uint64_t lost_seen;
	int sink_err;			/* first error of a record/totals sink */
	int filtered;
	struct ntp_record_filter filter;
	struct ntp_total *kept;		/* totals rows the filter keeps */
	size_t kept_cap;
	struct ntp_snapshot *snap;	/* the interval being handed out */
};

static uint64_t first_boundary(uint64_t origin, uint64_t interval, uint64_t after)
{
	uint64_t k;

	if (!interval)
		return UINT64_MAX;
	if (after < origin)
		return origin + interval;
	k = (after - origin) / interval + 1;
	/* a grid point beyond the clock's range: no more boundaries */
	if (k > (UINT64_MAX - origin) / interval)
		return UINT64_MAX;
	return origin + k * interval;
}

struct ntp_pump *ntp_pump_new(const struct ntp_pump_config *cfg)
{
	struct ntp_pump *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->snap = malloc(sizeof(*p->snap));
	if (!p->snap) {
		free(p);
		return NULL;
	}
	p->cfg = *cfg;
	if (cfg->filter) {
		p->filter = *cfg->filter;
		p->filtered = 1;
		p->cfg.filter = NULL;
	}
	p->origin = p->last_close = p->now = cfg->start_ns;
	p->boundary = first_boundary(p->origin, cfg->interval_ns, p->origin);
	if (cfg->start_ns)
		ntp_model_set_start(cfg->model, cfg->start_ns);
	return p;
}

void ntp_pump_free(struct ntp_pump *p)
{
	if (!p)
		return;
	free(p->snap);
	free(p->kept);
	free(p);
}

int ntp_pump_add_sink(struct ntp_pump *p, const struct ntp_pump_sink *s)
{
	if (p->n_sinks == NTP_PUMP_MAX_SINKS)
		return -1;
	p->sink[p->n_sinks++] = *s;
	return 0;
}

int ntp_filter_keeps(const struct ntp_record_filter *f, uint8_t side, uint8_t io, uint32_t len, const char *dev)
{
	if (f->io_type >= 0 && io != f->io_type)
		return 0;
	if (f->n_sizes) {
		int hit = 0;

		for (int i = 0; i < f->n_sizes && !hit; i++)
			hit = f->sizes[i] == len;
		if (!hit)
			return 0;
	}
	if (f->session[0] && side == NTP_SIDE_HOST) {
		char d[NTP_DEV_LEN];
		unsigned s, c, n;
		int end = 0;

		memcpy(d, dev, NTP_DEV_LEN);
		d[NTP_DEV_LEN - 1] = '\0';
		/* a multipath path nvme<S>c<C>n<N> belongs to its head nvme<S>n<N> */
		if (sscanf(d, "nvme%uc%un%u%n", &s, &c, &n, &end) == 3 && end > 0 && !d[end])
			snprintf(d, sizeof(d), "nvme%un%u", s, n);
		if (strcmp(d, f->session))
			return 0;
	}
	return 1;
}

void ntp_pump_record(struct ntp_pump *p, const struct ntp_record *r)
{
	if (p->filtered && !ntp_filter_keeps(&p->filter, r->side, ntp_io_type_of(r->opcode), r->len, r->dev))
		return;
	ntp_model_ingest(p->cfg.model, r);
	for (unsigned i = 0; i < p->n_sinks; i++)
		if (p->sink[i].record) {
			int e = p->sink[i].record(p->sink[i].ctx, r);

			if (e < 0 && !p->sink_err)
				p->sink_err = e;
		}
}

struct ntp_model *ntp_pump_plain_model(const struct ntp_pump *p)
{
	if (p->filtered)
		return NULL;
	for (unsigned i = 0; i < p->n_sinks; i++)
		if (p->sink[i].record)
			return NULL;
	return p->cfg.model;
}

int ntp_pump_record_sinks(const struct ntp_pump *p)
{
	for (unsigned i = 0; i < p->n_sinks; i++)
		if (p->sink[i].record)
			return 1;
	return 0;
}

void ntp_pump_records(struct ntp_pump *p, const struct ntp_record *r, size_t n)
{
	int plain = !p->filtered;

	for (unsigned i = 0; i < p->n_sinks; i++)
		plain &= !p->sink[i].record;
	/* no filter, no sink of records (a report): the model alone, the
	 * block in one call, without the checks per record */
	if (plain) {
		ntp_model_ingest_block(p->cfg.model, r, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		ntp_pump_record(p, &r[i]);
}

void ntp_pump_totals(struct ntp_pump *p, const struct ntp_total *t, size_t n, uint64_t as_of_ns)
{
	ntp_pump_totals_to(p, t, n, as_of_ns, NTP_TOTALS_MODEL | NTP_TOTALS_SINKS);
}

void ntp_pump_totals_to(struct ntp_pump *p, const struct ntp_total *t, size_t n, uint64_t as_of_ns,
			unsigned to)
{
	if (p->filtered) {
		size_t k = 0;

		if (n > p->kept_cap) {
			struct ntp_total *g = realloc(p->kept, n * sizeof(*g));

			if (!g)
				return;	/* the counts stay the last ones kept */
			p->kept = g;
			p->kept_cap = n;
		}
		for (size_t i = 0; i < n; i++)
			if (ntp_filter_keeps(&p->filter, t[i].key.side, t[i].key.io, t[i].key.len, t[i].key.dev))
				p->kept[k++] = t[i];
		t = p->kept;
		n = k;
	}
	if (to & NTP_TOTALS_MODEL)
		ntp_model_set_totals(p->cfg.model, t, n, as_of_ns);
	for (unsigned i = 0; (to & NTP_TOTALS_SINKS) && i < p->n_sinks; i++)
		if (p->sink[i].totals) {
			int e = p->sink[i].totals(p->sink[i].ctx, t, n, as_of_ns);

			if (e < 0 && !p->sink_err)
				p->sink_err = e;
		}
}

void ntp_pump_lost(struct ntp_pump *p, uint64_t cumulative)
{
	if (cumulative > p->lost_seen) {
		ntp_model_add_lost(p->cfg.model, cumulative - p->lost_seen);
		p->lost_seen = cumulative;
		for (unsigned i = 0; i < p->n_sinks; i++)
			if (p->sink[i].lost) {
				int e = p->sink[i].lost(p->sink[i].ctx, cumulative, p->now);

				if (e < 0 && !p->sink_err)
					p->sink_err = e;
			}
	}
}

void ntp_pump_skipped(struct ntp_pump *p, uint64_t cumulative)
{
	ntp_model_set_skipped(p->cfg.model, cumulative);
}

uint64_t ntp_pump_interval(const struct ntp_pump *p)
{
	return p->cfg.interval_ns;
}

uint64_t ntp_pump_next_boundary(const struct ntp_pump *p)
{
	if (p->cfg.end_ns && p->boundary > p->cfg.end_ns)
		return p->cfg.end_ns;
	return p->boundary;
}

uint64_t ntp_pump_now(const struct ntp_pump *p)
{
	return p->now;
}

uint64_t ntp_pump_intervals(const struct ntp_pump *p)
{
	return p->closed;
}

int ntp_pump_sink_error(const struct ntp_pump *p)
{
	return p->sink_err;
}

/* Closes the interval at t and hands it to the sinks. With no sink that
 * reads intervals (`ntprof report`'s pump) the model fills no snapshot:
 * its 90 KB were pages written for nobody. */
static int close_at(struct ntp_pump *p, uint64_t t)
{
	int ret = 0, read = 0;

	for (unsigned i = 0; i < p->n_sinks; i++)
		read |= p->sink[i].interval != NULL;
	ntp_model_close_interval(p->cfg.model, t, read ? p->snap : NULL);
	p->last_close = t;
	p->closed++;
	for (unsigned i = 0; i < p->n_sinks; i++)
		if (p->sink[i].interval) {
			int e = p->sink[i].interval(p->sink[i].ctx, p->snap);

			if (e < 0 && ret >= 0)
				ret = e;
			else if (e > 0 && !ret)
				ret = 1;
		}
	return ret;
}

static int tick(struct ntp_pump *p, uint64_t t)
{
	for (unsigned i = 0; i < p->n_sinks; i++)
		if (p->sink[i].tick) {
			int e = p->sink[i].tick(p->sink[i].ctx, t);

			if (e < 0)
				return e;
		}
	return 0;
}

int ntp_pump_advance(struct ntp_pump *p, uint64_t now_ns)
{
	int ret;

	if (p->cfg.end_ns && now_ns > p->cfg.end_ns)
		now_ns = p->cfg.end_ns;
	if (now_ns > p->now)
		p->now = now_ns;
	ret = tick(p, p->now);
	if (!ret)
		ret = p->sink_err;
	if (ret)
		return ret;
	/* (-d's end off the grid is closed by ntp_pump_finish: now is clamped to it) */
	if (p->now >= p->boundary) {
		ret = close_at(p, p->now);
		p->boundary = first_boundary(p->origin, p->cfg.interval_ns, p->now);
	}
	return ret;
}

void ntp_pump_set_interval(struct ntp_pump *p, uint64_t interval_ns)
{
	if (interval_ns == p->cfg.interval_ns)
		return;
	p->cfg.interval_ns = interval_ns;
	p->origin = p->last_close;
	p->boundary = first_boundary(p->origin, interval_ns, p->last_close);
}

int ntp_pump_run(struct ntp_pump *p, const struct ntp_pump_source *src, int (*stop)(void *), void *stop_ctx)
{
	for (;;) {
		uint64_t reached = p->now;
		int more, ret;

		if (stop && stop(stop_ctx))
			return 1;
		more = src->pull(src->ctx, p, ntp_pump_next_boundary(p), &reached);
		if (more < 0)
			return more;
		ret = ntp_pump_advance(p, reached);
		if (ret)
			return ret;
		if (!more || (p->cfg.end_ns && p->now >= p->cfg.end_ns))
			return 0;
	}
}

int ntp_pump_finish(struct ntp_pump *p, uint64_t end_ns, struct ntp_snapshot *total)
{
	int ret = 0;

	if (p->cfg.end_ns && end_ns > p->cfg.end_ns)
		end_ns = p->cfg.end_ns;
	if (end_ns < p->last_close)
		end_ns = p->last_close;
	if (end_ns > p->now)
		p->now = end_ns;
	if (end_ns > p->last_close || !p->closed)
		ret = close_at(p, end_ns);
	if (total)
		ntp_model_total(p->cfg.model, total);
	return ret;
}
