// SPDX-License-Identifier: GPL-2.0
/*
 * whatif.c - a closed queueing network of the five stages, solved by exact
 * mean value analysis, calibrated on a measured interval and asked about other
 * queue depths. The method and its limits: docs/what-if.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "whatif.h"

/* ---- the solver ---- */

/* log(sum_j exp(a[j] + b[n - j])): one term of a convolution of two
 * stations' unnormalized marginals, in logs (their range, D^j / j! up to
 * j = 1024, is far beyond a double's). */
static double lconv_at(const double *a, const double *b, int n)
{
	double mx = -INFINITY, s = 0;

	for (int j = 0; j <= n; j++)
		if (a[j] + b[n - j] > mx)
			mx = a[j] + b[n - j];
	if (mx == -INFINITY)
		return -INFINITY;
	for (int j = 0; j <= n; j++) {
		double d = a[j] + b[n - j] - mx;

		if (d > -50)	/* below e^-50 of the largest term: nothing in a double */
			s += exp(d);
	}
	return mx + log(s);
}

static void lconv(const double *a, const double *b, double *out, int n)
{
	for (int m = 0; m <= n; m++)
		out[m] = lconv_at(a, b, m);
}

/* log f(j): a delay of demand d (j customers: d^j / j!), or a queue with c
 * servers (d^j / prod_{i<=j} min(i, c)). */
static void lfactor(double d, int c, double *f, int n)
{
	f[0] = 0;
	for (int j = 1; j <= n; j++) {
		if (d <= 0) {
			f[j] = -INFINITY;
			continue;
		}
		f[j] = f[j - 1] + log(d) - log(c == 0 || j < c ? j : c);
	}
}

/* Multi-server queues: the product-form solution by convolution (Buzen),
 * the same exact result as load-dependent MVA, whose recursion on the
 * marginal probabilities is numerically unstable (docs/what-if.md). */
static int solve_conv(const struct ntp_mva_station *st, int k, double z, int n, struct ntp_mva_result *out)
{
	double *f[NTP_STAGE_COUNT + 1] = { 0 }, *g = NULL, *rest = NULL, *tmp = NULL, dz = z;
	int q[NTP_STAGE_COUNT], nq = 0, ret = -1;
	size_t sz = (size_t)(n + 1) * sizeof(double);

	for (int i = 0; i < k; i++) {
		if (st[i].servers == 0 || st[i].servers >= n)
			dz += st[i].demand;	/* delays merge into one (infinite servers) */
		else
			q[nq++] = i;
	}
	g = malloc(sz);
	rest = malloc(sz);
	tmp = malloc(sz);
	if (!g || !rest || !tmp)
		goto out;
	for (int a = 0; a <= nq; a++) {
		f[a] = malloc(sz);
		if (!f[a])
			goto out;
		if (a < nq)
			lfactor(st[q[a]].demand, st[q[a]].servers, f[a], n);
		else
			lfactor(dz, 0, f[a], n);
	}
	memcpy(g, f[nq], sz);
	for (int a = 0; a < nq; a++) {
		lconv(g, f[a], tmp, n);
		memcpy(g, tmp, sz);
	}
	out->x = g[n] > -INFINITY ? exp(g[n - 1] - g[n]) : 0;
	for (int i = 0; i < k; i++)
		out->r[i] = st[i].demand;
	for (int a = 0; a < nq; a++) {
		double ql = 0;

		/* the network without station a, then its marginal at a */
		memcpy(rest, f[nq], sz);
		for (int b = 0; b < nq; b++) {
			if (b == a)
				continue;
			lconv(rest, f[b], tmp, n);
			memcpy(rest, tmp, sz);
		}
		for (int j = 1; j <= n; j++)
			ql += j * exp(f[a][j] + rest[n - j] - g[n]);
		out->r[q[a]] = out->x > 0 ? ql / out->x : st[q[a]].demand;
	}
	out->r_total = 0;
	for (int i = 0; i < k; i++) {
		out->q[i] = out->x * out->r[i];
		out->r_total += out->r[i];
	}
	ret = 0;
out:
	for (int a = 0; a <= nq; a++)
		free(f[a]);
	free(g);
	free(rest);
	free(tmp);
	return ret;
}

int ntp_mva_solve(const struct ntp_mva_station *st, int k, double z, int n, struct ntp_mva_result *out)
{
	int multi = 0;

	memset(out, 0, sizeof(*out));
	if (k < 1 || k > NTP_STAGE_COUNT || n < 1 || n > NTP_WI_MAX_QD || z < 0)
		return -1;
	for (int i = 0; i < k; i++) {
		if (st[i].demand < 0 || st[i].servers < 0)
			return -1;
		multi |= st[i].servers > 1 && st[i].servers < n;
	}
	if (multi)
		return solve_conv(st, k, z, n, out);
	/* Delays and single-server queues: exact MVA (Reiser and Lavenberg).
	 * A station with c >= n servers never has them all busy: a delay. */
	for (int m = 1; m <= n; m++) {
		double sum = 0;

		for (int i = 0; i < k; i++) {
			double d = st[i].demand;

			out->r[i] = st[i].servers == 1 && n > 1 ? d * (1 + out->q[i]) : d;
			sum += out->r[i];
		}
		out->x = (z + sum) > 0 ? m / (z + sum) : 0;
		out->r_total = sum;
		for (int i = 0; i < k; i++)
			out->q[i] = out->x * out->r[i];
	}
	return 0;
}

/* ---- the model of one group ---- */

const char *ntp_wi_source_key(enum ntp_wi_source s)
{
	switch (s) {
	case NTP_WI_SRC_ONE_LOAD: return "one_load";
	case NTP_WI_SRC_NO_CONTENTION: return "no_contention";
	case NTP_WI_SRC_FITTED: return "fitted";
	case NTP_WI_SRC_GIVEN: return "given";
	case NTP_WI_SRC_POOR_FIT: return "fit_rejected";
	}
	return "?";
}

/* One load level: what the fit needs of an interval. */
struct level {
	uint32_t qd;
	int given;			/* qd given, not inferred */
	double lq;			/* rate x mean: the commands in flight measured */
	double x;			/* commands per us */
	double r[NTP_STAGE_COUNT];
	double e2e;			/* end to end, the tag wait left out (r's sum) */
	double wait;			/* per command: the tag wait in the measured end to end
					 * (records with the bio's submission), 0 without */
};

/* Little's law: a closed loop of N has at most N in flight, so N is rate x
 * mean rounded up (rounded down, the think time N / rate - mean would be
 * negative: docs/what-if.md). Within NTP_WI_QD_SLACK above an integer it is
 * that integer (the rate's noise), the think time then 0. */
#define NTP_WI_QD_SLACK 0.005
/* A QD given is refused only when rate x mean is more than this share above
 * it: the mean of a few sampled commands (one in 1000 by default) can read
 * a tenth high, and the run's QD given is the better fact then (its think
 * time is taken as 0: docs/what-if.md) */
#define NTP_WI_GIVEN_SLACK 0.10

/* Records from the bio's submission: the commands holding a tag (rate x
 * the mean without the wait) within this share of the tags held them full,
 * the mean of sampled commands' noise as NTP_WI_GIVEN_SLACK; further below,
 * their wait is no closed loop's over the tags (docs/what-if.md) */
#define NTP_WI_TAGS_HELD 0.10

/* The least QD given that the check below accepts for rate x mean lq */
static uint32_t least_given(double lq)
{
	uint32_t q = lq > 1 ? (uint32_t)ceil(lq / (1 + NTP_WI_GIVEN_SLACK)) : 1;

	while (lq > q * (1 + NTP_WI_GIVEN_SLACK))
		q++;
	while (q > 1 && lq <= (q - 1) * (1 + NTP_WI_GIVEN_SLACK))
		q--;
	return q;
}

static uint32_t qd_of(double lq)
{
	double c = ceil(lq - NTP_WI_QD_SLACK * (lq > 1 ? lq : 1));

	if (c < 1)
		return 1;
	return c > NTP_WI_MAX_QD ? NTP_WI_MAX_QD : (uint32_t)c;
}

static int level_of(const struct ntp_snap_group *g, uint32_t given, struct level *l)
{
	double lq;

	if (!g || g->target_only || g->rate <= 0 || g->e2e_mean_us <= 0)
		return -1;
	/* the rate while the group had commands: a recording's idle start
	 * and end would read as a lower QD */
	l->x = (g->busy_rate > 0 ? g->busy_rate : g->rate) / 1e6;
	/* Records timed from the bio's submission hold their wait for a
	 * tag in the host block layer: out of its station and of the loop
	 * the stages see, which are the commands holding a tag (ntp_wi_build
	 * puts the wait back where the tags explain it; docs/what-if.md) */
	l->wait = g->bio_records && g->sampled && g->tag_wait_sum_ns > 0 && g->stage[NTP_STAGE_HOST_BLOCK].present ?
		  (double)g->tag_wait_sum_ns / 1e3 / (double)g->sampled : 0;
	if (l->wait > g->stage[NTP_STAGE_HOST_BLOCK].mean_us)
		l->wait = g->stage[NTP_STAGE_HOST_BLOCK].mean_us;
	l->e2e = g->e2e_mean_us - l->wait;
	lq = l->x * l->e2e;
	l->lq = lq;
	l->given = given > 0;
	l->qd = given ? given : qd_of(lq);
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		l->r[k] = g->stage[k].present ? g->stage[k].mean_us : 0;
	l->r[NTP_STAGE_HOST_BLOCK] -= l->wait;
	return 0;
}

/* Stage k as a c-server queue beside one delay holding the rest of the
 * loop (the other stages and the think time as measured at that level):
 * the residence time at qd. */
static double two_station(double s, int c, double rest, uint32_t qd)
{
	struct ntp_mva_station st[2] = { { s, c }, { rest > 0 ? rest : 0, 0 } };
	struct ntp_mva_result r;

	if (ntp_mva_solve(st, 2, 0, (int)qd, &r))
		return s;
	return r.r[0];
}

/* The service time that makes stage k at lv reproduce its measured time. */
static double calibrate_one(const struct level *lv, int k, int c)
{
	double want = lv->r[k], lo = 0, hi = want, rest = lv->qd / lv->x - want;

	if (c == 0 || want <= 0)
		return want > 0 ? want : 0;
	for (int it = 0; it < 40; it++) {
		double mid = (lo + hi) / 2;

		if (two_station(mid, c, rest, lv->qd) < want)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* Growth below this is read as noise, not waiting (docs/what-if.md). */
#define NTP_WI_NOISE 0.10

/* The load a level's rate x mean stands for: below 1 in flight a closed
 * loop is still at QD 1 (the rest is think time). */
static double load_of(const struct level *l)
{
	return l->lq > 1 ? l->lq : 1;
}

static int by_lq(const void *a, const void *b)
{
	const struct level *x = *(const struct level *const *)a, *y = *(const struct level *const *)b;

	return load_of(x) < load_of(y) ? -1 : load_of(x) > load_of(y);
}

/* Intervals at one load are one load level: their means averaged (less
 * noise, and the fit's cost grows with the levels, not the intervals). One
 * load is the same QD given, or rates x mean (at least 1) that, in order,
 * are each within NTP_WI_LEVEL_RATIO of the one below (rounding them alone would
 * split one steady load into several "levels" by its noise); an interval
 * whose QD was not given takes the given QD of the level it falls in. */
static int merge_levels(const struct level *lv, int n, struct level *out)
{
	const struct level *srt[NTP_WI_MAX_FIT + 1];
	int cnt[NTP_WI_MAX_FIT + 1], m = 0;
	double hi[NTP_WI_MAX_FIT + 1];

	for (int i = 0; i < n; i++)
		srt[i] = &lv[i];
	qsort(srt, (size_t)n, sizeof(srt[0]), by_lq);
	for (int i = 0; i < n; i++) {
		const struct level *l = srt[i];
		int j;

		for (j = 0; j < m; j++)
			if (load_of(l) <= hi[j] * NTP_WI_LEVEL_RATIO &&
			    !(l->given && out[j].given && l->qd != out[j].qd))
				break;
		if (j == m) {
			out[m] = *l;
			hi[m] = load_of(l);
			cnt[m++] = 1;
			continue;
		}
		if (l->given && !out[j].given) {
			out[j].given = 1;
			out[j].qd = l->qd;
		}
		hi[j] = load_of(l);
		out[j].x += l->x;
		out[j].e2e += l->e2e;
		out[j].wait += l->wait;
		for (int k = 0; k < NTP_STAGE_COUNT; k++)
			out[j].r[k] += l->r[k];
		cnt[j]++;
	}
	for (int j = 0; j < m; j++) {
		out[j].x /= cnt[j];
		out[j].e2e /= cnt[j];
		out[j].wait /= cnt[j];
		for (int k = 0; k < NTP_STAGE_COUNT; k++)
			out[j].r[k] /= cnt[j];
		out[j].lq = out[j].x * out[j].e2e;
		if (!out[j].given)
			out[j].qd = qd_of(out[j].lq);
	}
	return m;
}

static void fit_stage(struct ntp_wi_station *s, int k, const struct level *lv, int nlv)
{
	int lo = 0, grew = 0;
	uint32_t maxqd = 0;
	double best_err = INFINITY;
	int best_c = 0;

	for (int i = 1; i < nlv; i++)
		if (lv[i].qd < lv[lo].qd)
			lo = i;
	for (int i = 0; i < nlv; i++) {
		if (lv[i].qd > maxqd)
			maxqd = lv[i].qd;
		if (lv[i].qd > lv[lo].qd && lv[lo].r[k] > 0 && lv[i].r[k] > (1 + NTP_WI_NOISE) * lv[lo].r[k])
			grew = 1;
	}
	s->fit_max_qd = maxqd;
	if (!grew || lv[lo].r[k] <= 0) {
		s->servers = 0;
		s->source = NTP_WI_SRC_NO_CONTENTION;
		return;
	}
	/* candidates: every c up to 64, then coarser; c >= the highest level
	 * is a delay over the data, which is the c = 0 candidate */
	for (int c = 0; c <= (int)maxqd; c = c < 64 ? c + 1 : c + c / 2) {
		double s_c = calibrate_one(&lv[lo], k, c), err = 0;
		int n = 0;

		for (int i = 0; i < nlv; i++) {
			double pred, e;

			if (lv[i].qd == lv[lo].qd || lv[i].r[k] <= 0)
				continue;
			pred = c ? two_station(s_c, c, lv[i].qd / lv[i].x - lv[i].r[k], lv[i].qd) : s_c;
			e = (pred - lv[i].r[k]) / lv[i].r[k];
			err += e * e;
			n++;
		}
		err = n ? sqrt(err / n) : 0;
		if (err < best_err - 1e-12) {
			best_err = err;
			best_c = c;
		}
	}
	s->servers = best_c;
	s->source = best_c ? NTP_WI_SRC_FITTED : NTP_WI_SRC_NO_CONTENTION;
	s->fit_err = best_err;
	/* a c that explains the other loads this poorly is no parallelism
	 * seen: a delay, as for one load level, and the output says so */
	if (best_c && best_err > NTP_WI_FIT_MAX_ERR) {
		s->fit_servers = best_c;
		s->servers = 0;
		s->source = NTP_WI_SRC_POOR_FIT;
	}
}

static void stations(const struct ntp_wi_model *m, struct ntp_mva_station *st)
{
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		st[k].demand = m->st[k].present ? m->st[k].service_us : 0;
		st[k].servers = m->st[k].present ? m->st[k].servers : 0;
	}
}

int ntp_wi_build(const struct ntp_snap_group *base, const struct ntp_snap_group *const *fit, int nfit,
		 const struct ntp_wi_params *p, struct ntp_wi_model *m)
{
	struct level lv[NTP_WI_MAX_FIT + 1], lvm[NTP_WI_MAX_FIT + 1];
	struct ntp_mva_station st[NTP_STAGE_COUNT];
	struct ntp_mva_result r;
	int nlv = 0, distinct = 0;
	double dsum, dmax, step = 1, calib_prev = 0, calib_z;
	uint32_t calib_n;

	memset(m, 0, sizeof(*m));
	m->bottleneck = -1;
	if (p) {
		m->tags = p->tags;
		m->hw_queues = p->hw_queues;
		m->tags_from = p->tags_from;
	}
	if (!base || base->target_only) {
		snprintf(m->why, sizeof(m->why), "no host side recorded: the closed loop of the queue depth is the host's");
		return 0;
	}
	if (level_of(base, p ? p->base_qd : 0, &lv[0])) {
		snprintf(m->why, sizeof(m->why), "no command rate or latency measured");
		return 0;
	}
	nlv = 1;
	for (int i = 0; i < nfit && nlv <= NTP_WI_MAX_FIT; i++)
		if (fit && fit[i] && !fit[i]->target_only &&
		    !level_of(fit[i], p && i < NTP_WI_MAX_FIT ? p->fit_qd[i] : 0, &lv[nlv]))
			nlv++;
	/* A closed loop of N never has more than N in flight: a QD given
	 * below rate x mean cannot be the run's */
	for (int i = 0; i < nlv; i++)
		if (lv[i].given && lv[i].lq + lv[i].x * lv[i].wait > lv[i].qd * (1 + NTP_WI_GIVEN_SLACK)) {
			if (i == 0)
				snprintf(m->why, sizeof(m->why), "the QD given (%u) is below the commands measured in "
					 "flight (rate x mean = %.2f): give at least %u", lv[i].qd,
					 lv[i].lq + lv[i].x * lv[i].wait, least_given(lv[i].lq + lv[i].x * lv[i].wait));
			else
				snprintf(m->why, sizeof(m->why), "a fit run's QD given (%u) is below its commands "
					 "measured in flight (rate x mean = %.2f)", lv[i].qd,
					 lv[i].lq + lv[i].x * lv[i].wait);
			return 0;
		}
	m->n_levels = distinct = merge_levels(lv, nlv, lvm);
	m->base_qd = lv[0].qd;
	m->base_qd_given = p && p->base_qd;
	m->base_qd_little = lv[0].x * (lv[0].e2e + lv[0].wait);
	m->tag_wait_us = lv[0].wait;
	m->held_little = lv[0].x * lv[0].e2e;
	m->base_iops = lv[0].x * 1e6;
	m->base_mean_us = base->e2e_mean_us;
	m->base_p99_us = base->e2e_p99_us;
	/* The time between a completion and the next submission (the
	 * application's own work): the closed loop is QD = X (R + Z). */
	m->think_us = lv[0].qd / lv[0].x - lv[0].e2e;
	/* Records from the bio's submission measured the wait for a tag.
	 * Where the commands holding a tag were the tags (rate x the mean
	 * without the wait within NTP_WI_TAGS_HELD of them), the loop is the
	 * one ntp_wi_predict models past the tags: its QD counts the waiting
	 * commands too (rate x end to end), its stages are calibrated on
	 * `tags` customers kept full, and the wait comes back from the tags.
	 * Otherwise (the tags not known, or not held full: an open loop's
	 * bursts, several hardware queues) the wait is no closed loop's over
	 * these tags, and the model is that of the commands holding a tag,
	 * as without the stamp. */
	if (lv[0].wait > 0 && m->tags && lv[0].lq >= m->tags * (1 - NTP_WI_TAGS_HELD) &&
	    lv[0].lq <= m->tags * (1 + NTP_WI_TAGS_HELD)) {
		uint32_t n = lv[0].given ? lv[0].qd : qd_of(m->base_qd_little);

		if (n > m->tags) {
			m->tag_bound = 1;
			m->base_qd = n;
			m->think_us = n / lv[0].x - (lv[0].e2e + lv[0].wait);
		}
	}
	if (m->think_us < 0)
		m->think_us = 0;

	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		struct ntp_wi_station *s = &m->st[k];
		int given = p ? p->servers[k] : 0;

		if (!base->stage[k].present)
			continue;
		s->present = 1;
		s->measured_us = lv[0].r[k];	/* the host block layer's without the tag wait */
		s->excess_p99_us = base->stage[k].p99_us > base->stage[k].mean_us ?
				   base->stage[k].p99_us - base->stage[k].mean_us : 0;
		if (given) {
			s->servers = given > 0 ? given : 0;
			s->source = NTP_WI_SRC_GIVEN;
		} else if (distinct < 2) {
			s->servers = 0;
			s->source = NTP_WI_SRC_ONE_LOAD;
			s->fit_max_qd = lv[0].qd;
		} else {
			fit_stage(s, k, lvm, distinct);
		}
		s->service_us = s->measured_us > 0 ? s->measured_us : 0;
	}

	/* Calibrate the queues' service times on the base interval: each
	 * S <- S x (measured / predicted)^a until the network at the base QD
	 * reproduces every stage's measured time (each R grows with its S).
	 * The full step (a = 1) overshoots a queue near saturation, where R
	 * grows much faster than S, and can swing for ever: it is halved each
	 * time the worst error grows. */
	/* past the tags when the wait is theirs: `tags` customers, no think time */
	calib_n = m->tag_bound ? m->tags : m->base_qd;
	calib_z = m->tag_bound ? 0 : m->think_us;
	for (int it = 0, nq = 0; it < 400; it++) {
		double worst = 0;

		stations(m, st);
		if (ntp_mva_solve(st, NTP_STAGE_COUNT, calib_z, (int)calib_n, &r))
			break;
		for (int k = 0; k < NTP_STAGE_COUNT; k++) {
			struct ntp_wi_station *s = &m->st[k];
			double d;

			if (!s->present || !s->servers || r.r[k] <= 0 || s->measured_us <= 0)
				continue;
			d = fabs(r.r[k] - s->measured_us) / s->measured_us;
			if (d > worst)
				worst = d;
		}
		if (worst < 1e-9)
			break;
		if (it && worst > calib_prev)
			step /= 2;
		calib_prev = worst;
		for (int k = 0; k < NTP_STAGE_COUNT; k++) {
			struct ntp_wi_station *s = &m->st[k];

			if (!s->present || !s->servers || r.r[k] <= 0 || s->measured_us <= 0)
				continue;
			s->service_us *= pow(s->measured_us / r.r[k], step);
			nq++;
		}
		if (!nq)
			break;
	}
	/* The calibration's promise: at the run's QD the network gives back
	 * the measured means and IOPS. Servers that cannot (a fit that
	 * explains the loads poorly, a QD given that does not match) give no
	 * prediction rather than a table that contradicts the measurement. */
	stations(m, st);
	if (!ntp_mva_solve(st, NTP_STAGE_COUNT, calib_z, (int)calib_n, &r)) {
		double xr = r.x > 0 ? r.x * 1e6 / m->base_iops : 0;

		for (int k = 0; k < NTP_STAGE_COUNT; k++) {
			const struct ntp_wi_station *s = &m->st[k];

			if (!s->present || !s->servers || s->measured_us <= 0 ||
			    fabs(r.r[k] - s->measured_us) <= NTP_WI_CALIB_TOL * s->measured_us)
				continue;
			snprintf(m->why, sizeof(m->why), "calibration failed: %d server%s for %s give %.1f us "
				 "at QD %u, %.1f measured", s->servers, s->servers == 1 ? "" : "s",
				 ntp_stage_key(k), r.r[k], calib_n, s->measured_us);
			return 0;
		}
		/* a QD given a little below rate x mean (NTP_WI_GIVEN_SLACK)
		 * cannot give back the measured rate with no think time: by
		 * that share at most */
		double tol = NTP_WI_CALIB_TOL;

		if (m->base_qd_given && m->base_qd_little > m->base_qd)
			tol += m->base_qd_little / m->base_qd - 1;
		/* past the tags: the commands holding one (within
		 * NTP_WI_TAGS_HELD of them) taken as the tags */
		if (m->tag_bound && m->held_little > 0)
			tol += (m->held_little < m->tags ? m->tags / m->held_little : m->held_little / m->tags) - 1;
		if (fabs(xr - 1) > tol) {
			snprintf(m->why, sizeof(m->why), "calibration failed: the model gives %.0f IOPS at "
				 "QD %u, %.0f measured", r.x * 1e6, calib_n, m->base_iops);
			return 0;
		}
	}

	/* Asymptotes: X <= c/S at every queue, so the largest S/c bounds the
	 * rate; the knee is where the light-load line N / (sum S + Z) meets it. */
	dsum = m->think_us;
	dmax = 0;
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		const struct ntp_wi_station *s = &m->st[k];

		if (!s->present)
			continue;
		dsum += s->service_us;
		if (s->servers && s->service_us / s->servers > dmax) {
			dmax = s->service_us / s->servers;
			m->bottleneck = k;
		}
	}
	if (m->bottleneck >= 0 && dmax > 0) {
		m->max_iops = 1e6 / dmax;
		m->knee_qd = dsum / dmax;
	} else {
		m->bottleneck = -1;
	}
	/* calibrated, the run's own rate is below every queue's capacity */
	if (m->bottleneck >= 0 && m->max_iops < m->base_iops * (1 - NTP_WI_CALIB_TOL)) {
		snprintf(m->why, sizeof(m->why), "calibration failed: %s's capacity %.0f IOPS is below the "
			 "%.0f measured", ntp_stage_key(m->bottleneck), m->max_iops, m->base_iops);
		return 0;
	}
	m->tags_first = m->tags && (m->bottleneck < 0 || m->knee_qd > m->tags);
	m->ok = 1;
	return 0;
}

int ntp_wi_fit_usable(const struct ntp_snapshot *prev, const struct ntp_snapshot *o,
		      const struct ntp_snap_group *og)
{
	if (!og || !og->sampled || !ntp_pct_enough(og->sampled, 0.99))
		return 0;
	/* the interval says it straddled a change (model.h sampling_from);
	 * a recording older than that field: its predecessor's sampling */
	if (o->sampling_from)
		return 0;
	return !prev || prev->sampling == o->sampling;
}

int ntp_wi_predict(const struct ntp_wi_model *m, uint32_t qd, struct ntp_wi_pred *out)
{
	struct ntp_mva_station st[NTP_STAGE_COUNT];
	struct ntp_mva_result r, rt;
	double rss = 0, rss0 = 0, maxu = 0;

	memset(out, 0, sizeof(*out));
	out->saturated = -1;
	if (!m->ok || qd < 1 || qd > NTP_WI_MAX_QD)
		return -1;
	out->qd = qd;
	out->qd_in_flight = qd;
	stations(m, st);
	if (ntp_mva_solve(st, NTP_STAGE_COUNT, m->think_us, (int)qd, &r))
		return -1;
	out->iops = r.x * 1e6;
	out->mean_us = r.r_total;
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		out->stage_us[k] = r.r[k];
	/* Past the host's tags only that many commands are beyond the block
	 * layer: the stages hold them as a network of `tags` customers kept
	 * full (no think time: a command ending hands its tag to one already
	 * waiting), and the rest wait for a tag in the host's block layer;
	 * the closed loop QD = X (R + Z) gives that wait. */
	if (m->tags && qd > m->tags && !ntp_mva_solve(st, NTP_STAGE_COUNT, 0, (int)m->tags, &rt)) {
		double x = rt.x < r.x ? rt.x : r.x, e2e = x > 0 ? qd / x - m->think_us : 0;

		out->qd_in_flight = m->tags;
		out->iops = x * 1e6;
		for (int k = 0; k < NTP_STAGE_COUNT; k++)
			out->stage_us[k] = rt.r[k];
		out->tag_wait_us = e2e > rt.r_total ? e2e - rt.r_total : 0;
		out->stage_us[NTP_STAGE_HOST_BLOCK] += out->tag_wait_us;
		out->mean_us = rt.r_total + out->tag_wait_us;
		if (out->tag_wait_us > 0)
			out->saturated = NTP_STAGE_HOST_BLOCK;
	}
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		const struct ntp_wi_station *s = &m->st[k];
		double f, mk;

		if (!s->present)
			continue;
		out->stage_qd[k] = out->iops / 1e6 * out->stage_us[k];
		if (s->servers) {
			out->util[k] = out->iops / 1e6 * s->service_us / s->servers;
			if (out->util[k] > maxu) {
				maxu = out->util[k];
				if (out->saturated != NTP_STAGE_HOST_BLOCK && maxu >= 0.9)
					out->saturated = k;
			}
		}
		/* p99: each stage keeps its measured shape, its tail growing with
		 * its mean; the tails combine as independent (root sum of squares),
		 * scaled so the base interval gives its measured p99 */
		/* (the host block layer's measured tail holds the tag wait's
		 * where the records have the bio's submission: against its mean
		 * with the wait, as out->stage_us holds the wait predicted) */
		mk = s->measured_us + (k == NTP_STAGE_HOST_BLOCK ? m->tag_wait_us : 0);
		f = mk > 0 ? out->stage_us[k] / mk : 1;
		rss += (s->excess_p99_us * f) * (s->excess_p99_us * f);
		rss0 += s->excess_p99_us * s->excess_p99_us;
	}
	if (m->base_p99_us > m->base_mean_us && rss0 > 0)
		out->p99_us = out->mean_us + (m->base_p99_us - m->base_mean_us) * sqrt(rss / rss0);
	else
		out->p99_us = m->base_mean_us > 0 ? out->mean_us * m->base_p99_us / m->base_mean_us : out->mean_us;
	if (out->p99_us < out->mean_us)
		out->p99_us = out->mean_us;
	return 0;
}

int ntp_wi_parse_qds(const char *s, uint32_t *qd, int max, char *err, size_t errlen)
{
	int n = 0;
	const char *p = s;

	if (!s || !*s) {
		snprintf(err, errlen, "--what-if-qd: no queue depth given");
		return -1;
	}
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || (*end && *end != ',') || v < 1 || v > NTP_WI_MAX_QD) {
			snprintf(err, errlen, "--what-if-qd: '%s': queue depths are 1..%d, comma-separated",
				 s, NTP_WI_MAX_QD);
			return -1;
		}
		if (n >= max) {
			snprintf(err, errlen, "--what-if-qd: at most %d queue depths", max);
			return -1;
		}
		qd[n++] = (uint32_t)v;
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			snprintf(err, errlen, "--what-if-qd: '%s' ends with a comma", s);
			return -1;
		}
	}
	return n;
}

int ntp_wi_parse_servers(const char *s, struct ntp_wi_params *p, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;

	if (!s || strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "--what-if-servers: give STAGE=N|delay[,...]");
		return -1;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		int k, found = -1;
		long v;

		if (!eq) {
			snprintf(err, errlen, "--what-if-servers: '%s' is not STAGE=N|delay", tok);
			return -1;
		}
		*eq = '\0';
		for (k = 0; k < NTP_STAGE_COUNT; k++)
			if (!strcmp(tok, ntp_stage_key(k)))
				found = k;
		if (found < 0) {
			snprintf(err, errlen, "--what-if-servers: unknown stage '%s' (host_block, host_driver, "
				 "network, target_driver, storage)", tok);
			return -1;
		}
		if (!strcmp(eq + 1, "delay")) {
			p->servers[found] = -1;
			continue;
		}
		v = strtol(eq + 1, &end, 10);
		if (end == eq + 1 || *end || v < 1 || v > 4096) {
			snprintf(err, errlen, "--what-if-servers: %s=%s: servers are 1..4096 or 'delay'", tok, eq + 1);
			return -1;
		}
		p->servers[found] = (int)v;
	}
	return 0;
}

uint32_t ntp_wi_qd_step(uint32_t qd, int dir)
{
	uint32_t p = 1;

	if (dir > 0) {
		while (p <= qd && p < NTP_WI_MAX_QD)
			p <<= 1;
		return p > qd ? p : NTP_WI_MAX_QD;
	}
	while (p * 2 < qd)
		p <<= 1;
	return p;
}

/* ---- ntprof-top: what a fit is made from ---- */

static int near(double a, double b)
{
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	return fabs(a - b) <= NTP_WI_REFIT_TOL * m;
}

static int params_same(const struct ntp_wi_params *a, const struct ntp_wi_params *b)
{
	return !memcmp(a->servers, b->servers, sizeof(a->servers)) && a->tags == b->tags &&
	       a->hw_queues == b->hw_queues && a->base_qd == b->base_qd &&
	       !memcmp(a->fit_qd, b->fit_qd, sizeof(a->fit_qd)) &&
	       (a->tags_from == b->tags_from || (a->tags_from && b->tags_from && !strcmp(a->tags_from, b->tags_from)));
}

/* The load levels of an input as ntp_wi_build merges them; -1 when the
 * base gives no level (the model says why: nothing to compare). */
static int input_levels(const struct ntp_wi_input *in, struct level *base, struct level *out)
{
	struct level lv[NTP_WI_MAX_FIT + 1];
	int nlv = 1;

	if (in->base.target_only || level_of(&in->base, in->p.base_qd, &lv[0]))
		return -1;
	for (int i = 0; i < in->n_fit && i < NTP_WI_MAX_FIT; i++)
		if (!in->fit[i].target_only && !level_of(&in->fit[i], in->p.fit_qd[i], &lv[nlv]))
			nlv++;
	*base = lv[0];
	return merge_levels(lv, nlv, out);
}

int ntp_wi_input_same(const struct ntp_wi_input *a, const struct ntp_wi_input *b)
{
	struct level la[NTP_WI_MAX_FIT + 1], lb[NTP_WI_MAX_FIT + 1], ba, bb;
	int na, nb;

	if (a->base.io != b->base.io || a->base.len != b->base.len ||
	    strncmp(a->base.dev, b->base.dev, NTP_DEV_LEN) || !params_same(&a->p, &b->p))
		return 0;
	na = input_levels(a, &ba, la);
	nb = input_levels(b, &bb, lb);
	if (na != nb)
		return 0;
	if (na < 0)	/* no level either way: the same "no prediction" */
		return 1;
	/* the base's QD is the closed loop's population the model is calibrated at */
	if (ba.qd != bb.qd)
		return 0;
	/* and its own numbers what it is calibrated on (ntp_wi_build: the think
	 * time, the stages' measured means and excess p99s), which its level
	 * averages away when the level has many intervals */
	if (!near(ba.x, bb.x) || !near(ba.e2e, bb.e2e) || !near(a->base.e2e_p99_us, b->base.e2e_p99_us) ||
	    !near(ba.wait, bb.wait))
		return 0;
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		if (a->base.stage[k].present != b->base.stage[k].present || !near(ba.r[k], bb.r[k]) ||
		    (a->base.stage[k].present && !near(a->base.stage[k].p99_us, b->base.stage[k].p99_us)))
			return 0;
	for (int i = 0; i < na; i++) {
		if (la[i].qd != lb[i].qd || la[i].given != lb[i].given || !near(la[i].x, lb[i].x) ||
		    !near(la[i].e2e, lb[i].e2e) || !near(la[i].wait, lb[i].wait))
			return 0;
		for (int k = 0; k < NTP_STAGE_COUNT; k++)
			if (!near(la[i].r[k], lb[i].r[k]))
				return 0;
	}
	return 1;
}

int ntp_wi_fit_groups(const struct ntp_snapshot *const *snap, int n, const struct ntp_snapshot *s,
		      const struct ntp_snap_group *g, const struct ntp_snap_group **fit, int *left_out)
{
	int nf = 0;

	*left_out = 0;
	for (int i = snap ? n - 1 : -1; i >= 0 && nf < NTP_WI_MAX_FIT; i--) {
		const struct ntp_snapshot *o = snap[i];

		if (o == s || o->index > s->index)
			continue;
		for (uint32_t j = 0; j < o->n_groups && j < NTP_SNAP_MAX_GROUPS; j++) {
			const struct ntp_snap_group *og = &o->groups[j];

			if (og->io != g->io || og->len != g->len || strncmp(og->dev, g->dev, NTP_DEV_LEN) ||
			    !og->sampled)
				continue;
			if (ntp_wi_fit_usable(i ? snap[i - 1] : NULL, o, og))
				fit[nf++] = og;
			else
				(*left_out)++;
			break;
		}
	}
	return nf;
}

void ntp_wi_input_of(const struct ntp_snapshot *const *snap, int n, const struct ntp_snapshot *s,
		     const struct ntp_snap_group *g, const struct ntp_wi_params *p, struct ntp_wi_input *in)
{
	const struct ntp_snap_group *fit[NTP_WI_MAX_FIT];

	in->index = s->index;
	in->base = *g;
	in->n_fit = ntp_wi_fit_groups(snap, n, s, g, fit, &in->n_left_out);
	for (int i = 0; i < in->n_fit; i++)
		in->fit[i] = *fit[i];
	if (p)
		in->p = *p;
	else
		memset(&in->p, 0, sizeof(in->p));
	in->p.shown = NULL;
}

void ntp_wi_build_input(const struct ntp_wi_input *in, struct ntp_wi_model *m)
{
	const struct ntp_snap_group *fit[NTP_WI_MAX_FIT];
	int n = in->n_fit < NTP_WI_MAX_FIT ? in->n_fit : NTP_WI_MAX_FIT;

	for (int i = 0; i < n; i++)
		fit[i] = &in->fit[i];
	ntp_wi_build(&in->base, fit, n, &in->p, m);
	m->n_left_out = in->n_left_out;
}
