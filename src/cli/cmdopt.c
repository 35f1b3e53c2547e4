// SPDX-License-Identifier: GPL-2.0
/* cmdopt.c - ntprof's subcommands parse and print their options from the
 * tables of options_tables.c (options.h). */
#include <stdio.h>
#include "cli.h"
#include "options.h"

int ntp_cmd_parse(const char *cmd, int argc, char **argv, void *const *bases)
{
	const struct ntp_optcmd *oc = ntp_optcmd_find("ntprof", cmd);
	char err[512], hint[64];
	int first;

	if (!oc)
		return ntp_err("%s: no option table", cmd), -1;
	snprintf(hint, sizeof(hint), " (ntprof %s --help)", cmd);
	/* -j -: every error, of the options too, is JSON on stdout */
	if (ntp_options_json_stdout(argc, argv, oc->sets, oc->n_sets))
		ntp_json_errors = true;
	first = ntp_options_parse(argc, argv, oc->sets, bases, oc->n_sets, NULL, NULL, hint, err, sizeof(err));
	if (first < 0)
		ntp_err("%s", err);
	return first;
}

void ntp_cmd_help(FILE *f, const char *cmd)
{
	const struct ntp_optcmd *oc = ntp_optcmd_find("ntprof", cmd);

	if (oc)
		ntp_options_help(f, oc->sets, oc->n_sets);
}
