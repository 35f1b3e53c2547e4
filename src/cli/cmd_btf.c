// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_btf.c - `ntprof btf -o OUT INPUT...`: merge vmlinux's BTF and the NVMe
 * modules' BTF into the one file that `record --btf` and `probe --btf` hand
 * to libbpf on kernels whose modules carry no BTF (before 5.11).
 *
 * Why one merged file: libbpf's btf_custom_path REPLACES vmlinux BTF for every
 * CO-RE relocation and then looks at no module BTF at all, so the file must
 * hold struct request and struct sock as well as struct nvme_tcp_request.
 * Why standalone module BTF (pahole without --btf_base): btf__add_btf()
 * refuses split BTF as its source (-ENOTSUP in libbpf 1.1). A standalone
 * module BTF repeats every kernel type the module uses; btf__dedup() folds
 * those copies into vmlinux's, since all come from one kernel build.
 * tools/ntprof-btf.sh runs pahole on the -dbg package and then this.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "options.h"
#include "core/render/out.h"
#include "collector/hooks.h"
#include "collector/btf_need.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof btf -o OUT INPUT...\n"
"Merges BTF into one file for `ntprof record --btf OUT` on a kernel whose NVMe\n"
"modules have no BTF of their own (before 5.11). The first INPUT is the\n"
"kernel's (an ELF vmlinux with a .BTF section, or raw BTF such as\n"
"/sys/kernel/btf/vmlinux); the others are standalone module BTF files\n"
"(pahole --btf_encode_detached=M.btf M.ko, without --btf_base). The result is\n"
"deduplicated and must hold the types of nvme_core, nvme_tcp, nvmet and\n"
"nvmet_tcp, for NVMe/RDMA of ib_core, nvme_rdma and nvmet_rdma too.\n"
"tools/ntprof-btf.sh makes everything from a -dbg package.\n\n");
	ntp_cmd_help(f, "btf");
}

/* Which modules' types the merged BTF holds, "nvme_core nvme_tcp ..." */
static void modules_found(const struct btf *b, char *buf, size_t len, int *n_found)
{
	static const char *const mods[] = { "nvme_core", "nvme_tcp", "nvmet", "nvmet_tcp",
					    "ib_core", "nvme_rdma", "nvmet_rdma", NULL };
	size_t n = 0;

	buf[0] = 0;
	*n_found = 0;
	for (const char *const *m = mods; *m; m++) {
		/* the structures the programs read from it (btf_need.c) */
		if (ntp_btf_need_module_types(b, *m) == 1 && n < len) {
			n += snprintf(buf + n, len - n, "%s%s", n ? " " : "", *m);
			/* ib_core's may be vmlinux's own (CONFIG_INFINIBAND=y) */
			*n_found += strcmp(*m, "ib_core") != 0;
		}
	}
}

/* The pahole of the kernel build and the one run on the -dbg package may
 * differ in two bits: pahole 1.24 encodes plain char as a SIGNED int and marks
 * enums with negative values signed (the kind flag), where the pahole that
 * built Debian's 5.10 did neither. One such bit makes every structure that
 * reaches the type through its pointers (struct request, struct sock...)
 * differ, and btf__dedup() then keeps a copy per module. A module's INT or
 * ENUM with the name and size of a kernel one takes the kernel's bits: the
 * kernel's BTF is the reference, and CO-RE field offsets do not depend on
 * signedness. Returns how many types were changed. */
static int align_to_kernel(struct btf *b, unsigned n_kernel)
{
	unsigned n = btf__type_cnt(b), *ref, n_ref = 0;
	int changed = 0;

	ref = calloc(n_kernel + 1, sizeof(*ref));
	if (!ref)
		return 0;
	for (unsigned k = 1; k <= n_kernel; k++) {
		const struct btf_type *kt = btf__type_by_id(b, k);

		if ((btf_is_int(kt) || btf_is_enum(kt)) && kt->name_off)
			ref[n_ref++] = k;
	}
	for (unsigned id = n_kernel + 1; id < n; id++) {
		struct btf_type *t = (struct btf_type *)btf__type_by_id(b, id);
		const char *name;

		if (!(btf_is_int(t) || btf_is_enum(t)) || !t->name_off)
			continue;
		name = btf__name_by_offset(b, t->name_off);
		for (unsigned r = 0; r < n_ref; r++) {
			const struct btf_type *kt = btf__type_by_id(b, ref[r]);

			if (btf_kind(kt) != btf_kind(t) || kt->size != t->size || btf_vlen(kt) != btf_vlen(t) ||
			    strcmp(btf__name_by_offset(b, kt->name_off), name))
				continue;
			if (btf_is_int(t) && *(__u32 *)(t + 1) != *(const __u32 *)(kt + 1)) {
				*(__u32 *)(t + 1) = *(const __u32 *)(kt + 1);	/* encoding, offset, bits */
				changed++;
			} else if (btf_is_enum(t) && btf_kflag(t) != btf_kflag(kt)) {
				t->info = (t->info & ~(1u << 31)) | (kt->info & (1u << 31));
				changed++;
			}
			break;
		}
	}
	free(ref);
	return changed;
}

/* libbpf 1.1's btf__parse() checks the layout of the types but not what they
 * point at: a name offset past the string section makes btf__add_btf() pass
 * NULL to strlen(), a type id past the last type makes btf__dedup() read out
 * of bounds. Every offset and id is checked here first. 0, or -1 with why. */
static int str_ok(const struct btf *b, __u32 off)
{
	return btf__str_by_offset(b, off) != NULL;
}

static int id_ok(const struct btf *b, __u32 id)
{
	return id < btf__type_cnt(b);
}

static int validate_btf(const struct btf *b, char *why, size_t len)
{
	unsigned n = btf__type_cnt(b);

	for (unsigned id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		unsigned vlen = btf_vlen(t), bad_id = 0;
		const char *what = NULL;

		if (!str_ok(b, t->name_off)) {
			what = "its name";
			goto bad;
		}
		switch (btf_kind(t)) {
		case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT: case BTF_KIND_FUNC: case BTF_KIND_FUNC_PROTO: case BTF_KIND_VAR:
		case BTF_KIND_DECL_TAG: case BTF_KIND_TYPE_TAG:
			bad_id = !id_ok(b, t->type);
			break;
		case BTF_KIND_ARRAY:
			bad_id = !id_ok(b, btf_array(t)->type) || !id_ok(b, btf_array(t)->index_type);
			break;
		}
		if (bad_id) {
			what = "the type it refers to";
			goto bad;
		}
		for (unsigned i = 0; i < vlen && !what; i++) {
			switch (btf_kind(t)) {
			case BTF_KIND_STRUCT: case BTF_KIND_UNION:
				if (!str_ok(b, btf_members(t)[i].name_off))
					what = "a member's name";
				else if (!id_ok(b, btf_members(t)[i].type))
					what = "a member's type";
				break;
			case BTF_KIND_ENUM:
				if (!str_ok(b, btf_enum(t)[i].name_off))
					what = "an enumerator's name";
				break;
			case BTF_KIND_ENUM64:
				if (!str_ok(b, btf_enum64(t)[i].name_off))
					what = "an enumerator's name";
				break;
			case BTF_KIND_FUNC_PROTO:
				if (!str_ok(b, btf_params(t)[i].name_off))
					what = "a parameter's name";
				else if (!id_ok(b, btf_params(t)[i].type))
					what = "a parameter's type";
				break;
			case BTF_KIND_DATASEC:
				if (!id_ok(b, btf_var_secinfos(t)[i].type))
					what = "a variable's type";
				break;
			}
		}
		if (!what)
			continue;
bad:
		if (strstr(what, "name"))
			snprintf(why, len, "damaged BTF: type %u: %s is past the string section", id, what);
		else
			snprintf(why, len, "damaged BTF: type %u: %s is past the last type (%u)", id, what, n - 1);
		return -1;
	}
	return 0;
}

static int write_file(const char *path, const void *data, __u32 size, char **inputs, size_t n)
{
	char err[NTP_ERR_LEN];
	struct ntp_out o;

	if (ntp_out_open(&o, path, (const char *const *)inputs, n, err, sizeof(err)))
		return ntp_err("-o %s", err);
	if (fwrite(data, 1, size, o.f) != size) {
		ntp_out_discard(&o);
		return ntp_err("-o %s: out of memory", path);
	}
	if (ntp_out_close(&o, err, sizeof(err)))
		return ntp_err("-o %s", err);
	return 0;
}

/* Why an input gave no BTF (btf__parse() failed with errno e): what is wrong
 * with the file when it is plain to see (a directory, an empty file), which
 * libbpf reports as EIO; else libbpf's reason. */
static const char *parse_failure(const char *path, int e)
{
	struct stat st;
	char c;
	int fd;
	ssize_t n;

	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return "is a directory, not a BTF file";
	/* read, not stat()'s size: a pseudo-file (procfs) may say 0 and hold data */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		n = read(fd, &c, 1);
		close(fd);
		if (n == 0)
			return "an empty file, no BTF in it";
	}
	/* libbpf's own codes (LIBBPF_ERRNO__FORMAT...) start at 4000 */
	return e == EINVAL || e == EPROTO || e >= 4000 ?
	       "no BTF in it (neither raw BTF nor an ELF file with a .BTF section)" : strerror(e);
}

int cmd_btf(int argc, char **argv)
{
	struct ntp_cmd_opts o = { 0 };
	void *bases[] = { &o };
	const char *out;
	struct btf *merged = NULL;
	char found[128], why[200];
	int first, ret = 1, n_found;
	unsigned before, n_kernel = 0;
	const void *raw;
	__u32 raw_size;

	first = ntp_cmd_parse("btf", argc, argv, bases);
	if (first < 0)
		return 1;
	if (o.help) {
		usage(stdout);
		return 0;
	}
	out = o.out;
	if (!out)
		return ntp_err("btf: -o OUT is required (ntprof btf --help)");
	if (first + 2 > argc)
		return ntp_err("btf: needs the kernel's BTF and at least one module's (ntprof btf --help)");

	{
		char err[NTP_ERR_LEN];

		if (ntp_out_check(out, (const char *const *)argv + first, (size_t)(argc - first),
				  err, sizeof(err)))
			return ntp_err("-o %s", err);
	}
	if (!getenv("NTPROF_DEBUG"))
		libbpf_set_print(NULL);	/* our one-line errors say it */
	merged = btf__new_empty();
	if (!merged)
		return ntp_err("out of memory");
	for (int i = first; i < argc; i++) {
		/* raw BTF, or the .BTF section of an ELF file */
		struct btf *in = btf__parse(argv[i], NULL);
		int err;

		if (!in) {
			ntp_err("%s: %s", argv[i], parse_failure(argv[i], errno));
			goto out;
		}
		if (validate_btf(in, why, sizeof(why))) {
			btf__free(in);
			ntp_err("%s: %s", argv[i], why);
			goto out;
		}
		err = btf__add_btf(merged, in);
		btf__free(in);
		if (err < 0) {
			ntp_err("%s: cannot append its BTF: %s", argv[i], strerror(-err));
			goto out;
		}
		if (i == first)
			n_kernel = btf__type_cnt(merged) - 1;
	}
	before = btf__type_cnt(merged) - 1;
	align_to_kernel(merged, n_kernel);
	if (btf__dedup(merged, NULL)) {
		ntp_err("btf: deduplicating the merged types failed: %s", strerror(errno));
		goto out;
	}
	modules_found(merged, found, sizeof(found), &n_found);
	if (!n_found) {
		ntp_err("btf: no NVMe module's types in the inputs (struct nvme_tcp_request, nvmet_req...): "
			"pass the modules' BTF made by pahole");
		goto out;
	}
	raw = btf__raw_data(merged, &raw_size);
	if (!raw) {
		ntp_err("btf: cannot serialize the merged BTF: %s", strerror(errno));
		goto out;
	}
	if (write_file(out, raw, raw_size, argv + first, (size_t)(argc - first)))
		goto out;
	printf("ntprof: %s: %u types (%u before deduplication), %u bytes; types of: %s\n", out,
	       btf__type_cnt(merged) - 1, before, raw_size, found);
	ret = 0;
out:
	btf__free(merged);
	return ret;
}
