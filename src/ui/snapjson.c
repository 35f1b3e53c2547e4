// SPDX-License-Identifier: GPL-2.0
/* snapjson.c - one interval of ntprof-top as JSON: the same numbers as the
 * screen (stages, components, e2e, rates), none of its formatting. */
#include <string.h>
#include "render.h"
#include "snapjson.h"

static void add_d(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static void add_u(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_s(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static struct json_object *group_json(const struct ntp_snap_group *g, const struct ntp_snapshot *s)
{
	struct json_object *o = json_object_new_object(), *e2e = json_object_new_object();
	struct json_object *stages = json_object_new_array(), *comps = json_object_new_array();

	add_s(o, "io", ntp_io_name(g->io));
	add_u(o, "size", g->len);
	add_s(o, "dev", g->dev);
	json_object_object_add(o, "host_only", json_object_new_boolean(g->host_only));
	json_object_object_add(o, "target_only", json_object_new_boolean(g->target_only));
	add_u(o, "sampled", g->sampled);
	add_u(o, "commands", g->commands);
	add_d(o, "rate", g->rate);
	add_d(o, "iops", g->iops);
	add_d(o, "mbps", g->mbps);
	add_d(e2e, "mean_us", g->e2e_mean_us);
	add_d(e2e, "p50_us", g->e2e_p50_us);
	add_d(e2e, "p99_us", g->e2e_p99_us);
	add_d(e2e, "p999_us", g->e2e_p999_us);
	json_object_object_add(o, "e2e", e2e);
	for (int i = 0; i < NTP_STAGE_COUNT; i++) {
		const struct ntp_snap_stage *st = &g->stage[i];
		struct json_object *j;

		if (!st->present)
			continue;
		j = json_object_new_object();
		add_s(j, "stage", ntp_stage_key(i));
		add_s(j, "name", ntp_stage_name(i, s->transport, s->impl_host, s->impl_target, g->host_only));
		add_d(j, "mean_us", st->mean_us);
		add_d(j, "p50_us", st->p50_us);
		add_d(j, "p99_us", st->p99_us);
		add_d(j, "p999_us", st->p999_us);
		add_d(j, "share", st->share);
		add_d(j, "avg_qd", st->avg_qd);
		json_object_array_add(stages, j);
	}
	json_object_object_add(o, "stages", stages);
	for (int i = 0; i < NTP_COMP_COUNT; i++) {
		const struct ntp_snap_comp *c = &g->comp[i];
		struct json_object *j;

		if (!c->n)
			continue;
		j = json_object_new_object();
		add_s(j, "component", ntp_component_name(i));
		add_u(j, "n", c->n);
		add_d(j, "mean_us", c->mean_us);
		add_d(j, "p50_us", c->p50_us);
		add_d(j, "p99_us", c->p99_us);
		add_d(j, "p999_us", c->p999_us);
		add_d(j, "avg_qd", c->avg_qd);
		json_object_array_add(comps, j);
	}
	json_object_object_add(o, "components", comps);
	return o;
}

struct json_object *ntp_snapshot_json(const struct ntp_snapshot *s, const char *host)
{
	struct json_object *o = json_object_new_object(), *groups = json_object_new_array();

	if (!o || !groups) {
		json_object_put(o);
		json_object_put(groups);
		return NULL;
	}
	if (host)
		add_s(o, "host", host);
	add_u(o, "interval", s->index);
	add_u(o, "start_ns", s->start_ns);
	add_u(o, "end_ns", s->end_ns);
	add_d(o, "seconds", s->seconds);
	add_s(o, "role", s->role == NTP_ROLE_TARGET ? "target" : s->role == NTP_ROLE_BOTH ? "both" : "host");
	add_s(o, "transport", s->transport == NTP_TRANSPORT_RDMA ? "rdma" : "tcp");
	add_u(o, "sampling", s->sampling);
	add_u(o, "lost_events", s->lost_events);
	add_u(o, "host_records", s->host_records);
	add_u(o, "target_records", s->target_records);
	add_u(o, "matched", s->matched);
	for (uint32_t i = 0; i < s->n_groups && i < NTP_SNAP_MAX_GROUPS; i++)
		json_object_array_add(groups, group_json(&s->groups[i], s));
	json_object_object_add(o, "groups", groups);
	return o;
}
