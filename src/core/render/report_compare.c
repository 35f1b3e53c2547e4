// SPDX-License-Identifier: GPL-2.0
/*
 * report_compare.c - `ntprof compare A B`: each group of A next to the same
 * group of B (same I/O type, size and device; else one left of the same type
 * and size), per stage (paired by role, each side's name printed when they
 * differ) the change in microseconds and as a factor, and a verdict line:
 * the stage that amplifies latency when one grew beyond the other stages'
 * factor, else a uniform slowdown (ntp_compare_judge).
 */
#include <math.h>
#include <string.h>
#include "esc.h"
#include "report.h"
#include "report_int.h"

static int same_kind(const struct ntp_snap_group *x, const struct ntp_snap_group *y)
{
	return x->io == y->io && x->len == y->len;
}

static int same_dev(const struct ntp_snap_group *x, const struct ntp_snap_group *y)
{
	return !strncmp(x->dev, y->dev, NTP_DEV_LEN);
}

void ntp_compare_pairs(const struct ntp_snapshot *a, const struct ntp_snapshot *b,
		       const struct ntp_snap_group **partner)
{
	int taken[NTP_SNAP_MAX_GROUPS] = { 0 };

	/* Same I/O type, size and device first ... */
	for (unsigned i = 0; i < a->n_groups; i++) {
		partner[i] = NULL;
		for (unsigned j = 0; j < b->n_groups && !partner[i]; j++)
			if (!taken[j] && same_kind(&a->groups[i], &b->groups[j]) &&
			    same_dev(&a->groups[i], &b->groups[j])) {
				partner[i] = &b->groups[j];
				taken[j] = 1;
			}
	}
	/* ... then what is left of the same type and size (runs on machines
	 * whose devices are named differently), each B group at most once. */
	for (unsigned i = 0; i < a->n_groups; i++)
		for (unsigned j = 0; j < b->n_groups && !partner[i]; j++)
			if (!taken[j] && same_kind(&a->groups[i], &b->groups[j])) {
				partner[i] = &b->groups[j];
				taken[j] = 1;
			}
}

int ntp_compare_claimed(const struct ntp_snapshot *a, const struct ntp_snap_group *const *partner,
			const struct ntp_snap_group *gb)
{
	for (unsigned i = 0; i < a->n_groups; i++)
		if (partner[i] == gb)
			return 1;
	return 0;
}

unsigned ntp_compare_rows(const struct ntp_snapshot *a, const struct ntp_snap_group *ga,
			  const struct ntp_snapshot *b, const struct ntp_snap_group *gb,
			  struct ntp_compare_row *out, unsigned max)
{
	struct ntp_stage_row ra[NTP_STAGE_COUNT + 1], rb[NTP_STAGE_COUNT + 1];
	unsigned na = ntp_stage_rows(a, ga, ra, NTP_STAGE_COUNT + 1);
	unsigned nb = ntp_stage_rows(b, gb, rb, NTP_STAGE_COUNT + 1);
	unsigned n = 0, used_b = 0;

	for (unsigned i = 0; i < na && n < max; i++) {
		struct ntp_compare_row *r = &out[n++];

		memset(r, 0, sizeof(*r));
		r->name = ra[i].name;
		r->stage = ra[i].stage;
		r->in_a = 1;
		r->a = ra[i];
		for (unsigned j = 0; j < nb && !r->in_b; j++)
			if (!(used_b & (1u << j)) && rb[j].stage == ra[i].stage && rb[j].part == ra[i].part) {
				r->in_b = 1;
				r->b = rb[j];
				r->name_b = rb[j].name;
				used_b |= 1u << j;
			}
	}
	for (unsigned j = 0; j < nb && n < max; j++) {
		struct ntp_compare_row *r;

		if (used_b & (1u << j))
			continue;
		r = &out[n++];
		memset(r, 0, sizeof(*r));
		r->name = r->name_b = rb[j].name;
		r->stage = rb[j].stage;
		r->in_b = 1;
		r->b = rb[j];
	}
	return n;
}

int ntp_compare_verdict(const struct ntp_compare_row *rows, unsigned n)
{
	int best = -1;

	for (unsigned i = 0; i < n; i++) {
		double d;

		if (!rows[i].in_a || !rows[i].in_b)
			continue;
		d = rows[i].b.mean_us - rows[i].a.mean_us;
		if (best < 0 || d > rows[best].b.mean_us - rows[best].a.mean_us)
			best = (int)i;
	}
	return best;
}

/*
 * A stage's deviation from what a snapshot keeps (no variance is kept): the
 * larger of (p99 - p50) / 2.326, the standard deviation of a normal
 * distribution with those quantiles, and the mean, an exponential's. The
 * quantiles' alone err low for tails heavier than a normal's (a stage whose
 * spread lies beyond its p99, or a p99 equal to its p50); the mean floors it
 * at a coefficient of variation of 1 (docs/reports.md, "Noise").
 */
static double spread_us(double mean, double p50, double p99)
{
	double q = p99 > p50 ? (p99 - p50) / 2.326 : 0;

	return q > mean ? q : mean > 0 ? mean : 0;
}

/* Beyond noise: more than K_SE standard errors (docs/reports.md, "The verdict"). */
static const double K_SE = 2.0;
/* A stage is apart from the common factor when its excess is beyond noise
 * and at least this share of the latency's growth (docs/reports.md). */
static const double APART_SHARE = 0.1;
/* The stages of the common factor must hold at least this share of A's
 * latency to give one (else the verdict says the stage grown most). */
static const double REST_MIN_SHARE = 0.1;

/* Variance of the mean of one row over n commands (the host-only rows
 * "host receive path" and "network and target" take their stage's spread). */
static double var_mean(const struct ntp_snap_group *g, int stage)
{
	double s = spread_us(g->stage[stage].mean_us, g->stage[stage].p50_us, g->stage[stage].p99_us);

	return g->sampled ? s * s / (double)g->sampled : 0;
}

/* sqrt(var) summed over the rows in `set` but `skip`: the deviation of the
 * set's mean as if its rows moved together (the largest it can be). */
static double set_sd(const struct ntp_snap_group *g, const struct ntp_compare_row *rows, unsigned n,
		     const int *set, int skip)
{
	double sd = 0;

	for (unsigned i = 0; i < n; i++)
		if ((int)i != skip && set[i])
			sd += sqrt(var_mean(g, rows[i].stage));
	return sd;
}

/* Row x against the factor of the rows in `set` but x: *r that factor, *ex
 * x's growth beyond it, *se its standard error; 0 when the set holds too
 * little of A's latency (sum_a) to give a factor. */
static int beyond(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb,
		  const struct ntp_compare_row *rows, unsigned n, const int *set, unsigned x, double sum_a,
		  double *r, double *ex, double *se)
{
	double ra = 0, rb = 0, vr, sda, sdb;
	const struct ntp_compare_row *w = &rows[x];

	for (unsigned i = 0; i < n; i++)
		if (i != x && set[i]) {
			ra += rows[i].a.mean_us;
			rb += rows[i].b.mean_us;
		}
	if (ra <= 0 || ra < REST_MIN_SHARE * sum_a)
		return 0;
	*r = rb / ra;
	*ex = w->b.mean_us - *r * w->a.mean_us;
	sda = set_sd(ga, rows, n, set, (int)x);
	sdb = set_sd(gb, rows, n, set, (int)x);
	/* var(R) by the first order: R^2 (var(set B)/set B^2 + var(set A)/set A^2) */
	vr = *r * *r * (sda * sda / (ra * ra) + (rb > 0 ? sdb * sdb / (rb * rb) : 0));
	*se = sqrt(var_mean(gb, w->stage) + *r * *r * var_mean(ga, w->stage) + w->a.mean_us * w->a.mean_us * vr);
	return 1;
}

/*
 * The verdict (docs/reports.md, "The verdict"). The common factor is that of
 * the stages that did not grow apart: starting from every row both record,
 * the stage grown most beyond the others' factor is set apart while its
 * excess is beyond its sampling noise (K_SE standard errors) and at least
 * APART_SHARE of the latency's growth (and its mean grew), and the rest's
 * factor R taken again.
 * With A's mean a, B's b, a stage's excess is b - R a, and the latency's
 * growth splits into the common part (R - 1) A' and the excesses. The stages
 * set apart amplify latency when their excesses together are more than half
 * of the latency's growth (more than the common slowdown explains); else the
 * slowdown is uniform. A growth of the end to end within K_SE standard
 * errors of its own noise is no growth; fewer than NTP_MEAN_MIN_SAMPLES
 * commands on a side are not judged.
 */
void ntp_compare_judge(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb,
		       const struct ntp_compare_row *rows, unsigned n, int differ, struct ntp_compare_judge *j)
{
	double sa = 0, de = gb->e2e_mean_us - ga->e2e_mean_us, noise, apart = 0;
	double ea = spread_us(ga->e2e_mean_us, ga->e2e_p50_us, ga->e2e_p99_us);
	double eb = spread_us(gb->e2e_mean_us, gb->e2e_p50_us, gb->e2e_p99_us);
	int common[2 * (NTP_STAGE_COUNT + 1)] = { 0 };
	unsigned left = 0;

	memset(j, 0, sizeof(*j));
	j->grew = ntp_compare_verdict(rows, n);
	j->out = -1;
	j->e2e_ratio = ga->e2e_mean_us > 0 ? gb->e2e_mean_us / ga->e2e_mean_us : 0;
	if (differ || j->grew < 0 || n > sizeof(common) / sizeof(common[0]))
		return;
	if (!ntp_mean_enough(ga->sampled) || !ntp_mean_enough(gb->sampled)) {
		j->kind = NTP_VERDICT_TOO_FEW;
		return;
	}
	noise = K_SE * sqrt((ga->sampled ? ea * ea / (double)ga->sampled : 0) +
			 (gb->sampled ? eb * eb / (double)gb->sampled : 0));
	if (de <= noise || rows[j->grew].b.mean_us <= rows[j->grew].a.mean_us) {
		j->kind = NTP_VERDICT_NO_GROWTH;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		if (rows[i].in_a && rows[i].in_b) {
			common[i] = 1;
			sa += rows[i].a.mean_us;
			left++;
		}
	/* the stage grown most against every other: said after a uniform verdict */
	for (unsigned i = 0; i < n; i++) {
		double r, ex, se;

		if (common[i] && beyond(ga, gb, rows, n, common, i, sa, &r, &ex, &se) && ex > K_SE * se &&
		    (j->out < 0 || ex > j->excess_us)) {
			j->out = (int)i;
			j->others_ratio = r;
			j->excess_us = ex;
			j->noise_us = K_SE * se;
		}
	}
	if (!beyond(ga, gb, rows, n, common, (unsigned)j->grew, sa, &(double){ 0 }, &(double){ 0 }, &(double){ 0 })) {
		/* the others than the stage grown most hold too little of
		 * the latency to give a factor */
		j->out = -1;
		j->kind = NTP_VERDICT_NO_FACTOR;
		return;
	}
	/* set apart, one at a time, the stage grown most beyond the rest */
	while (left > 1 && j->n_apart < NTP_VERDICT_MAX_APART) {
		int best = -1;
		double bex = 0, r, ex, se;

		for (unsigned i = 0; i < n; i++)
			if (common[i] && rows[i].b.mean_us > rows[i].a.mean_us &&
			    beyond(ga, gb, rows, n, common, i, sa, &r, &ex, &se) && ex > K_SE * se &&
			    ex >= APART_SHARE * de && (best < 0 || ex > bex)) {
				best = (int)i;
				bex = ex;
			}
		if (best < 0)
			break;
		common[best] = 0;
		left--;
		j->apart[j->n_apart++] = best;
	}
	if (!j->n_apart) {
		j->kind = NTP_VERDICT_UNIFORM;
		return;
	}
	/* each against the common factor, that of the rows not set apart */
	{
		unsigned k = 0;

		for (unsigned a = 0; a < j->n_apart; a++) {
			int x = j->apart[a];
			double r, ex, se;

			if (!beyond(ga, gb, rows, n, common, (unsigned)x, sa, &r, &ex, &se))
				continue;
			if (ex <= K_SE * se || ex < APART_SHARE * de)
				continue;
			j->common_ratio = r;
			j->apart[k] = x;
			j->apart_excess_us[k] = ex;
			j->apart_noise_us[k] = K_SE * se;
			apart += ex;
			k++;
		}
		j->n_apart = k;
		/* largest excess first */
		for (unsigned a = 1; a < k; a++)
			for (unsigned b = a; b > 0 && j->apart_excess_us[b] > j->apart_excess_us[b - 1]; b--) {
				int t = j->apart[b];
				double te = j->apart_excess_us[b], tn = j->apart_noise_us[b];

				j->apart[b] = j->apart[b - 1];
				j->apart_excess_us[b] = j->apart_excess_us[b - 1];
				j->apart_noise_us[b] = j->apart_noise_us[b - 1];
				j->apart[b - 1] = t;
				j->apart_excess_us[b - 1] = te;
				j->apart_noise_us[b - 1] = tn;
			}
	}
	if (j->n_apart && apart > de / 2) {
		j->kind = NTP_VERDICT_STAGE;
		j->out = j->apart[0];
		j->others_ratio = j->common_ratio;
		j->excess_us = j->apart_excess_us[0];
		j->noise_us = j->apart_noise_us[0];
		j->apart_sum_us = apart;
	} else {
		j->kind = NTP_VERDICT_UNIFORM;
		j->n_apart = 0;
	}
}

static const char *sides_of(const struct ntp_snap_group *g)
{
	return g->host_only ? "the host's side only" : g->target_only ? "the target's side only" : "both sides";
}

int ntp_compare_sides(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb, char *buf, size_t len,
		      int *e2e_same)
{
	*e2e_same = 1;
	buf[0] = '\0';
	if (ga->host_only == gb->host_only && ga->target_only == gb->target_only)
		return 0;
	/* a target-only group's end to end is the target's residence */
	*e2e_same = ga->target_only == gb->target_only;
	snprintf(buf, len, "A has %s, B %s: %s; the verdict is of the stages both record", sides_of(ga),
		 sides_of(gb), *e2e_same ? "the latency is the host's end to end in both"
					 : "the latency rows are not the same measure (the target's "
					   "residence against the host's end to end)");
	return 1;
}

int ntp_group_from_bio(const struct ntp_snap_group *g)
{
	return g->bio_records && g->bio_records * 2 >= g->sampled;
}

int ntp_compare_starts(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb, char *buf, size_t len)
{
	int a = ntp_group_from_bio(ga), b = ntp_group_from_bio(gb);

	buf[0] = '\0';
	if (a == b)
		return 0;
	snprintf(buf, len, "%s's host records start at the bio's submission, %s's at the request's allocation: "
		 "end to end and the host block layer are not measured alike (%s's hold the wait for a tag; "
		 "docs/stage-model.md)", a ? "A" : "B", a ? "B" : "A", a ? "A" : "B");
	return 1;
}

static void ratio(char *buf, size_t len, double a, double b)
{
	if (a > 0 && b >= 0)
		snprintf(buf, len, "%.2fx", b / a);
	else
		snprintf(buf, len, "-");
}

/* same: A's and B's are the same measure (else no change nor factor) */
static void print_pair(FILE *f, const char *what, double a, double b, int same)
{
	char r[32];

	if (!same) {
		fprintf(f, "%-36s %9.2f %9.2f %9s %7s\n", what, a, b, "-", "-");
		return;
	}
	ratio(r, sizeof(r), a, b);
	fprintf(f, "%-36s %9.2f %9.2f %+9.2f %7s\n", what, a, b, b - a, r);
}

/* A or B has too few samples for the quantile q (ntp_pct_enough). */
static int few(const struct ntp_snap_group *a, const struct ntp_snap_group *b, double q)
{
	return !ntp_pct_enough(a->sampled, q) || !ntp_pct_enough(b->sampled, q);
}

static void print_one_side(FILE *f, const struct ntp_snap_group *g, const char *which)
{
	char label[64];

	ntp_group_label(g, label, sizeof(label));
	fprintf(f, "== %s: only in %s (%llu commands sampled)\n", label, which,
		(unsigned long long)g->seen);
}

static void print_group(FILE *f, const struct ntp_snapshot *a, const struct ntp_snap_group *ga,
			const struct ntp_snapshot *b, const struct ntp_snap_group *gb)
{
	struct ntp_compare_row rows[2 * (NTP_STAGE_COUNT + 1)];
	char label[64], rate_a[32], rate_b[32], r[32], name[160];
	char sides[320];
	struct ntp_compare_judge j;
	unsigned n;
	int v, differ, e2e, fa, fb;

	ntp_group_label(ga, label, sizeof(label));
	ntp_rate_label(ga->rate, rate_a, sizeof(rate_a));
	ntp_rate_label(gb->rate, rate_b, sizeof(rate_b));
	fprintf(f, "== %s: A %llu commands sampled (%s commands/s), B %llu (%s commands/s)\n",
		label, (unsigned long long)ga->seen, rate_a, (unsigned long long)gb->seen, rate_b);
	if (strncmp(ga->dev, gb->dev, NTP_DEV_LEN))
		fprintf(f, "(B's device: %s)\n", ntp_esc(gb->dev));
	if (!ga->sampled || !gb->sampled) {
		fprintf(f, "no command to break down in %s\n", !ga->sampled ? "A" : "B");
		return;
	}
	differ = ntp_compare_sides(ga, gb, sides, sizeof(sides), &e2e);
	if (differ)
		fprintf(f, "note: %s\n", sides);
	if (ntp_compare_starts(ga, gb, sides, sizeof(sides)))
		fprintf(f, "note: %s\n", sides);
	fprintf(f, "%-36s %9s %9s %9s %7s\n", "latency (us)", "A", "B", "change", "x");
	fa = !ntp_mean_enough(ga->sampled);
	fb = !ntp_mean_enough(gb->sampled);
	print_pair(f, fa || fb ? "mean (too few samples)" : "mean", ga->e2e_mean_us, gb->e2e_mean_us, e2e);
	print_pair(f, "p50", ga->e2e_p50_us, gb->e2e_p50_us, e2e);
	print_pair(f, few(ga, gb, 0.99) ? "p99 (too few samples)" : "p99", ga->e2e_p99_us, gb->e2e_p99_us, e2e);
	print_pair(f, few(ga, gb, 0.999) ? "p99.9 (too few samples)" : "p99.9", ga->e2e_p999_us, gb->e2e_p999_us,
		   e2e);
	/* a side recorded with --exact-queues has counted QDs, the other
	 * Little's law's: said when they are not both Little's law */
	if (ga->qd_counted || gb->qd_counted)
		fprintf(f, "QD: %s\n", ga->qd_counted == gb->qd_counted ? "A's and B's counted in the kernel (--exact-queues)"
					: ga->qd_counted ? "A's counted in the kernel (--exact-queues), B's by Little's law (mean x rate)"
					: "A's by Little's law (mean x rate), B's counted in the kernel (--exact-queues)");
	fprintf(f, "%-36s %9s %9s %9s %7s %7s %7s\n", "stage (mean us)", "A", "B", "change", "x",
		"A QD", "B QD");
	n = ntp_compare_rows(a, ga, b, gb, rows, 2 * (NTP_STAGE_COUNT + 1));
	for (unsigned i = 0; i < n; i++) {
		const struct ntp_compare_row *x = &rows[i];

		char ma[24], mb[24], qa[24], qb[24];

		/* '?': a mean, or a QD by Little's law, of fewer samples than a
		 * mean needs (ntp_mean_enough), as the report marks them */
		snprintf(ma, sizeof(ma), fa ? "%8.2f?" : "%9.2f", x->a.mean_us);
		snprintf(mb, sizeof(mb), fb ? "%8.2f?" : "%9.2f", x->b.mean_us);
		snprintf(qa, sizeof(qa), fa && !ga->qd_counted ? "%6.2f?" : "%7.2f", x->a.avg_qd);
		snprintf(qb, sizeof(qb), fb && !gb->qd_counted ? "%6.2f?" : "%7.2f", x->b.avg_qd);
		if (x->in_a && x->in_b) {
			ratio(r, sizeof(r), x->a.mean_us, x->b.mean_us);
			fprintf(f, "%-36s %s %s %+9.2f %7s %s %s\n", x->name, ma, mb, x->b.mean_us - x->a.mean_us, r,
				qa, qb);
			if (strcmp(x->name, x->name_b))
				fprintf(f, "  in B: %s\n", x->name_b);
		} else if (x->in_a) {
			fprintf(f, "%-36s %s %9s %9s %7s %s %7s\n", x->name, ma, "-", "-", "-", qa, "-");
		} else {
			fprintf(f, "%-36s %9s %s %9s %7s %7s %s\n", x->name, "-", mb, "-", "-", "-", qb);
		}
	}
	if (n && (fa || fb))
		fprintf(f, "(?: from fewer than %d sampled commands (A %llu, B %llu): a mean's standard error is "
			"about 1/sqrt(n) of it, more with a long tail; docs/stage-model.md)\n", NTP_MEAN_MIN_SAMPLES,
			(unsigned long long)ga->sampled, (unsigned long long)gb->sampled);
	ntp_compare_judge(ga, gb, rows, n, differ, &j);
	v = j.kind == NTP_VERDICT_STAGE ? j.out : j.grew;
	if (v < 0) {
		fprintf(f, "verdict: A and B have no stage in common\n");
		return;
	}
	double d = rows[v].b.mean_us - rows[v].a.mean_us, de = gb->e2e_mean_us - ga->e2e_mean_us;

	ratio(r, sizeof(r), rows[v].a.mean_us, rows[v].b.mean_us);
	/* the stage by A's name, and B's when it differs */
	snprintf(name, sizeof(name), "%s%s%s", rows[v].name, strcmp(rows[v].name, rows[v].name_b) ? " / " : "",
		 strcmp(rows[v].name, rows[v].name_b) ? rows[v].name_b : "");
	if (differ) {
		/* the other rows' change is not seen: no share, no "amplifies" */
		if (d <= 0)
			fprintf(f, "verdict (of the stages both record): no stage grows from A to B\n");
		else if (e2e)
			fprintf(f, "verdict (of the stages both record): %s grows most, %+.2f us (%s); "
				"the latency %+.2f us\n", name, d, r, de);
		else
			fprintf(f, "verdict (of the stages both record): %s grows most, %+.2f us (%s)\n", name, d, r);
	} else if (j.kind == NTP_VERDICT_TOO_FEW) {
		fprintf(f, "verdict: too few samples to judge (A %llu, B %llu commands sampled, fewer than %d)",
			(unsigned long long)ga->sampled, (unsigned long long)gb->sampled, NTP_MEAN_MIN_SAMPLES);
		if (d > 0)
			fprintf(f, "; %s grows most, %+.2f us (%s)\n", name, d, r);
		else
			fprintf(f, "; no stage grows (mean %+.2f us)\n", de);
	} else if (j.kind == NTP_VERDICT_NO_FACTOR)
		fprintf(f, "verdict: %s grows most, %+.2f us (%s) of the %+.2f us; the other stages hold too "
			"little of A's latency to tell a common slowdown\n", name, d, r, de);
	else if (j.kind == NTP_VERDICT_STAGE && j.n_apart == 1)
		fprintf(f, "verdict: %s amplifies latency from A to B: %+.2f us of the %+.2f us "
			"(%.0f %%), %s\n", name, d, de, 100.0 * d / de, r);
	else if (j.kind == NTP_VERDICT_STAGE) {
		double sum = 0;

		fprintf(f, "verdict: ");
		for (unsigned k = 0; k < j.n_apart; k++) {
			const struct ntp_compare_row *o = &rows[j.apart[k]];

			fprintf(f, "%s%s%s%s%s", k ? (k + 1 < j.n_apart ? ", " : " and ") : "", o->name,
				strcmp(o->name, o->name_b) ? " / " : "", strcmp(o->name, o->name_b) ? o->name_b : "",
				"");
		}
		fprintf(f, " amplify latency from A to B: ");
		for (unsigned k = 0; k < j.n_apart; k++) {
			const struct ntp_compare_row *o = &rows[j.apart[k]];

			ratio(r, sizeof(r), o->a.mean_us, o->b.mean_us);
			sum += o->b.mean_us - o->a.mean_us;
			fprintf(f, "%s%+.2f us (%s)", k ? (k + 1 < j.n_apart ? ", " : " and ") : "",
				o->b.mean_us - o->a.mean_us, r);
		}
		fprintf(f, " of the %+.2f us (%.0f %%); the other stages grew %.2fx\n", de, 100.0 * sum / de,
			j.common_ratio);
	}
	else if (j.kind == NTP_VERDICT_UNIFORM && j.out < 0)
		fprintf(f, "verdict: every stage grew about %.2fx: a uniform slowdown (CPU, contention), "
			"no stage stands out\n", j.e2e_ratio);
	else if (j.kind == NTP_VERDICT_UNIFORM) {
		const struct ntp_compare_row *o = &rows[j.out];

		ratio(r, sizeof(r), o->a.mean_us, o->b.mean_us);
		fprintf(f, "verdict: a uniform slowdown (CPU, contention), no stage stands out: the other stages "
			"grew %.2fx, %s%s%s %s: %+.2f us beyond their factor, %.0f %% of the %+.2f us\n",
			j.others_ratio, o->name, strcmp(o->name, o->name_b) ? " / " : "",
			strcmp(o->name, o->name_b) ? o->name_b : "", r, j.excess_us, 100.0 * j.excess_us / de, de);
	} else if (d > 0 && de > 0)
		fprintf(f, "verdict: latency does not grow from A to B beyond its sampling noise (mean %+.2f us); "
			"%s grows most, %+.2f us (%s)\n", de, name, d, r);
	else if (d > 0)
		fprintf(f, "verdict: latency does not grow from A to B (mean %+.2f us); "
			"%s grows most, %+.2f us (%s)\n", de, name, d, r);
	else
		fprintf(f, "verdict: no stage grows from A to B (mean %+.2f us)\n", de);
}

void ntp_compare_print(FILE *f, const struct ntp_snapshot *a, const struct ntp_snapshot *b,
		       const char *name_a, const char *name_b)
{
	const struct ntp_snap_group *partner[NTP_SNAP_MAX_GROUPS];

	ntp_compare_pairs(a, b, partner);
	fprintf(f, "A: %s, %.1f s, one command in %u sampled\n", ntp_esc(name_a), a->seconds, a->sampling);
	fprintf(f, "B: %s, %.1f s, one command in %u sampled\n", ntp_esc(name_b), b->seconds, b->sampling);
	for (unsigned i = 0; i < a->n_groups; i++) {
		fputc('\n', f);
		if (partner[i])
			print_group(f, a, &a->groups[i], b, partner[i]);
		else
			print_one_side(f, &a->groups[i], "A");
	}
	for (unsigned j = 0; j < b->n_groups; j++) {
		if (ntp_compare_claimed(a, partner, &b->groups[j]))
			continue;
		fputc('\n', f);
		print_one_side(f, &b->groups[j], "B");
	}
}
