// SPDX-License-Identifier: GPL-2.0
/* session.c - the target side of --session / --target-session (see session.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session.h"

/* The first line of a sysfs/configfs file, without its newline: 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int e;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		e = ferror(f) ? -EIO : -ENODATA;
		fclose(f);
		return e;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "NQN:NSID": the NQN holds colons itself, the NSID is after the last one. */
static int parse_target_session(const char *s, char *nqn, size_t len, unsigned *nsid)
{
	const char *c = strrchr(s, ':');
	char *end;
	unsigned long v;

	if (!c || c == s || (size_t)(c - s) >= len)
		return -1;
	v = strtoul(c + 1, &end, 10);
	if (!c[1] || *end || v == 0 || v > 0xfffffffeul)
		return -1;
	memcpy(nqn, s, (size_t)(c - s));
	nqn[c - s] = '\0';
	*nsid = (unsigned)v;
	return 0;
}

static void bad_target_session(const char *ts, char *err, size_t errlen)
{
	snprintf(err, errlen, "option --target-session: '%s' is not NQN:NSID "
		 "(such as nqn.2014-08.org.example:disk1:1)", ts);
}

static void session_on_target(const char *session, char *err, size_t errlen)
{
	snprintf(err, errlen, "--session %s names a host's namespace; with -r target name the "
		 "target's subsystem and namespace: --target-session NQN:NSID", session);
}

int ntp_session_opts_check(const struct ntp_collector_opts *o, char *err, size_t errlen)
{
	char nqn[256];
	unsigned nsid;

	if (o->session[0] && o->role == NTP_ROLE_TARGET) {
		session_on_target(o->session, err, errlen);
		return -1;
	}
	if (!o->target_session[0])
		return 0;
	if (parse_target_session(o->target_session, nqn, sizeof(nqn), &nsid)) {
		bad_target_session(o->target_session, err, errlen);
		return -1;
	}
	if (o->role == NTP_ROLE_HOST) {
		snprintf(err, errlen, "option --target-session: -r host records no target side "
			 "(the target's namespace is followed with -r target or -r both)");
		return -1;
	}
	if (o->spdk_target) {
		snprintf(err, errlen, "option --target-session names an nvmet namespace; an SPDK target "
			 "(--spdk-target) has none");
		return -1;
	}
	return 0;
}

int ntp_target_session_dev(const struct ntp_collector_opts *o, const char *root, char *dev,
			   char *err, size_t errlen)
{
	char nqn[256], path[768], val[512];
	const char *p;
	unsigned nsid;

	memset(dev, 0, NTP_DEV_LEN);
	/* an SPDK target (--spdk-target) has no nvmet namespace to follow */
	if (o->role == NTP_ROLE_HOST || o->spdk_target)
		return 0;
	if (o->target_session[0]) {
		if (parse_target_session(o->target_session, nqn, sizeof(nqn), &nsid)) {
			bad_target_session(o->target_session, err, errlen);
			return -1;
		}
	} else if (!o->session[0]) {
		return 0;
	} else if (o->role == NTP_ROLE_TARGET) {
		session_on_target(o->session, err, errlen);
		return -1;
	} else {
		/* -r both: the host's namespace tells its subsystem and NSID */
		snprintf(path, sizeof(path), "%s/sys/block/%s/device/subsysnqn", root, o->session);
		if (read_line(path, nqn, sizeof(nqn)) || !nqn[0]) {
			snprintf(err, errlen, "--session %s: its subsystem is unknown (%s): name the target's "
				 "with --target-session NQN:NSID", o->session, path);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/sys/block/%s/nsid", root, o->session);
		if (read_line(path, val, sizeof(val)) || sscanf(val, "%u", &nsid) != 1) {
			snprintf(err, errlen, "--session %s: its namespace id is unknown (%s): name the target's "
				 "with --target-session NQN:NSID", o->session, path);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "%s/sys/kernel/config/nvmet/subsystems/%s/namespaces/%u/device_path",
		 root, nqn, nsid);
	if (read_line(path, val, sizeof(val)) || !val[0]) {
		snprintf(err, errlen, "%s%s: no namespace %u of subsystem %s in this machine's nvmet (%s)",
			 o->target_session[0] ? "--target-session " : "--session ",
			 o->target_session[0] ? o->target_session : o->session, nsid, nqn, path);
		return -1;
	}
	/* the target hooks' name of it (target_dev() in bpf/ntprof.bpf.c) */
	p = strncmp(val, "/dev/", 5) ? val : val + 5;
	memcpy(dev, p, strnlen(p, NTP_DEV_LEN - 1));	/* zero-padded: compared as words */
	return 1;
}
