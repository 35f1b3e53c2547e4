/* SPDX-License-Identifier: GPL-2.0 */
/* snapjson.h - one interval as a JSON object (ntprof-top --json and S). */
#ifndef NTP_UI_SNAPJSON_H
#define NTP_UI_SNAPJSON_H

#include <stddef.h>
#include <json-c/json.h>
#include "../core/model/model.h"

/* A new JSON object for the snapshot: the report's document of that interval
 * with "schema": "ntprof-top", "interval", "start_ns" and "end_ns"
 * (docs/json-schema.md); host may be NULL. notes: n_notes lines,
 * NUL-separated, added to its "notes" (a replay's damaged or cut files).
 * NULL on ENOMEM. */
struct json_object *ntp_snapshot_json(const struct ntp_snapshot *s, const char *host, const char *notes,
				      size_t n_notes);

#endif
