// SPDX-License-Identifier: GPL-2.0
/* options.c - the option parser and --help printer over option tables (options.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "options.h"
#include "collector/session.h"
#include "core/opt.h"

const struct ntp_optcmd *ntp_optcmd_find(const char *prog, const char *cmd)
{
	for (size_t i = 0; i < ntp_n_optcmds; i++)
		if (!strcmp(ntp_optcmds[i].prog, prog) &&
		    ((!cmd && !ntp_optcmds[i].cmd) || (cmd && ntp_optcmds[i].cmd && !strcmp(ntp_optcmds[i].cmd, cmd))))
			return &ntp_optcmds[i];
	return NULL;
}

void ntp_capture_defaults(struct ntp_capture_opts *c)
{
	memset(c, 0, sizeof(*c));
	c->co.role = NTP_ROLE_HOST;
	c->co.transport = NTP_TRANSPORT_TCP;
	c->co.sampling = 1000;
	c->co.io_type = -1;
	c->co.attach_timeout_s = 10;
	c->interval_s = 1;
}

int ntp_capture_check(const struct ntp_capture_opts *c, char *err, size_t errlen)
{
	const char *btf = c->co.btf_path;
	struct stat st;
	int fd;

	if (ntp_session_opts_check(&c->co, err, errlen))
		return -1;
	/* --btf "" stands for the default file (collector/hooks.h, ntp_btf_file());
	 * whether a file holds the right BTF is for the collector to say (it
	 * parses it with libbpf, which this check does without) */
	if (btf && btf[0]) {
		if (stat(btf, &st)) {
			snprintf(err, errlen, "option --btf: %s: %s", btf, strerror(errno));
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "option --btf: %s: is a directory, not a BTF file", btf);
			return -1;
		}
		fd = open(btf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);	/* a FIFO must not block */
		if (fd < 0) {
			snprintf(err, errlen, "option --btf: %s: %s", btf, strerror(errno));
			return -1;
		}
		close(fd);
	}
	return 0;
}

int ntp_opt_list_check(const char *label, const char *val, const char *item, char *err, size_t errlen)
{
	size_t len = strlen(val);

	if (val[0] == ',')
		snprintf(err, errlen, "option %s: '%s' starts with a comma", label, val);
	else if (len && val[len - 1] == ',')
		snprintf(err, errlen, "option %s: '%s' ends with a comma", label, val);
	else if (strstr(val, ",,"))
		snprintf(err, errlen, "option %s: '%s' has an empty %s between two commas", label, val, item);
	else
		return 0;
	return -1;
}

/* How messages name an option: its letter when it has one ("-s"), else "--name". */
static void opt_label(const struct ntp_optdef *d, char *buf, size_t len)
{
	if (d->letter)
		snprintf(buf, len, "-%c", d->letter);
	else
		snprintf(buf, len, "--%s", d->name);
}

static int set_value(const struct ntp_optset *sets, size_t n_sets, size_t si, const struct ntp_optdef *d,
		     void *base, const char *val, ntp_opt_custom_fn custom, void *ctx, char *err, size_t errlen)
{
	char *field = (char *)base + d->off, label[64], e[NTP_OPT_ERR_LEN];
	unsigned u, n;
	int rc = 0;

	opt_label(d, label, sizeof(label));
	e[0] = '\0';
	if (d->list && ntp_opt_list_check(label, val, d->list, err, errlen))
		return -1;
	switch (d->type) {
	case NTP_OT_FLAG:
		*(int *)field = 1;
		return 0;
	case NTP_OT_BOOL:
		*(bool *)field = true;
		return 0;
	case NTP_OT_CHOICE:
		if (*(int *)field && *(int *)field != (int)d->lo) {
			/* the other choice given before: name it */
			for (size_t s = 0; s < n_sets; s++)
				for (const struct ntp_optdef *o = sets[s].defs; s == si && (o->name || o->letter); o++)
					if (o->type == NTP_OT_CHOICE && o->off == d->off && (int)o->lo == *(int *)field) {
						char other[64];

						opt_label(o, other, sizeof(other));
						snprintf(err, errlen, "%s and %s exclude each other", other, label);
						return -1;
					}
			snprintf(err, errlen, "%s: another choice was given", label);
			return -1;
		}
		*(int *)field = (int)d->lo;
		return 0;
	case NTP_OT_U32:
		rc = ntp_opt_u32(label, val, (unsigned)d->lo, (unsigned)d->hi, &u, e);
		if (!rc)
			*(unsigned *)field = u;
		break;
	case NTP_OT_DOUBLE:
		rc = ntp_opt_double(label, val, d->lo, d->hi, (double *)field, e);
		break;
	case NTP_OT_STRING:
		*(const char **)field = val;
		return 0;
	case NTP_OT_CHARS:
		if (strlen(val) >= (size_t)d->hi) {
			snprintf(err, errlen, "option %s: '%.40s...' is longer than %u characters", label, val,
				 (unsigned)d->hi - 1);
			return -1;
		}
		snprintf(field, (size_t)d->hi, "%s", val);
		return 0;
	case NTP_OT_ROLE:
		rc = ntp_opt_role(label, val, (uint8_t *)field, e);
		break;
	case NTP_OT_TRANSPORT:
		rc = ntp_opt_transport(label, val, (uint8_t *)field, e);
		break;
	case NTP_OT_IO_TYPE:
		rc = ntp_opt_io_type(label, val, (int *)field, e);
		break;
	case NTP_OT_SESSION:
		rc = ntp_opt_session(label, val, field, e);
		break;
	case NTP_OT_SIZES:
		if (ntp_opt_list_check(label, val, "size", err, errlen))
			return -1;
		n = (unsigned)*(int *)((char *)base + d->off2);
		rc = ntp_opt_sizes(label, val, (uint32_t *)field, NTP_MAX_SIZES, &n, e);
		*(int *)((char *)base + d->off2) = (int)n;
		break;
	case NTP_OT_CUSTOM:
		if (!custom) {
			snprintf(err, errlen, "%s: not handled", label);
			return -1;
		}
		return custom(ctx, d->key, val, err, errlen);
	}
	if (rc)
		snprintf(err, errlen, "%s", e);
	return rc ? -1 : 0;
}

int ntp_options_parse(int argc, char **argv, const struct ntp_optset *sets, void *const *bases, size_t n_sets,
		      ntp_opt_custom_fn custom, void *ctx, const char *hint, char *err, size_t errlen)
{
	size_t total = 0, k = 0, sp = 0;
	struct option *lo;
	char *shorts;
	int ret = -1, c, prev_c = 0, prev_ind = 0;

	for (size_t s = 0; s < n_sets; s++)
		for (const struct ntp_optdef *d = sets[s].defs; d->name || d->letter; d++)
			total++;
	lo = calloc(total + 1, sizeof(*lo));
	shorts = calloc(2 * total + 2, 1);
	if (!lo || !shorts) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	shorts[sp++] = ':';
	/* getopt's value for an entry: 256 + its index across the sets */
	for (size_t s = 0, i = 0; s < n_sets; s++)
		for (const struct ntp_optdef *d = sets[s].defs; d->name || d->letter; d++, i++) {
			if (d->name)
				lo[k++] = (struct option){ d->name, d->arg ? required_argument : no_argument, NULL,
							   256 + (int)i };
			if (d->letter) {
				shorts[sp++] = d->letter;
				if (d->arg)
					shorts[sp++] = ':';
			}
		}
	/* 0, not 1: getopt starts over, its place inside a cluster too (a
	 * parse that stopped at "-h=1" left the "1" to read next) */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct ntp_optdef *hit = NULL;
		size_t hit_set = 0, i = 0;

		if (c == ':') {
			/* a letter by its letter ("-dj": -j), a long option by its word */
			if (optopt > 0 && optopt < 256)
				snprintf(err, errlen, "option -%c needs a value", optopt);
			else
				snprintf(err, errlen, "option %s needs a value", argv[optind - 1]);
			goto out;
		}
		/* "--detail=1": getopt says '?' with the entry's value in optopt */
		if (c == '?' && optopt >= 256 && (size_t)(optopt - 256) < total) {
			snprintf(err, errlen, "option %.*s takes no value", (int)strcspn(argv[optind - 1], "="),
				 argv[optind - 1]);
			goto out;
		}
		for (size_t s = 0; s < n_sets && !hit; s++)
			for (const struct ntp_optdef *d = sets[s].defs; d->name || d->letter; d++, i++)
				if (c == 256 + (int)i || (c < 256 && c != '?' && d->letter == c)) {
					hit = d;
					hit_set = s;
					break;
				}
		/* a short option: optopt names it (argv[optind - 1] is another
		 * word when it was inside a cluster, "-dZ", "-h=1") */
		if (!hit && c == '?' && optopt > 0 && optopt < 256) {
			/* "-h=1": a letter's '=' (a letter that takes a value
			 * takes "=1" as it). The letter is the one getopt gave
			 * just before in the same word: while a cluster goes on,
			 * getopt leaves optind on its word (prev_ind) */
			const char *w = prev_c && prev_ind < argc ? argv[prev_ind] : NULL;
			const char *eq = w && w[0] == '-' && w[1] != '-' ? strchr(w, '=') : NULL;

			if (optopt == '=' && eq && eq - w >= 2 && eq[-1] == prev_c)
				snprintf(err, errlen, "option -%c takes no value", prev_c);
			else
				snprintf(err, errlen, "unknown option '-%c'%s", optopt, hint ? hint : "");
			goto out;
		}
		if (!hit) {
			snprintf(err, errlen, "unknown option '%s'%s", argv[optind - 1], hint ? hint : "");
			goto out;
		}
		/* "-j=out.json": getopt hands "=out.json" to -j, which would
		 * write a file of that name; '=' belongs to long options */
		if (c < 256 && hit->arg && optarg && optarg[0] == '=' && optarg != argv[optind - 1]) {
			snprintf(err, errlen, "option -%c: a value is given after a space (-%c %s), not after '='",
				 c, c, optarg + 1);
			goto out;
		}
		if (set_value(sets, n_sets, hit_set, hit, bases[hit_set], optarg, custom, ctx, err, errlen))
			goto out;
		prev_c = c < 256 ? c : 0;
		prev_ind = optind;
	}
	ret = optind;
out:
	free(lo);
	free(shorts);
	return ret;
}

/* The table's entry of a long option as getopt_long takes it: the whole
 * name, or an abbreviation of one name only; NULL when none. */
static const struct ntp_optdef *find_long(const struct ntp_optset *sets, size_t n_sets, const char *w, size_t len)
{
	const struct ntp_optdef *got = NULL;
	int n = 0;

	for (size_t s = 0; s < n_sets; s++)
		for (const struct ntp_optdef *d = sets[s].defs; d->name || d->letter; d++) {
			if (!d->name || strncmp(d->name, w, len))
				continue;
			if (!d->name[len])
				return d;
			got = d;
			n++;
		}
	return n == 1 ? got : NULL;
}

static const struct ntp_optdef *find_letter(const struct ntp_optset *sets, size_t n_sets, char c)
{
	for (size_t s = 0; s < n_sets; s++)
		for (const struct ntp_optdef *d = sets[s].defs; d->name || d->letter; d++)
			if (d->letter == c)
				return d;
	return NULL;
}

bool ntp_options_json_stdout(int argc, char **argv, const struct ntp_optset *sets, size_t n_sets)
{
	const struct ntp_optdef *j = find_long(sets, n_sets, "json", 4), *d;
	/* glibc's getopt permutes (reads options past an operand) unless
	 * POSIXLY_CORRECT is set (the option strings built here never start
	 * with '+'): then the first operand ends the options */
	bool yes = false, posix = getenv("POSIXLY_CORRECT") != NULL;

	if (!j)
		j = find_letter(sets, n_sets, 'j');	/* record's -j has no long name */
	if (!j || !j->arg)
		return false;
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i], *v = NULL;

		if (!strcmp(w, "--"))
			break;
		if (w[0] != '-' || !w[1]) {
			if (posix)
				break;
			continue;	/* an operand: getopt reads on past it */
		}
		d = NULL;
		if (w[1] == '-') {
			const char *eq = strchr(w + 2, '=');

			d = find_long(sets, n_sets, w + 2, eq ? (size_t)(eq - (w + 2)) : strlen(w + 2));
			if (!d || !d->arg)
				continue;
			v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
		} else {
			/* a cluster: letters until one that takes a value, the
			 * rest of the word or the next word its value */
			for (const char *p = w + 1; *p && (d = find_letter(sets, n_sets, *p)); p++)
				if (d->arg) {
					v = p[1] ? p + 1 : i + 1 < argc ? argv[++i] : NULL;
					break;
				}
		}
		if (d == j)
			yes = v && !strcmp(v, "-");	/* the last -j is the one taken */
	}
	return yes;
}

void ntp_options_help(FILE *f, const struct ntp_optset *sets, size_t n_sets)
{
	for (size_t s = 0; s < n_sets; s++) {
		if (sets[s].title)
			fprintf(f, "%s\n", sets[s].title);
		for (const struct ntp_optdef *d = sets[s].defs; d->name || d->letter; d++) {
			char left[96];
			const char *h = d->help, *nl;
			const char *sp = d->arg ? " " : "", *arg = d->arg ? d->arg : "";
			int w;

			if (d->letter && d->name)
				w = snprintf(left, sizeof(left), "  -%c, --%s%s%s", d->letter, d->name, sp, arg);
			else if (d->letter)
				w = snprintf(left, sizeof(left), "  -%c%s%s", d->letter, sp, arg);
			else
				w = snprintf(left, sizeof(left), "      --%s%s%s", d->name, sp, arg);
			fprintf(f, "%s", left);
			for (int first = 1; h && *h; first = 0) {
				nl = strchr(h, '\n');
				if (first && w >= 31)
					fprintf(f, "\n%32s", "");
				else if (first)
					fprintf(f, "%*s", 32 - w, "");
				else
					fprintf(f, "%32s", "");
				fprintf(f, "%.*s\n", nl ? (int)(nl - h) : (int)strlen(h), h);
				h = nl ? nl + 1 : h + strlen(h);
			}
			if (!d->help || !*d->help)
				fputc('\n', f);
		}
	}
}
