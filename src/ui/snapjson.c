// SPDX-License-Identifier: GPL-2.0
/* snapjson.c - one interval of ntprof-top as JSON: the report's document
 * (docs/json-schema.md) of that interval, with where it lies in the run. */
#include <string.h>
#include "../core/render/report.h"
#include "snapjson.h"

struct json_object *ntp_snapshot_json(const struct ntp_snapshot *s, const char *host, const char *notes,
				      size_t n_notes)
{
	struct ntp_report_meta meta;
	struct json_object *o, *arr;

	memset(&meta, 0, sizeof(meta));
	meta.host_name = host;
	o = ntp_report_json(s, &meta);
	if (!o)
		return NULL;
	/* Replaces the report's value in place: "schema" stays the first key. */
	json_object_object_add(o, "schema", json_object_new_string("ntprof-top"));
	json_object_object_add(o, "interval", json_object_new_uint64(s->index));
	json_object_object_add(o, "start_ns", json_object_new_uint64(s->start_ns));
	json_object_object_add(o, "end_ns", json_object_new_uint64(s->end_ns));
	json_object_object_add(o, "sampling_from",
			       s->sampling_from ? json_object_new_uint64(s->sampling_from) : NULL);
	/* the replay's damaged or cut files, after the snapshot's own notes */
	if (n_notes && json_object_object_get_ex(o, "notes", &arr))
		for (size_t i = 0; i < n_notes; i++, notes += strlen(notes) + 1)
			json_object_array_add(arr, json_object_new_string(notes));
	return o;
}
