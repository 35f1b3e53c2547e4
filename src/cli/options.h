/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.h - command-line options as data. Each command's options are
 * tables of struct ntp_optdef (name, letter, argument, help, how the value is
 * parsed and which field it fills); one parser walks them (getopt_long
 * underneath), one printer makes --help from them, and the man pages and
 * the shell completion are made from that --help at build time
 * (tools/gen-docs.sh, docs/building.md); ntp_optcmds[] lists every table
 * (docs/options.md).
 *
 * The collector's options (what to record and how to hook) are one table,
 * ntp_capture_optdefs, shared by `ntprof record` and ntprof-top: the same
 * option takes the same values and fails with the same words in both.
 * Adding a collector option is one field in struct ntp_collector_opts
 * (collector.h) and one entry in that table.
 *
 * Linked into both programs (ntprof-top links src/cli/options*.c too).
 */
#ifndef NTP_CLI_OPTIONS_H
#define NTP_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "collector/collector.h"

enum ntp_opt_type {
	NTP_OT_FLAG,		/* int field = 1 */
	NTP_OT_BOOL,		/* bool field = true */
	NTP_OT_CHOICE,		/* int field = lo; another choice of the same field given: refused */
	NTP_OT_U32,		/* unsigned, lo..hi */
	NTP_OT_DOUBLE,		/* double, lo..hi */
	NTP_OT_STRING,		/* const char * (the argv string) */
	NTP_OT_CHARS,		/* char[hi]: the string copied, refused when longer */
	NTP_OT_ROLE,		/* uint8_t: host|target|both */
	NTP_OT_TRANSPORT,	/* uint8_t: tcp|rdma */
	NTP_OT_IO_TYPE,		/* int: read|write */
	NTP_OT_SESSION,		/* char[NTP_DEV_LEN]: nvmeXnY */
	NTP_OT_SIZES,		/* uint32_t[NTP_MAX_SIZES] at off, its int count at off2 */
	NTP_OT_CUSTOM,		/* the command handles it (key) */
};

struct ntp_optdef {
	const char *name;	/* long name without "--", or NULL (letter only) */
	char letter;		/* short option, or 0 */
	const char *arg;	/* the argument's name in --help, NULL: takes none */
	const char *help;	/* --help text; "\n" continues on an indented line */
	enum ntp_opt_type type;
	size_t off;		/* the field, in the struct of the table's set */
	double lo, hi;		/* range (U32, DOUBLE); CHOICE: the value */
	size_t off2;		/* SIZES: the count */
	const char *values;	/* the words the argument takes, for completion ("host target both"),
				 * or "FILE" / "DIR" for a path; NULL: free */
	int key;		/* CUSTOM: passed to the command's handler */
	const char *list;	/* STRING, CUSTOM: the value is a comma-separated list of
				 * these ("queue depth"), without an empty item
				 * (ntp_opt_list_check()); NULL: not a list */
};
#define NTP_OPTDEF_END { 0 }

/* One table and where its fields are. */
struct ntp_optset {
	const char *title;	/* --help section ("what to record:"), or NULL */
	const struct ntp_optdef *defs;
};

/* What `ntprof record` and ntprof-top share: the collector's options and -i. */
struct ntp_capture_opts {
	struct ntp_collector_opts co;
	double interval_s;	/* -i */
};
extern const struct ntp_optdef ntp_side_optdefs[];	/* -r, -t (probe too) */
extern const struct ntp_optdef ntp_capture_optdefs[];	/* which commands, -i */
extern const struct ntp_optdef ntp_hook_optdefs[];	/* how to hook (probe too) */
/* Defaults: host, tcp, -s 1000, -i 1, every I/O type, --attach-timeout 10. */
void ntp_capture_defaults(struct ntp_capture_opts *c);

/* The errors of the capture options that need no kernel, for `ntprof
 * record` (and a live ntprof-top) right after parsing, so that they come
 * before any kernel check: --session and --target-session
 * (ntp_session_opts_check(), collector/session.h) and a --btf FILE that
 * cannot be read. 0, or -1 with a one-line reason naming the option. */
int ntp_capture_check(const struct ntp_capture_opts *c, char *err, size_t errlen);

/* Every command's option tables, for generators (man pages, completion). */
struct ntp_optcmd {
	const char *prog;	/* "ntprof", "ntprof-top" */
	const char *cmd;	/* subcommand, or NULL */
	const char *synopsis;	/* "ntprof record [options]" */
	const char *summary;	/* one line */
	const struct ntp_optset *sets;
	size_t n_sets;
};
extern const struct ntp_optcmd ntp_optcmds[];
extern const size_t ntp_n_optcmds;
extern const struct ntp_optset ntp_record_optsets[];
extern const struct ntp_optset ntp_top_optsets[];
/* The entry of prog's subcommand cmd (NULL for the program itself), or NULL. */
const struct ntp_optcmd *ntp_optcmd_find(const char *prog, const char *cmd);

/* A command's handler for CUSTOM entries: 0, or -1 with the message in err. */
typedef int (*ntp_opt_custom_fn)(void *ctx, int key, const char *val, char *err, size_t errlen);

/*
 * Parses argv with the sets; bases[i] is the struct set i's offsets are in.
 * Returns the index of the first operand (argc when none), or -1 with a
 * one-line message in err (the value's own, "option X needs a value",
 * "unknown option 'X'" + hint).
 */
int ntp_options_parse(int argc, char **argv, const struct ntp_optset *sets, void *const *bases, size_t n_sets,
		      ntp_opt_custom_fn custom, void *ctx, const char *hint, char *err, size_t errlen);
/* Whether argv gives the sets' --json (-j) the value "-", read as
 * ntp_options_parse() would read it, in full, before parsing: an option
 * error met before or after that -j is then JSON on stdout too
 * (docs/json-schema.md). */
bool ntp_options_json_stdout(int argc, char **argv, const struct ntp_optset *sets, size_t n_sets);
/* ntprof's subcommands (cmdopt.c, not in ntprof-top): parse with the
 * command's sets (ntp_optcmd_find("ntprof", cmd)), errors printed with
 * ntp_err(): the first operand's index, or -1; and the sets as --help. */
int ntp_cmd_parse(const char *cmd, int argc, char **argv, void *const *bases);
void ntp_cmd_help(FILE *f, const char *cmd);

/* A comma-separated list value (of sizes, of queue depths...) without an
 * empty item (",4K", "4K,", "4K,,8K"): 0, or -1 with "option LABEL: ..."
 * in err; item names what the list holds ("size"). */
int ntp_opt_list_check(const char *label, const char *val, const char *item, char *err, size_t errlen);

/* The sets as --help lines ("  -s, --long ARG   help"). */
void ntp_options_help(FILE *f, const struct ntp_optset *sets, size_t n_sets);


/* ---- the commands' own option structs (the tables are in options_tables.c) ---- */
/* report, compare, dump, btf, probe: what they take besides files */
struct ntp_cmd_opts {
	int detail;		/* report -d */
	const char *json;	/* report, compare -j FILE */
	const char *out;	/* btf -o OUT */
	int help;		/* -h */
	/* report --what-if-* (docs/what-if.md) */
	const char *wi_qd;	/* --what-if-qd N[,N...] */
	const char *wi_fit;	/* --what-if-fit FILE[@QD][,FILE[@QD]...] */
	const char *wi_servers;	/* --what-if-servers STAGE=N|delay[,...] */
	unsigned wi_tags;	/* --what-if-tags N */
	unsigned wi_qd_was;	/* --what-if-qd-was N */
	int header;		/* dump --header */
};

struct ntp_record_opts {
	unsigned duration;	/* -d SEC, 0: until Ctrl-C */
	int offline;		/* --offline */
	const char *out;	/* -o FILE */
	const char *json;	/* -j FILE */
	const char *metrics;	/* --metrics FILE */
	int help;		/* -h */
};

#endif
