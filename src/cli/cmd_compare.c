// SPDX-License-Identifier: GPL-2.0
/* PLACEHOLDER until its owner lands it: replaced by the real subcommand. */
#include "cli.h"

int cmd_compare(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return ntp_err("'compare' is not built yet");
}
