// SPDX-License-Identifier: GPL-2.0
/*
 * btf_need.c - the kernel structures and fields ntprof's programs read, and
 * whether the kernel's BTF has them, checked before any load.
 *
 * What is read is not listed here by hand: it is every "___ntp" structure of
 * the BPF object's own BTF (bpf/nvme_types.bpf.h declares just the fields the
 * programs read, with preserve_access_index) with its members, so a field
 * added there is checked at once. What is kept here is the one thing the
 * object cannot say: the module whose BTF defines each structure, which tells
 * which transport and side need it (ntp_side_modules) and whom to name when it
 * is missing. tests/cli/btf.sh fails when the object declares a structure
 * this table does not place. Every ___ntp field is required: a field that a
 * program reads only where bpf_core_field_exists() finds it goes in a
 * structure of another flavour suffix (struct request___old), which this
 * does not check.
 *
 * Where libbpf looks, so where this looks: vmlinux BTF and the modules' own,
 * or only the --btf file when one is used (btf_custom_path replaces vmlinux
 * BTF for CO-RE and libbpf then consults no module BTF; docs/kernel-btf.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "btf_need.h"
#include "collector.h"
#include "hooks.h"
#include "ntprof.skel.h"

#define FLAVOUR "___ntp"

/* The module whose BTF defines each structure of bpf/nvme_types.bpf.h;
 * "vmlinux" for the kernel's own, NULL for include/linux/nvme.h's, which
 * every NVMe module's BTF carries (needed by every side). */
static const struct {
	const char *type, *module;
} homes[] = {
	{ "nvme_common_command", NULL },
	{ "nvme_rw_command", NULL },
	{ "nvme_command", NULL },
	{ "nvme_completion", NULL },
	{ "nvme_ctrl", "nvme_core" },
	{ "nvme_request", "nvme_core" },
	{ "nvme_tcp_request", "nvme_tcp" },
	{ "nvme_tcp_queue", "nvme_tcp" },
	{ "blk_mq_tags", "vmlinux" },
	{ "nvmet_ctrl", "nvmet" },
	{ "nvmet_sq", "nvmet" },
	{ "nvmet_ns", "nvmet" },
	{ "nvmet_req", "nvmet" },
	{ "nvmet_tcp_cmd", "nvmet_tcp" },
	{ "nvmet_tcp_queue", "nvmet_tcp" },
	{ "ib_cqe", "ib_core" },
	{ "ib_qp", "ib_core" },
	{ "ib_wc", "ib_core" },
	{ "nvme_rdma_qe", "nvme_rdma" },
	{ "nvme_rdma_request", "nvme_rdma" },
	{ "nvmet_rdma_rsp", "nvmet_rdma" },
};

/* Is type in the table? *home: its module (NULL: any, or not in the table) */
static bool home_of(const char *type, const char **home)
{
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++)
		if (!strcmp(homes[i].type, type)) {
			*home = homes[i].module;
			return true;
		}
	*home = NULL;
	return false;
}

/* The kernel's name of a ___ntp structure ("" for another), its length */
static size_t core_name(const struct btf *b, const struct btf_type *t, const char **name)
{
	const char *n = btf__name_by_offset(b, t->name_off);
	size_t l = n ? strlen(n) : 0, f = strlen(FLAVOUR);

	*name = n;
	if (!btf_is_composite(t) || l <= f || strcmp(n + l - f, FLAVOUR))
		return 0;
	return l - f;
}

static const struct btf_type *composite(const struct btf *b, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(b, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(b, t->type);
	return t && btf_is_composite(t) ? t : NULL;
}

/* Is field a member of t, or of an anonymous struct/union in it (as C and
 * CO-RE see it)? */
static bool has_member(const struct btf *b, const struct btf_type *t, const char *field, int depth)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(b, m->name_off);
		const struct btf_type *in;

		if (n && n[0] && !strcmp(n, field))
			return true;
		if ((!n || !n[0]) && depth < 4 && (in = composite(b, m->type)) && has_member(b, in, field, depth + 1))
			return true;
	}
	return false;
}

/* The member names of our declaration t, anonymous unions opened, called
 * with each: fn returns false to stop. */
typedef bool (*field_fn)(const char *field, void *ctx);
static bool each_field(const struct btf *b, const struct btf_type *t, field_fn fn, void *ctx, int depth)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(b, m->name_off);
		const struct btf_type *in;

		if (n && n[0]) {
			if (!fn(n, ctx))
				return false;
		} else if (depth < 4 && (in = composite(b, m->type)) && !each_field(b, in, fn, ctx, depth + 1)) {
			return false;
		}
	}
	return true;
}

struct field_look {
	const struct btf *kb;
	const struct btf_type *kt;
	const char *kname;
	int missing;
	char *buf;		/* "a, b": the missing fields */
	size_t len, n;
};

static bool field_there(const char *field, void *ctx)
{
	struct field_look *l = ctx;

	if (has_member(l->kb, l->kt, field, 0))
		return true;
	l->missing++;
	if (l->buf && l->n < l->len)
		l->n += snprintf(l->buf + l->n, l->len - l->n, "%s%s.%s", l->n ? ", " : "", l->kname, field);
	return true;
}

/* Of the structures named kname in kernel BTF kb, the one missing fewest of
 * our declaration's fields: -1 none of that name, else how many it misses
 * (their names in buf). */
static int best_match(const struct btf *kb, const char *kname, const struct btf *ob, const struct btf_type *ot,
		      char *buf, size_t len)
{
	int best = -1;
	__u32 n = btf__type_cnt(kb);

	for (int kind = BTF_KIND_STRUCT; kind <= BTF_KIND_UNION; kind++) {
		__s32 id = btf__find_by_name_kind(kb, kname, kind);

		/* duplicates (a file deduplicated imperfectly) follow the first */
		for (; id > 0 && (__u32)id < n; id++) {
			const struct btf_type *kt = btf__type_by_id(kb, id);
			char tmp[200] = "";
			struct field_look l = { kb, kt, kname, 0, tmp, sizeof(tmp), 0 };

			if (btf_kind(kt) != kind || strcmp(btf__name_by_offset(kb, kt->name_off), kname))
				continue;
			each_field(ob, ot, field_there, &l, 0);
			if (best < 0 || l.missing < best) {
				best = l.missing;
				snprintf(buf, len, "%s", tmp);
			}
			if (!best)
				return 0;
		}
	}
	return best;
}

static struct btf *object_btf(struct ntprof_bpf **skel)
{
	*skel = ntprof_bpf__open();
	return *skel ? bpf_object__btf((*skel)->obj) : NULL;
}

static bool module_needed(const char *mod, unsigned sides, unsigned transport)
{
	const char *mods[8];
	size_t n = ntp_role_modules(sides, transport, mods, sizeof(mods) / sizeof(mods[0]));

	for (size_t i = 0; i < n; i++)
		if (!strcmp(mods[i], mod))
			return true;
	return false;
}

static void add(char *buf, size_t len, size_t *n, const char *sep, const char *s)
{
	if (*n < len)
		*n += snprintf(buf + *n, len - *n, "%s%s", *n ? sep : "", s);
}

/* mod in the list of names separated by ", " or " "? */
static bool listed(const char *list, const char *mod)
{
	size_t l = strlen(mod);

	for (const char *p = list; (p = strstr(p, mod)); p += l)
		if ((p == list || p[-1] == ' ') && (p[l] == ' ' || p[l] == ',' || !p[l]))
			return true;
	return false;
}

int ntp_btf_need_check(unsigned sides, unsigned transport, const char *file, char *why, size_t len)
{
	const char *tr = transport == NTP_TRANSPORT_RDMA ? "rdma" : "tcp";
	struct btf *kb[8] = { 0 }, *vmlinux = NULL, *ob;
	struct ntprof_bpf *skel;
	char items[700] = "", structs[400] = "", fields[300] = "", nobtf[128] = "", withbtf[128] = "";
	char unloaded[128] = "";
	size_t ns = 0, nf = 0, nn = 0, nw = 0, nu = 0;
	int nkb = 0, ret = 0;

	ob = object_btf(&skel);
	if (!ob) {
		snprintf(why, len, "%s: cannot read the BPF object's BTF: %s", tr, strerror(errno));
		ntprof_bpf__destroy(skel);
		return -1;
	}
	if (file) {
		kb[nkb] = btf__parse(file, NULL);
		if (!kb[nkb]) {
			snprintf(why, len, "--btf %s: %s", file, strerror(errno));
			ntprof_bpf__destroy(skel);
			return -1;
		}
		nkb++;
	} else {
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux) {
			snprintf(why, len, "%s: kernel BTF missing (/sys/kernel/btf/vmlinux): %s", tr, strerror(errno));
			ntprof_bpf__destroy(skel);
			return -1;
		}
		kb[nkb++] = vmlinux;
		const char *mods[7];
		size_t nmods = ntp_role_modules(sides, transport, mods, sizeof(mods) / sizeof(mods[0]));

		for (size_t i = 0; i < nmods; i++)
			if (ntp_module_btf(mods[i]) && (kb[nkb] = btf__load_module_btf(mods[i], vmlinux)))
				nkb++;
	}

	for (__u32 id = 1; id < btf__type_cnt(ob); id++) {
		const struct btf_type *ot = btf__type_by_id(ob, id);
		const char *oname, *home;
		char kname[64], missed[200] = "";
		size_t kl = core_name(ob, ot, &oname);
		int best = -1;

		if (!kl || kl >= sizeof(kname))
			continue;
		memcpy(kname, oname, kl);
		kname[kl] = 0;
		/* unknown types count as needed everywhere (tests/cli/btf.sh
		 * makes sure there are none) */
		if (home_of(kname, &home) && home && strcmp(home, "vmlinux") && !module_needed(home, sides, transport))
			continue;
		for (int i = 0; i < nkb && best != 0; i++) {
			char f[200];
			int m = best_match(kb[i], kname, ob, ot, f, sizeof(f));

			if (m >= 0 && (best < 0 || m < best)) {
				best = m;
				snprintf(missed, sizeof(missed), "%s", f);
			}
		}
		if (!best)
			continue;
		ret = -1;
		if (best < 0)
			add(structs, sizeof(structs), &ns, ", ", kname);
		else
			add(fields, sizeof(fields), &nf, ", ", missed);
		if (home && strcmp(home, "vmlinux")) {
			if (!ntp_module_loaded(home)) {
				if (!listed(unloaded, home))
					add(unloaded, sizeof(unloaded), &nu, ", ", home);
			} else if (!ntp_module_btf(home) && !listed(nobtf, home))
				add(nobtf, sizeof(nobtf), &nn, ", ", home);
			else if (ntp_module_btf(home) && !listed(withbtf, home))
				add(withbtf, sizeof(withbtf), &nw, ", ", home);
		}
	}
	if (ret) {
		snprintf(items, sizeof(items), "%s%s%s%s%s", ns ? "struct " : "", structs, ns && nf ? "; no " : "",
			 nf ? "field " : "", fields);
		if (file)
			snprintf(why, len, "%s: the kernel's BTF has no %s (looked for in --btf %s, which stands for the "
				 "modules' BTF; make it again with tools/ntprof-btf.sh, docs/kernel-btf.md)", tr, items, file);
		else if (unloaded[0])
			snprintf(why, len, "%s: the kernel's BTF has no %s (module%s %s not loaded)", tr, items,
				 strchr(unloaded, ',') ? "s" : "", unloaded);
		else if (nobtf[0])
			snprintf(why, len, "%s: the kernel's BTF has no %s (module%s %s ha%s no BTF; build a BTF file with "
				 "tools/ntprof-btf.sh, docs/kernel-btf.md)", tr, items, strchr(nobtf, ',') ? "s" : "",
				 nobtf, strchr(nobtf, ',') ? "ve" : "s");
		else
			snprintf(why, len, "%s: the kernel's BTF has no %s (looked for in vmlinux's%s%s: a version whose "
				 "structures ntprof does not know, bpf/nvme_types.bpf.h)", tr, items,
				 withbtf[0] ? " and that of " : "", withbtf);
	}
	for (int i = nkb - 1; i >= 0; i--)
		btf__free(kb[i]);
	ntprof_bpf__destroy(skel);
	return ret;
}

int ntp_btf_need_module_types(const struct btf *b, const char *mod)
{
	struct ntprof_bpf *skel;
	struct btf *ob = object_btf(&skel);
	int ret = 1;

	if (!ob) {
		ntprof_bpf__destroy(skel);
		return -1;
	}
	for (__u32 id = 1; id < btf__type_cnt(ob) && ret == 1; id++) {
		const struct btf_type *ot = btf__type_by_id(ob, id);
		const char *oname, *home;
		char kname[64];
		size_t kl = core_name(ob, ot, &oname);

		if (!kl || kl >= sizeof(kname))
			continue;
		memcpy(kname, oname, kl);
		kname[kl] = 0;
		if (!home_of(kname, &home) || !home || strcmp(home, mod))
			continue;
		if (btf__find_by_name_kind(b, kname, BTF_KIND_STRUCT) <= 0 &&
		    btf__find_by_name_kind(b, kname, BTF_KIND_UNION) <= 0)
			ret = 0;
	}
	ntprof_bpf__destroy(skel);
	return ret;
}
