// SPDX-License-Identifier: GPL-2.0
/*
 * kmod.c - a module's state from sysfs and modules.builtin.
 *
 * /sys/module/<name>/initstate exists for a loadable module once loaded and
 * never for a built-in one (kernel/module/sysfs.c adds it with the module;
 * built-ins get only what kernel/params.c gives them). /sys/module/<name>
 * exists for a built-in module only when it has parameters or a version,
 * so modules.builtin (written by kbuild, installed with the kernel under
 * /lib/modules/<release>/) is read when it is absent.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "kmod.h"

static bool exists(const char *root, const char *fmt, const char *a, const char *b)
{
	char rel[300], p[600];
	struct stat st;

	snprintf(rel, sizeof(rel), fmt, a, b);
	snprintf(p, sizeof(p), "%s%s", root, rel);
	return stat(p, &st) == 0;
}

/* a and b the same module name, '-' and '_' alike (kbuild's file names
 * keep '-', the module's name has '_') */
static bool same_name(const char *a, size_t la, const char *b)
{
	if (la != strlen(b))
		return false;
	for (size_t i = 0; i < la; i++)
		if (a[i] != b[i] && !(strchr("-_", a[i]) && strchr("-_", b[i])))
			return false;
	return true;
}

/* Does modules.builtin list mod? Its lines: kernel/drivers/.../ib_core.ko */
static bool listed_builtin(const char *root, const char *release, const char *mod)
{
	char p[600], line[512];
	bool found = false;
	FILE *f;

	snprintf(p, sizeof(p), "%s/lib/modules/%s/modules.builtin", root, release);
	f = fopen(p, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *base = strrchr(line, '/'), *dot;

		base = base ? base + 1 : line;
		dot = strstr(base, ".ko");
		found = dot && same_name(base, (size_t)(dot - base), mod);
	}
	fclose(f);
	return found;
}

/* modules.builtin of the running system, read once per release and module:
 * what is built into a kernel does not change (a module loaded later is
 * seen by initstate, checked first on every call) */
static bool builtin_cached(const char *release, const char *mod)
{
	static struct {
		char release[65], mod[64];
		bool builtin;
	} cache[16];
	static size_t n;
	bool b;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(cache[i].release, release) && !strcmp(cache[i].mod, mod))
			return cache[i].builtin;
	b = listed_builtin("", release, mod);
	if (n < sizeof(cache) / sizeof(cache[0]) && strlen(release) < sizeof(cache[0].release) &&
	    strlen(mod) < sizeof(cache[0].mod)) {
		snprintf(cache[n].release, sizeof(cache[n].release), "%s", release);
		snprintf(cache[n].mod, sizeof(cache[n].mod), "%s", mod);
		cache[n++].builtin = b;
	}
	return b;
}

enum ntp_kmod ntp_kmod_state(const char *root, const char *release, const char *mod)
{
	char name[64];

	root = root ? root : "";
	/* sysfs names the module with '_' */
	snprintf(name, sizeof(name), "%s", mod);
	for (char *c = name; *c; c++)
		if (*c == '-')
			*c = '_';
	if (exists(root, "/sys/module/%s/initstate%s", name, ""))
		return NTP_KMOD_LOADED;
	if (exists(root, "/sys/module/%s%s", name, "") ||
	    (root[0] ? listed_builtin(root, release, name) : builtin_cached(release, name)))
		return NTP_KMOD_BUILTIN;
	return NTP_KMOD_ABSENT;
}

bool ntp_module_builtin(const char *mod)
{
	struct utsname u;

	return uname(&u) == 0 && ntp_kmod_state(NULL, u.release, mod) == NTP_KMOD_BUILTIN;
}
