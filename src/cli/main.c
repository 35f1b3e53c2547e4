// SPDX-License-Identifier: GPL-2.0
/* main.c - ntprof's subcommand table (bpftool style: unique prefixes accepted). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "core/render/out.h"
#include "core/store/ntpfile.h"

struct ntp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct ntp_cmd cmds[] = {
	{ "record",   cmd_record,   "attach the hooks, sample commands, print a report, save records (-o)" },
	{ "report",   cmd_report,   "report one or more recordings, joining host and target files" },
	{ "compare",  cmd_compare,  "compare two recordings stage by stage and name the one that amplifies" },
	{ "dump",     cmd_dump,     "print a recording's records as CSV" },
	{ "probe",    cmd_probe,    "show which hooks this kernel offers and test-load them" },
	{ "generate", cmd_generate, "write a synthetic recording from a model of the path" },
	{ "btf",      cmd_btf,      "merge vmlinux and NVMe module BTF for kernels without module BTF" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ntprof COMMAND [OPTIONS]   (ntprof COMMAND --help for its options)\n"
		"       ntprof --help | --version   (-h, -V)\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\nntprof-top is the live full-screen monitor.\n");
}

/* Whatever a command printed on stdout reached it, or the exit status says
 * not (a --help or a summary into a full disk is not a success). */
static int finish(int ret)
{
	if (ntp_out_flush(stdout) && !ret) {
		ntp_json_errors = false;	/* stdout is what failed */
		ret = ntp_err("cannot write to stdout: %m");
	}
	return ret;
}

int main(int argc, char **argv)
{
	const struct ntp_cmd *hit = NULL;
	size_t len;

	/* recordings are mapped: a file truncated under us is a one-line error */
	ntp_reader_catch_sigbus("ntprof");
	/* a file size limit (ulimit -f) is a full disk: write() says EFBIG and
	 * the writer keeps what fits, instead of the signal killing us */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish(0);
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("ntprof %s\n", NTP_VERSION);
		return finish(0);
	}
	len = strlen(argv[1]);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strncmp(cmds[i].name, argv[1], len))
			continue;
		if (hit && strcmp(cmds[i].name, argv[1]))
			return ntp_err("command '%s' is ambiguous (%s, %s)", argv[1], hit->name, cmds[i].name);
		hit = &cmds[i];
		if (!strcmp(cmds[i].name, argv[1]))
			break;
	}
	if (!hit)
		return ntp_err("unknown command '%s' (ntprof --help lists them)", argv[1]);
	return finish(hit->fn(argc - 1, argv + 1));
}
