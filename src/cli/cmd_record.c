// SPDX-License-Identifier: GPL-2.0
/* PLACEHOLDER until its owner lands it: replaced by the real subcommand. */
#include "cli.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return ntp_err("'record' is not built yet");
}
