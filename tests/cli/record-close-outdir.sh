#!/usr/bin/env bash
# `ntprof record -o`/`-j`: the output directory's check (before the kernel
# is looked at) when faccessat answers EPERM, as an older container's
# seccomp profile does for faccessat2 (src/cli/cmd_record.c, dir_writable):
# a writable directory is still accepted, a missing one still refused with
# ENOENT, and, as a user other than root, one that user cannot write still
# refused with EACCES. An LD_PRELOAD shim gives the EPERM.
# Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$PWD/$NTPROF ;; esac
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "  skip: no C compiler for the shim"; exit 77; }
tmp=$(mktemp -d /tmp/ntprof-outdir.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

cat >"$tmp/shim.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
int faccessat(int dirfd, const char *path, int mode, int flags)
{
	(void)dirfd; (void)path; (void)mode; (void)flags;
	errno = EPERM;
	return -1;
}
C
"$CC" -shared -fPIC -o "$tmp/shim.so" "$tmp/shim.c" || { echo "  skip: the shim does not build"; exit 77; }
# the sanitized build's runtime comes first otherwise
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
shimmed() { LD_PRELOAD="$tmp/shim.so" "$@"; }

# the shim works: without the fallback -o into a writable directory would be refused with it
cat >"$tmp/probe.c" <<'C'
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
int main(void) { return faccessat(AT_FDCWD, ".", W_OK, AT_EACCESS) == -1 && errno == EPERM ? 0 : 1; }
C
if ! "$CC" -o "$tmp/probe" "$tmp/probe.c" || ! shimmed "$tmp/probe"; then
	echo "  skip: LD_PRELOAD does not reach faccessat here"; exit 77
fi

mkdir "$tmp/ok"
for opt in -o -j; do
	shimmed "$NTPROF" record "$opt" "$tmp/ok/r.out" -d 1 >"$tmp/out" 2>"$tmp/err" </dev/null
	if grep -qE "^ntprof: $opt " "$tmp/err"; then
		echo "  FAIL $opt into a writable directory refused: $(head -2 "$tmp/err")"; fail=1
	else
		echo "  ok   $opt into a writable directory accepted"
	fi
	shimmed "$NTPROF" record "$opt" "$tmp/none/r.out" -d 1 >"$tmp/out" 2>"$tmp/err" </dev/null
	if grep -qx "ntprof: $opt $tmp/none/r.out: cannot create a file in $tmp/none: No such file or directory" "$tmp/err"
	then
		echo "  ok   $opt into a missing directory refused"
	else
		echo "  FAIL $opt into a missing directory: $(head -2 "$tmp/err")"; fail=1
	fi
done

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$tmp"
	mkdir -m 555 "$tmp/ro"
	chmod 755 "$tmp/shim.so"
	LD_PRELOAD="$tmp/shim.so" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$NTPROF" record -o "$tmp/ro/r.ntp" -d 1 >"$tmp/out" 2>"$tmp/err" </dev/null
	if grep -qx "ntprof: -o $tmp/ro/r.ntp: cannot create a file in $tmp/ro: Permission denied" "$tmp/err"; then
		echo "  ok   nobody -o into a directory it cannot write refused"
	else
		echo "  FAIL nobody -o into a directory it cannot write: $(head -2 "$tmp/err")"; fail=1
	fi
else
	echo "  skip the case as another user (not root, or no setpriv)"
fi
exit $fail
