// SPDX-License-Identifier: GPL-2.0
/*
 * btf_need.c - the kernel structures and fields ntprof's programs read, and
 * whether the kernel's BTF has them, checked before any load.
 *
 * What is read is not listed here by hand, nor taken from the declarations
 * of bpf/nvme_types.bpf.h (a field declared there but read by no program
 * would refuse a kernel for nothing): it is what the BPF object itself asks
 * libbpf to relocate, its CO-RE relocation records (.BTF.ext, "CO-RE
 * relocation" in the kernel's Documentation/bpf/btf.rst), every member of a
 * "___ntp" structure that a field relocation goes through. A field a program
 * reads only where bpf_core_field_exists() finds it is not required (libbpf
 * leaves such a read to fail only if it runs; structures of another flavour
 * suffix, struct request___old, are not checked at all). What is kept here
 * is the one thing the object cannot say: the module whose BTF defines each
 * structure, which tells which transport and side need it
 * (ntp_side_modules) and whom to name when it is missing.
 * tests/cli/btf.sh fails when the object declares a structure this table
 * does not place.
 *
 * Where libbpf looks, so where this looks: vmlinux BTF and the modules' own,
 * or only the --btf file when one is used (btf_custom_path replaces vmlinux
 * BTF for CO-RE and libbpf then consults no module BTF; docs/kernel-btf.md).
 * A module built into the kernel has its types in vmlinux BTF.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "btf_need.h"
#include "collector.h"
#include "hooks.h"
#include "kmod.h"
#include "ntprof.skel.h"

#define FLAVOUR "___ntp"

/* One CO-RE relocation record of .BTF.ext, as the kernel's
 * include/uapi/linux/bpf.h declares struct bpf_core_relo and enum
 * bpf_core_relo_kind: declared here because a system's <linux/bpf.h> has
 * them only from 5.17 on. */
struct core_relo {
	__u32 insn_off, type_id, access_str_off, kind;
};
_Static_assert(sizeof(struct core_relo) == 16, "struct bpf_core_relo is 16 bytes");

enum {
	CORE_FIELD_EXISTS = 2,		/* BPF_CORE_FIELD_EXISTS */
	CORE_FIELD_RSHIFT_U64 = 5,	/* BPF_CORE_FIELD_RSHIFT_U64: the last of a field's kinds */
};

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
	{ "bio", "vmlinux" },
	{ "bio_issue", "vmlinux" },
	{ "nvmet_ctrl", "nvmet" },
	{ "nvmet_sq", "nvmet" },
	{ "nvmet_ns", "nvmet" },
	{ "nvmet_req", "nvmet" },
	{ "nvmet_fabrics_ops", "nvmet" },
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

/* Type id past its modifiers and typedefs */
static __u32 skip_mods(const struct btf *b, __u32 id)
{
	const struct btf_type *t;

	while ((t = btf__type_by_id(b, id)) && (btf_is_mod(t) || btf_is_typedef(t)))
		id = t->type;
	return id;
}

static const struct btf_type *composite(const struct btf *b, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(b, skip_mods(b, id));

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

int ntp_btf_bio_issue(void)
{
	struct btf *b = btf__load_vmlinux_btf();
	const struct btf_type *t;
	__s32 id;
	int r = NTP_BIO_ISSUE_NONE;

	if (!b)
		return -1;
	id = btf__find_by_name_kind(b, "bio", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(b, id) : NULL;
	/* 6.18 replaced bi_issue by issue_time_ns, which blk_mq_submit_bio
	 * stamps only for a queue blk-iolatency marked (QUEUE_FLAG_BIO_ISSUE_TIME):
	 * without blk-iolatency built in (CONFIG_BLK_CGROUP_IOLATENCY, whose
	 * struct blk_iolatency is then in the kernel's BTF) no bio has it */
	if (t && has_member(b, t, "issue_time_ns", 0))
		r = btf__find_by_name_kind(b, "blk_iolatency", BTF_KIND_STRUCT) > 0 ? NTP_BIO_ISSUE_NS_IOLAT
										    : NTP_BIO_ISSUE_NS_UNSET;
	else if (t && has_member(b, t, "bi_issue", 0))
		r = NTP_BIO_ISSUE_BI_ISSUE;
	btf__free(b);
	return r;
}

int ntp_btf_tcp_clock(void)
{
	struct btf *b = btf__load_vmlinux_btf();
	const struct btf_type *t;
	__s32 id;
	int r;

	if (!b)
		return -1;
	id = btf__find_by_name_kind(b, "tcp_sock", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(b, id) : NULL;
	r = t && has_member(b, t, "tcp_clock_cache", 0);
	btf__free(b);
	return r;
}

/* ---- what the object relocates ---- */

/* A member of a ___ntp structure (its id in the object's BTF) that a CO-RE
 * relocation goes through; guarded: only bpf_core_field_exists() asks. */
struct need {
	__u32 type;
	const char *field;
	bool read, guarded;
};

struct needs {
	struct need *v;		/* grown as the relocations are read: as many as the object has */
	size_t n, cap;
	bool failed;		/* out of memory: the check cannot be made */
};

static void need_add(struct needs *nd, __u32 type, const char *field, bool guarded)
{
	size_t i;

	for (i = 0; i < nd->n; i++)
		if (nd->v[i].type == type && !strcmp(nd->v[i].field, field))
			break;
	if (i == nd->n) {
		if (nd->n == nd->cap) {
			size_t cap = nd->cap ? 2 * nd->cap : 128;
			struct need *v = realloc(nd->v, cap * sizeof(*v));

			if (!v) {
				nd->failed = true;
				return;
			}
			nd->v = v;
			nd->cap = cap;
		}
		nd->v[nd->n++] = (struct need){ type, field, false, false };
	}
	if (guarded)
		nd->v[i].guarded = true;
	else
		nd->v[i].read = true;
}

static void needs_free(struct needs *nd)
{
	if (nd)
		free(nd->v);
	free(nd);
}

/* Is field of ___ntp structure type (any field: NULL) read by a program,
 * unguarded? A field that a bpf_core_field_exists() asks about is not, even
 * when a read relocates it too: the read is the one behind that check
 * (bpf/ntprof.bpf.c reads cdw10 only where it exists; libbpf leaves a read
 * of a missing field to fail only if it runs). Only the member that the
 * check asks about is guarded (note_access()), so a member on the way to it
 * that is read stays required. */
static bool needed(const struct needs *nd, __u32 type, const char *field)
{
	for (size_t i = 0; i < nd->n; i++)
		if (nd->v[i].type == type && (!field || !strcmp(nd->v[i].field, field)) && nd->v[i].read &&
		    !nd->v[i].guarded)
			return true;
	return false;
}

/* One field relocation: its access string ("0:1:2": an index into the root
 * type as an array, then a member index per structure or union, an element
 * per array) walked from type id root, each named member of a ___ntp
 * structure noted. A member of an anonymous union or structure counts as its
 * enclosing structure's (as C names it, and as has_member() looks). exists:
 * a bpf_core_field_exists() relocation, which asks about its last member
 * only: that one is noted guarded, the members on the way to it not at all
 * (bpf_core_field_exists(cmd->common.cdw10) makes neither common required
 * nor a read of cmd->common.opcode optional). */
static void note_access(const struct btf *ob, __u32 root, const char *spec, bool exists, struct needs *nd)
{
	__u32 id = root, owner = 0, last_owner = 0;
	const char *last = NULL;	/* the last named member so far, not yet noted */
	bool first = true;
	char *end;

	for (const char *p = spec; *p; p = *end == ':' ? end + 1 : end) {
		unsigned long idx = strtoul(p, &end, 10);
		const struct btf_type *t;
		const char *name;

		if (end == p)
			goto invalid;
		id = skip_mods(ob, id);
		t = btf__type_by_id(ob, id);
		if (!t)
			goto invalid;
		if (first) {		/* the root, as an array: the same type */
			first = false;
		} else if (btf_is_composite(t)) {
			const struct btf_member *m;

			if (idx >= btf_vlen(t))
				goto invalid;
			if (t->name_off)	/* anonymous: its enclosing structure's */
				owner = core_name(ob, t, &name) ? id : 0;
			m = btf_members(t) + idx;
			name = btf__name_by_offset(ob, m->name_off);
			if (name && name[0]) {
				if (last && !exists)
					need_add(nd, last_owner, last, false);
				last = owner ? name : NULL;
				last_owner = owner;
				owner = 0;
			}
			id = m->type;
		} else if (btf_is_array(t)) {
			owner = 0;
			id = btf_array(t)->type;
		} else {
			goto invalid;
		}
	}
	if (last)
		need_add(nd, last_owner, last, exists);
	return;
invalid:	/* no leaf known: what was read on the way still counts */
	if (last && !exists)
		need_add(nd, last_owner, last, false);
}

/* The object's .BTF.ext section (a copy), from the ELF the skeleton embeds */
static void *btf_ext_copy(size_t *len)
{
	size_t sz, shstrndx;
	const void *elf_bytes = ntprof_bpf__elf_bytes(&sz);
	Elf_Scn *scn = NULL;
	Elf *e;
	void *copy = NULL;

	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_memory((char *)elf_bytes, sz)))
		return NULL;
	if (!elf_getshdrstrndx(e, &shstrndx))
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *n;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)) || strcmp(n, ".BTF.ext"))
				continue;
			d = elf_rawdata(scn, NULL);
			if (d && d->d_buf && (copy = malloc(d->d_size))) {
				memcpy(copy, d->d_buf, d->d_size);
				*len = d->d_size;
			}
			break;
		}
	elf_end(e);
	return copy;
}

/* Every ___ntp field the object's CO-RE relocations go through. -1 when
 * the relocations cannot be read (an object built without them). */
static int object_needs(const struct btf *ob, struct needs *nd)
{
	struct {
		__u16 magic;
		__u8 version, flags;
		__u32 hdr_len;
		__u32 func_info_off, func_info_len, line_info_off, line_info_len;
		__u32 core_relo_off, core_relo_len;
	} h;
	size_t len = 0;
	unsigned char *ext = btf_ext_copy(&len), *p, *end;
	__u32 rec_size;
	int ret = -1;

	*nd = (struct needs){ 0 };
	if (!ext || len < sizeof(h))
		goto out;
	memcpy(&h, ext, sizeof(h));
	if (h.magic != 0xeB9F || h.hdr_len < sizeof(h) || h.hdr_len > len || h.core_relo_off > len - h.hdr_len ||
	    h.core_relo_len > len - h.hdr_len - h.core_relo_off || h.core_relo_len < 4)
		goto out;
	p = ext + h.hdr_len + h.core_relo_off;
	end = p + h.core_relo_len;
	memcpy(&rec_size, p, 4);
	if (rec_size < sizeof(struct core_relo))
		goto out;
	for (p += 4; end - p >= 8;) {	/* per program section: its name, how many */
		__u32 sec[2];

		memcpy(sec, p, 8);
		p += 8;
		if ((size_t)(end - p) / rec_size < sec[1])
			goto out;
		for (__u32 i = 0; i < sec[1]; i++, p += rec_size) {
			struct core_relo r;
			const char *spec;

			memcpy(&r, p, sizeof(r));
			if (r.kind > CORE_FIELD_RSHIFT_U64 || !(spec = btf__name_by_offset(ob, r.access_str_off)))
				continue;	/* a type's or an enum's: no field */
			note_access(ob, r.type_id, spec, r.kind == CORE_FIELD_EXISTS, nd);
		}
	}
	ret = nd->failed ? -1 : 0;
out:
	free(ext);
	return ret;
}

struct field_look {
	const struct btf *kb;
	const struct btf_type *kt;
	const char *kname;
	int missing;
	char *buf;		/* "a, b": the missing fields */
	size_t len, n;
};

static void field_there(const char *field, struct field_look *l)
{
	if (has_member(l->kb, l->kt, field, 0))
		return;
	l->missing++;
	if (l->buf && l->n < l->len)
		l->n += snprintf(l->buf + l->n, l->len - l->n, "%s%s.%s", l->n ? ", " : "", l->kname, field);
}

/* Of the structures named kname in kernel BTF kb, the one missing fewest of
 * the fields the programs read of ours (object type id oid): -1 none of that
 * name, else how many it misses (their names in buf). */
static int best_match(const struct btf *kb, const char *kname, const struct needs *nd, __u32 oid, char *buf,
		      size_t len)
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
			for (size_t i = 0; i < nd->n; i++)
				if (nd->v[i].type == oid && needed(nd, oid, nd->v[i].field))
					field_there(nd->v[i].field, &l);
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
	struct needs *nd = NULL;
	char items[700] = "", structs[400] = "", fields[300] = "", nobtf[128] = "", withbtf[128] = "";
	char unloaded[128] = "";
	size_t ns = 0, nf = 0, nn = 0, nw = 0, nu = 0;
	int nkb = 0, ret = 0;

	ob = object_btf(&skel);
	if (!ob || !(nd = malloc(sizeof(*nd))) || object_needs(ob, nd)) {
		snprintf(why, len, "%s: cannot read the BPF object's %s", tr, ob ? "CO-RE relocations" : "BTF");
		needs_free(nd);
		ntprof_bpf__destroy(skel);
		return -1;
	}
	if (file) {
		kb[nkb] = btf__parse(file, NULL);
		if (!kb[nkb]) {
			snprintf(why, len, "--btf %s: %s", file, strerror(errno));
			needs_free(nd);
			ntprof_bpf__destroy(skel);
			return -1;
		}
		nkb++;
	} else {
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux) {
			snprintf(why, len, "%s: kernel BTF missing (/sys/kernel/btf/vmlinux): %s", tr, strerror(errno));
			needs_free(nd);
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

		if (!kl || kl >= sizeof(kname) || !needed(nd, id, NULL))
			continue;
		memcpy(kname, oname, kl);
		kname[kl] = 0;
		/* unknown types count as needed everywhere (tests/cli/btf.sh
		 * makes sure there are none) */
		if (home_of(kname, &home) && home && strcmp(home, "vmlinux") && !module_needed(home, sides, transport))
			continue;
		for (int i = 0; i < nkb && best != 0; i++) {
			char f[200];
			int m = best_match(kb[i], kname, nd, id, f, sizeof(f));

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
		if (home && strcmp(home, "vmlinux") && !ntp_module_builtin(home)) {
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
	needs_free(nd);
	ntprof_bpf__destroy(skel);
	return ret;
}

int ntp_btf_need_module_types(const struct btf *b, const char *mod)
{
	struct ntprof_bpf *skel;
	struct btf *ob = object_btf(&skel);
	struct needs *nd = NULL;
	int ret = 1;

	if (!ob || !(nd = malloc(sizeof(*nd))) || object_needs(ob, nd)) {
		needs_free(nd);
		ntprof_bpf__destroy(skel);
		return -1;
	}
	for (__u32 id = 1; id < btf__type_cnt(ob) && ret == 1; id++) {
		const struct btf_type *ot = btf__type_by_id(ob, id);
		const char *oname, *home;
		char kname[64];
		size_t kl = core_name(ob, ot, &oname);

		if (!kl || kl >= sizeof(kname) || !needed(nd, id, NULL))
			continue;
		memcpy(kname, oname, kl);
		kname[kl] = 0;
		if (!home_of(kname, &home) || !home || strcmp(home, mod))
			continue;
		if (btf__find_by_name_kind(b, kname, BTF_KIND_STRUCT) <= 0 &&
		    btf__find_by_name_kind(b, kname, BTF_KIND_UNION) <= 0)
			ret = 0;
	}
	needs_free(nd);
	ntprof_bpf__destroy(skel);
	return ret;
}
