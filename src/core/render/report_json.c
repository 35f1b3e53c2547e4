// SPDX-License-Identifier: GPL-2.0
/*
 * report_json.c - the report and the compare as json-c documents, described
 * in docs/json-schema.md. Numbers carry the same rounding as the text (µs to
 * 3 decimals, shares to 4), written with an explicit string form so the
 * output is byte-stable across libc versions.
 */
#include <stdio.h>
#include <string.h>
#include "report.h"
#include "report_int.h"

#define NTP_JSON_SCHEMA_VERSION 1

static json_object *num(double v, int decimals)
{
	char s[64];

	snprintf(s, sizeof(s), "%.*f", decimals, v);
	if (!strcmp(s, "-0.000") || !strcmp(s, "-0.0000") || !strcmp(s, "-0.00"))
		memmove(s, s + 1, strlen(s));
	return json_object_new_double_s(v, s);
}

static json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static const char *side_of(const struct ntp_snap_group *g)
{
	return g->host_only ? "host_only" : g->target_only ? "target_only" : "joined";
}

/* "too_few": the figures of fewer samples than they need: "mean" (the
 * group's means: its stages' too, their shares and Little's-law QDs:
 * ntp_mean_enough), the percentiles (ntp_pct_enough). */
static json_object *latency(double mean, double p50, double p99, double p999, uint64_t n)
{
	json_object *o = json_object_new_object(), *few = json_object_new_array();

	/* no command sampled (a group the kernel's count alone has, at
	 * sparse sampling): no latency, not 0 us */
	add(o, "mean", n ? num(mean, 3) : NULL);
	add(o, "p50", n ? num(p50, 3) : NULL);
	add(o, "p99", n ? num(p99, 3) : NULL);
	add(o, "p99_9", n ? num(p999, 3) : NULL);
	if (!ntp_mean_enough(n))
		json_object_array_add(few, json_object_new_string("mean"));
	if (!ntp_pct_enough(n, 0.99))
		json_object_array_add(few, json_object_new_string("p99"));
	if (!ntp_pct_enough(n, 0.999))
		json_object_array_add(few, json_object_new_string("p99_9"));
	add(o, "too_few", few);
	return o;
}

json_object *ntp_json_group_ident(const struct ntp_snap_group *g)
{
	json_object *o = json_object_new_object();
	char label[64];

	ntp_group_label(g, label, sizeof(label));
	add(o, "label", json_object_new_string(label));
	add(o, "io", json_object_new_string(ntp_io_name(g->io)));
	add(o, "size", json_object_new_int64(g->len));
	add(o, "dev", json_object_new_string(g->dev));
	return o;
}

static void stage_entry(json_object *e, const char *name, const struct ntp_snap_stage *x)
{
	add(e, "name", json_object_new_string(name));
	add(e, "mean_us", num(x->mean_us, 3));
	add(e, "p50_us", num(x->p50_us, 3));
	add(e, "p99_us", num(x->p99_us, 3));
	add(e, "p99_9_us", num(x->p999_us, 3));
	add(e, "share", num(x->share, 4));
	add(e, "avg_qd", num(x->avg_qd, 4));
	add(e, "avg_qd_little", num(x->avg_qd_little, 4));
}

/* Host-only: the network stage is the model's, as every group's, so that
 * the stage means add up to the end-to-end mean (docs/json-schema.md) and
 * match ntprof-top's "net+target*" and the what-if's stations: the host's
 * receive path it holds is given apart too, as the text's row of that name
 * (ntp_stage_rows; `rows` has both rows). */
static void host_only_network(const struct ntp_snapshot *s, const struct ntp_snap_group *g, json_object *e)
{
	struct ntp_stage_row r[NTP_STAGE_COUNT + 1];
	unsigned n = ntp_stage_rows(s, g, r, NTP_STAGE_COUNT + 1);
	double recv = 0, recv_qd = 0;

	for (unsigned k = 0; k + 1 < n; k++)
		if (r[k].stage == NTP_STAGE_NETWORK) {
			recv = r[k].mean_us;
			recv_qd = r[k].avg_qd;
			break;
		}
	stage_entry(e, ntp_stage_name(NTP_STAGE_NETWORK, s->transport, s->impl_host, s->impl_target, 1),
		    &g->stage[NTP_STAGE_NETWORK]);
	add(e, "host_receive_path_us", num(recv, 3));
	add(e, "host_receive_path_avg_qd", num(recv_qd, 4));
}

static json_object *group_json(const struct ntp_snapshot *s, const struct ntp_snap_group *g)
{
	json_object *o = ntp_json_group_ident(g), *st = json_object_new_array(), *rows = json_object_new_array();
	json_object *comps = json_object_new_array();
	struct ntp_stage_row r[NTP_STAGE_COUNT + 1];
	unsigned n;

	add(o, "side", json_object_new_string(side_of(g)));
	add(o, "records", u64(g->seen));
	add(o, "sampled", u64(g->sampled));
	add(o, "commands", g->commands ? u64(g->commands) : NULL);
	add(o, "rate_exact", json_object_new_boolean(g->commands != 0));
	add(o, "rate", num(g->rate, 1));
	add(o, "iops", num(g->iops, 1));
	add(o, "mbps", num(g->mbps, 3));
	add(o, "qd_counted", json_object_new_boolean(g->qd_counted));
	add(o, "qd_commands", g->qd_counted ? u64(g->qd_summed) : NULL);
	add(o, "qd_incomplete", g->qd_counted ? u64(g->qd_incomplete) : NULL);
	add(o, "latency_us", latency(g->e2e_mean_us, g->e2e_p50_us, g->e2e_p99_us, g->e2e_p999_us,
						  g->sampled));
	for (int i = 0; i < NTP_STAGE_COUNT; i++) {
		const struct ntp_snap_stage *x = &g->stage[i];
		json_object *e;

		if (!x->present)
			continue;
		e = json_object_new_object();
		add(e, "stage", json_object_new_string(ntp_stage_key(i)));
		if (i == NTP_STAGE_NETWORK && g->host_only)
			host_only_network(s, g, e);
		else
			stage_entry(e, ntp_stage_name(i, s->transport, s->impl_host, s->impl_target, g->host_only), x);
		json_object_array_add(st, e);
	}
	add(o, "stages", st);
	n = ntp_stage_rows(s, g, r, NTP_STAGE_COUNT + 1);
	for (unsigned i = 0; i < n; i++) {
		json_object *e = json_object_new_object();

		add(e, "name", json_object_new_string(r[i].name));
		add(e, "stage", json_object_new_string(ntp_stage_key(r[i].stage)));
		add(e, "mean_us", num(r[i].mean_us, 3));
		add(e, "share", num(r[i].share, 4));
		add(e, "avg_qd", num(r[i].avg_qd, 4));
		json_object_array_add(rows, e);
	}
	add(o, "rows", rows);
	if (g->sampled && g->largest >= 0 && g->largest < NTP_STAGE_COUNT)
		add(o, "largest", json_object_new_string(ntp_stage_key(g->largest)));
	else
		add(o, "largest", NULL);
	for (int i = 0; i < NTP_COMP_COUNT; i++) {
		enum ntp_component c = ntp_component_path_order[i];
		const struct ntp_snap_comp *x = &g->comp[c];
		json_object *e;

		if (!x->n)
			continue;
		e = json_object_new_object();
		add(e, "component", json_object_new_string(ntp_component_key(c)));
		add(e, "name", json_object_new_string(ntp_component_name(c)));
		add(e, "stage", json_object_new_string(ntp_stage_key(ntp_component_stage(c))));
		add(e, "n", u64(x->n));
		add(e, "mean_us", num(x->mean_us, 3));
		add(e, "p50_us", num(x->p50_us, 3));
		add(e, "p99_us", num(x->p99_us, 3));
		add(e, "p99_9_us", num(x->p999_us, 3));
		add(e, "avg_qd", num(x->avg_qd, 4));
		json_object_array_add(comps, e);
	}
	add(o, "components", comps);
	/* records from the bio's submission only: their wait for a tag (in
	 * host_blk_sub), as --detail's row under it */
	if (g->bio_records) {
		json_object *w = json_object_new_object();

		add(w, "n", u64(g->bio_records));
		add(w, "mean_us", num((double)g->tag_wait_sum_ns / 1e3 / (double)g->bio_records, 3));
		add(w, "avg_qd", num((double)g->tag_wait_sum_ns * 1e-9 * g->rate /
				     (double)(g->sampled ? g->sampled : 1), 4));
		add(o, "tag_wait", w);
	}
	add(o, "fallback_records", u64(g->fallback_records));
	add(o, "incomplete_records", u64(g->incomplete_records));
	add(o, "missed_records", u64(g->missed_records));
	add(o, "unmatched_records", u64(g->unmatched));
	return o;
}

static json_object *machine(const char *name, const char *kernel)
{
	json_object *o;

	if (!name)
		return NULL;
	o = json_object_new_object();
	add(o, "hostname", json_object_new_string(name));
	add(o, "kernel", json_object_new_string(kernel ? kernel : ""));
	return o;
}

static json_object *header(const struct ntp_snapshot *s)
{
	json_object *o = json_object_new_object(), *rec = json_object_new_object();

	add(o, "seconds", num(s->seconds, 3));
	add(o, "sampling", json_object_new_int64(s->sampling));
	add(o, "role", json_object_new_string(s->role == NTP_ROLE_HOST ? "host" :
					       s->role == NTP_ROLE_TARGET ? "target" : "both"));
	add(o, "transport", json_object_new_string(s->transport == NTP_TRANSPORT_RDMA ? "rdma" : "tcp"));
	add(rec, "host", u64(s->host_records));
	add(rec, "target", u64(s->target_records));
	add(rec, "matched", u64(s->matched));
	add(o, "records", rec);
	add(o, "lost_events", u64(s->lost_events));
	return o;
}

json_object *ntp_report_json(const struct ntp_snapshot *s, const struct ntp_report_meta *m)
{
	json_object *o = json_object_new_object(), *h = header(s), *notes = json_object_new_array();
	json_object *groups = json_object_new_array();
	char note[NTP_REPORT_NOTE_LEN];

	add(o, "schema", json_object_new_string("ntprof-report"));
	add(o, "version", json_object_new_int(NTP_JSON_SCHEMA_VERSION));
	add(o, "host", machine(m->host_name, m->host_kernel));
	add(o, "target", machine(m->target_name, m->target_kernel));
	/* Flatten the common header into the top level. */
	json_object_object_foreach(h, key, val)
		add(o, key, json_object_get(val));
	json_object_put(h);
	for (unsigned i = 0; i < m->n_notes; i++)
		json_object_array_add(notes, json_object_new_string(m->notes[i]));
	/* several hosts: "host" is the first's, a note names them */
	if (ntp_report_hosts(m, 0, note, sizeof(note))) {
		size_t k = strlen(note);

		snprintf(note + k, sizeof(note) - k, ": \"host\" is the first's");
		json_object_array_add(notes, json_object_new_string(note));
	}
	for (unsigned i = 0; ntp_snapshot_note(s, i, note, sizeof(note)); i++)
		json_object_array_add(notes, json_object_new_string(note));
	/* a group's stage QDs above what its host's queues hold, named by its label */
	for (unsigned i = 0; i < s->n_groups; i++) {
		char label[64], text[NTP_REPORT_NOTE_LEN];

		if (!ntp_group_qd_note(m, &s->groups[i], text, sizeof(text)))
			continue;
		ntp_group_label(&s->groups[i], label, sizeof(label));
		snprintf(note, sizeof(note), "%s: %.*s", label, (int)(sizeof(note) - sizeof(label) - 4), text);
		json_object_array_add(notes, json_object_new_string(note));
	}
	add(o, "notes", notes);
	for (unsigned i = 0; i < s->n_groups; i++)
		json_object_array_add(groups, group_json(s, &s->groups[i]));
	add(o, "groups", groups);
	return o;
}

static json_object *compare_group(const struct ntp_snapshot *a, const struct ntp_snap_group *ga,
				  const struct ntp_snapshot *b, const struct ntp_snap_group *gb)
{
	json_object *o = ntp_json_group_ident(ga ? ga : gb), *stages = json_object_new_array();
	struct ntp_compare_row rows[2 * (NTP_STAGE_COUNT + 1)];
	char sides[320];
	struct ntp_compare_judge j;
	unsigned n;
	int v, differ, e2e;

	add(o, "a", ga ? latency(ga->e2e_mean_us, ga->e2e_p50_us, ga->e2e_p99_us, ga->e2e_p999_us, ga->sampled) : NULL);
	add(o, "b", gb ? latency(gb->e2e_mean_us, gb->e2e_p50_us, gb->e2e_p99_us, gb->e2e_p999_us, gb->sampled) : NULL);
	add(o, "a_rate", ga ? num(ga->rate, 1) : NULL);
	add(o, "b_rate", gb ? num(gb->rate, 1) : NULL);
	/* whose stage avg_qd are counted (--exact-queues), not Little's law's */
	add(o, "a_qd_counted", ga ? json_object_new_boolean(ga->qd_counted) : NULL);
	add(o, "b_qd_counted", gb ? json_object_new_boolean(gb->qd_counted) : NULL);
	if (!ga || !gb || !ga->sampled || !gb->sampled) {
		add(o, "note", NULL);
		add(o, "start_note", NULL);
		add(o, "stages", stages);
		add(o, "verdict", NULL);
		return o;
	}
	differ = ntp_compare_sides(ga, gb, sides, sizeof(sides), &e2e);
	add(o, "note", differ ? json_object_new_string(sides) : NULL);
	add(o, "start_note", ntp_compare_starts(ga, gb, sides, sizeof(sides)) ? json_object_new_string(sides) : NULL);
	n = ntp_compare_rows(a, ga, b, gb, rows, 2 * (NTP_STAGE_COUNT + 1));
	for (unsigned i = 0; i < n; i++) {
		json_object *e = json_object_new_object();

		add(e, "name", json_object_new_string(rows[i].name));
		add(e, "stage", json_object_new_string(ntp_stage_key(rows[i].stage)));
		add(e, "a_name", rows[i].in_a ? json_object_new_string(rows[i].name) : NULL);
		add(e, "b_name", rows[i].in_b ? json_object_new_string(rows[i].name_b) : NULL);
		add(e, "a_mean_us", rows[i].in_a ? num(rows[i].a.mean_us, 3) : NULL);
		add(e, "b_mean_us", rows[i].in_b ? num(rows[i].b.mean_us, 3) : NULL);
		add(e, "a_avg_qd", rows[i].in_a ? num(rows[i].a.avg_qd, 4) : NULL);
		add(e, "b_avg_qd", rows[i].in_b ? num(rows[i].b.avg_qd, 4) : NULL);
		/* a row of one side: null, not left out (docs/json-schema.md) */
		add(e, "change_us", rows[i].in_a && rows[i].in_b ? num(rows[i].b.mean_us - rows[i].a.mean_us, 3)
								 : NULL);
		add(e, "ratio", rows[i].in_a && rows[i].in_b && rows[i].a.mean_us > 0
			? num(rows[i].b.mean_us / rows[i].a.mean_us, 3) : NULL);
		json_object_array_add(stages, e);
	}
	add(o, "stages", stages);
	ntp_compare_judge(ga, gb, rows, n, differ, &j);
	v = j.kind == NTP_VERDICT_STAGE ? j.out : j.grew;
	if (v >= 0) {
		static const char *const kind[] = { [NTP_VERDICT_STAGE] = "stage", [NTP_VERDICT_UNIFORM] = "uniform",
						    [NTP_VERDICT_NO_GROWTH] = "no_growth",
						    [NTP_VERDICT_TOO_FEW] = "too_few",
						    [NTP_VERDICT_NO_FACTOR] = "no_factor" };
		json_object *e = json_object_new_object(), *x = NULL;
		double d = rows[v].b.mean_us - rows[v].a.mean_us;

		add(e, "kind", j.kind ? json_object_new_string(kind[j.kind]) : NULL);
		add(e, "name", json_object_new_string(rows[v].name));
		add(e, "stage", json_object_new_string(ntp_stage_key(rows[v].stage)));
		add(e, "b_name", json_object_new_string(rows[v].name_b));
		add(e, "change_us", num(d, 3));
		add(e, "e2e_change_us", num(gb->e2e_mean_us - ga->e2e_mean_us, 3));
		add(e, "e2e_ratio", ga->e2e_mean_us > 0 && !differ ? num(j.e2e_ratio, 3) : NULL);
		add(e, "amplifies", json_object_new_boolean(j.kind == NTP_VERDICT_STAGE));
		add(e, "restricted", json_object_new_boolean(differ));
		if (j.out >= 0) {
			const struct ntp_compare_row *r = &rows[j.out];

			x = json_object_new_object();
			add(x, "name", json_object_new_string(r->name));
			add(x, "stage", json_object_new_string(ntp_stage_key(r->stage)));
			add(x, "b_name", json_object_new_string(r->name_b));
			add(x, "ratio", r->a.mean_us > 0 ? num(r->b.mean_us / r->a.mean_us, 3) : NULL);
			add(x, "others_ratio", num(j.others_ratio, 3));
			add(x, "excess_us", num(j.excess_us, 3));
			add(x, "noise_us", num(j.noise_us, 3));
			add(x, "share", num(j.excess_us / (gb->e2e_mean_us - ga->e2e_mean_us), 4));
		}
		add(e, "beyond_others", x);
		/* "stage": every stage set apart from the common factor, named */
		x = json_object_new_array();
		for (unsigned k = 0; k < j.n_apart; k++) {
			const struct ntp_compare_row *r = &rows[j.apart[k]];
			json_object *y = json_object_new_object();

			add(y, "name", json_object_new_string(r->name));
			add(y, "stage", json_object_new_string(ntp_stage_key(r->stage)));
			add(y, "b_name", json_object_new_string(r->name_b));
			add(y, "change_us", num(r->b.mean_us - r->a.mean_us, 3));
			add(y, "ratio", r->a.mean_us > 0 ? num(r->b.mean_us / r->a.mean_us, 3) : NULL);
			add(y, "excess_us", num(j.apart_excess_us[k], 3));
			add(y, "noise_us", num(j.apart_noise_us[k], 3));
			add(y, "share", num(j.apart_excess_us[k] / (gb->e2e_mean_us - ga->e2e_mean_us), 4));
			json_object_array_add(x, y);
		}
		add(e, "named", x);
		add(e, "common_ratio", j.kind == NTP_VERDICT_STAGE ? num(j.common_ratio, 3) : NULL);
		add(o, "verdict", e);
	} else {
		add(o, "verdict", NULL);
	}
	return o;
}

static json_object *run(const struct ntp_snapshot *s, const char *name)
{
	json_object *o = header(s);

	add(o, "file", json_object_new_string(name));
	return o;
}

json_object *ntp_compare_json(const struct ntp_snapshot *a, const struct ntp_snapshot *b,
			      const char *name_a, const char *name_b)
{
	json_object *o = json_object_new_object(), *groups = json_object_new_array();
	const struct ntp_snap_group *partner[NTP_SNAP_MAX_GROUPS];

	ntp_compare_pairs(a, b, partner);
	add(o, "schema", json_object_new_string("ntprof-compare"));
	add(o, "version", json_object_new_int(NTP_JSON_SCHEMA_VERSION));
	add(o, "a", run(a, name_a));
	add(o, "b", run(b, name_b));
	for (unsigned i = 0; i < a->n_groups; i++)
		json_object_array_add(groups, compare_group(a, &a->groups[i], b, partner[i]));
	for (unsigned j = 0; j < b->n_groups; j++)
		if (!ntp_compare_claimed(a, partner, &b->groups[j]))
			json_object_array_add(groups, compare_group(a, NULL, b, &b->groups[j]));
	add(o, "groups", groups);
	return o;
}
