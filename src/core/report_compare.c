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
 * A spread from the quantiles a snapshot keeps (no variance is kept):
 * (p99 - p50) / 2.326, the standard deviation of a normal distribution with
 * those quantiles. Latencies are skewed to the right, so their p99 lies
 * further from the median than a normal's of the same deviation: the
 * estimate errs high, towards a stage that does not stand out.
 */
static double spread_us(double p50, double p99)
{
	return p99 > p50 ? (p99 - p50) / 2.326 : 0;
}

/* Beyond noise: more than K_SE standard errors (docs/reports.md, "The verdict"). */
static const double K_SE = 2.0;

/* Variance of the mean of one row over n commands (the host-only rows
 * "host receive path" and "network and target" take their stage's spread). */
static double var_mean(const struct ntp_snap_group *g, int stage)
{
	double s = spread_us(g->stage[stage].p50_us, g->stage[stage].p99_us);

	return g->sampled ? s * s / (double)g->sampled : 0;
}

/* sqrt(var) summed over the rows in both but `skip`: the deviation of the
 * rest's mean as if its rows moved together (the largest it can be). */
static double rest_sd(const struct ntp_snap_group *g, const struct ntp_compare_row *rows, unsigned n,
		      unsigned skip)
{
	double sd = 0;

	for (unsigned i = 0; i < n; i++)
		if (i != skip && rows[i].in_a && rows[i].in_b)
			sd += sqrt(var_mean(g, rows[i].stage));
	return sd;
}

/*
 * The verdict (docs/reports.md, "The verdict"). Each stage's growth is
 * measured against the factor the other stages grew by together: with A's
 * mean a, B's b and the others' factor R = (B' - b) / (A' - a) (A', B':
 * the rows in both, summed), the stage's excess is b - R a, and the
 * latency's growth splits exactly into the common part (R - 1) A' and that
 * excess. A stage stands out when its excess is beyond its sampling noise
 * (K_SE standard errors) and is more than half of the growth (more than the
 * common slowdown explains); when none does, the slowdown is uniform. A
 * growth of the end to end within K_SE standard errors of its own noise is
 * no growth.
 */
void ntp_compare_judge(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb,
		       const struct ntp_compare_row *rows, unsigned n, int differ, struct ntp_compare_judge *j)
{
	double sa = 0, sb = 0, de = gb->e2e_mean_us - ga->e2e_mean_us, noise;
	double ea = spread_us(ga->e2e_p50_us, ga->e2e_p99_us), eb = spread_us(gb->e2e_p50_us, gb->e2e_p99_us);

	memset(j, 0, sizeof(*j));
	j->grew = ntp_compare_verdict(rows, n);
	j->out = -1;
	j->e2e_ratio = ga->e2e_mean_us > 0 ? gb->e2e_mean_us / ga->e2e_mean_us : 0;
	if (differ || j->grew < 0)
		return;
	noise = K_SE * sqrt((ga->sampled ? ea * ea / (double)ga->sampled : 0) +
			 (gb->sampled ? eb * eb / (double)gb->sampled : 0));
	if (de <= noise || rows[j->grew].b.mean_us <= rows[j->grew].a.mean_us) {
		j->kind = NTP_VERDICT_NO_GROWTH;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		if (rows[i].in_a && rows[i].in_b) {
			sa += rows[i].a.mean_us;
			sb += rows[i].b.mean_us;
		}
	for (unsigned i = 0; i < n; i++) {
		const struct ntp_compare_row *x = &rows[i];
		double ra, rb, r, ex, vr, se, sda, sdb;

		if (!x->in_a || !x->in_b)
			continue;
		ra = sa - x->a.mean_us;
		rb = sb - x->b.mean_us;
		if (ra <= 0)
			continue;
		r = rb / ra;
		ex = x->b.mean_us - r * x->a.mean_us;
		sda = rest_sd(ga, rows, n, i);
		sdb = rest_sd(gb, rows, n, i);
		/* var(R) by the first order: R^2 (var(rest B)/rest B^2 + var(rest A)/rest A^2) */
		vr = r * r * (sda * sda / (ra * ra) + (rb > 0 ? sdb * sdb / (rb * rb) : 0));
		se = sqrt(var_mean(gb, x->stage) + r * r * var_mean(ga, x->stage) + x->a.mean_us * x->a.mean_us * vr);
		if (ex > K_SE * se && (j->out < 0 || ex > j->excess_us)) {
			j->out = (int)i;
			j->others_ratio = r;
			j->excess_us = ex;
			j->noise_us = K_SE * se;
		}
	}
	j->kind = j->out >= 0 && j->excess_us > (sb - sa) / 2 ? NTP_VERDICT_STAGE : NTP_VERDICT_UNIFORM;
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
	char sides[240];
	struct ntp_compare_judge j;
	unsigned n;
	int v, differ, e2e;

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
	fprintf(f, "%-36s %9s %9s %9s %7s\n", "latency (us)", "A", "B", "change", "x");
	print_pair(f, "mean", ga->e2e_mean_us, gb->e2e_mean_us, e2e);
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

		if (x->in_a && x->in_b) {
			ratio(r, sizeof(r), x->a.mean_us, x->b.mean_us);
			fprintf(f, "%-36s %9.2f %9.2f %+9.2f %7s %7.2f %7.2f\n", x->name, x->a.mean_us,
				x->b.mean_us, x->b.mean_us - x->a.mean_us, r, x->a.avg_qd, x->b.avg_qd);
			if (strcmp(x->name, x->name_b))
				fprintf(f, "  in B: %s\n", x->name_b);
		} else if (x->in_a) {
			fprintf(f, "%-36s %9.2f %9s %9s %7s %7.2f %7s\n", x->name, x->a.mean_us, "-",
				"-", "-", x->a.avg_qd, "-");
		} else {
			fprintf(f, "%-36s %9s %9.2f %9s %7s %7s %7.2f\n", x->name, "-", x->b.mean_us,
				"-", "-", "-", x->b.avg_qd);
		}
	}
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
	} else if (j.kind == NTP_VERDICT_STAGE)
		fprintf(f, "verdict: %s amplifies latency from A to B: %+.2f us of the %+.2f us "
			"(%.0f %%), %s\n", name, d, de, 100.0 * d / de, r);
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
