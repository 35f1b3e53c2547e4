#!/usr/bin/env bash
# `ntprof record`: option errors that need no kernel come first, before the
# collector looks at the kernel (which on this machine fails: no NVMe
# modules, or no root), as one line naming the option: --session with
# -r target, a malformed --target-session or one nothing can follow, -o and
# -j into a missing directory, a --btf FILE that cannot be read. An existing
# device or FIFO (written in place) needs no directory it may write in, for
# a user other than root too (run as nobody when this runs as root).
# Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$PWD/$NTPROF ;; esac
tmp=$(mktemp -d /tmp/ntprof-recopt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect NAME PATTERN args...: exit non-zero, one line on stderr matching PATTERN, nothing on stdout
expect() {
	local name=$1 pat=$2 rc=0
	shift 2
	"$NTPROF" record "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ $rc = 0 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -qE -- "$pat" "$tmp/err"; then
		echo "  FAIL $name (exit $rc): $(head -3 "$tmp/err")"
		fail=1
	else
		echo "  ok   $name"
	fi
}

expect session-target '^ntprof: --session nvme0n1 names a host.s namespace; .*--target-session NQN:NSID$' \
	-r target --session nvme0n1 -d 1
expect session-target-both-given '^ntprof: --session nvme0n1 names a host.s namespace' \
	-r target --session nvme0n1 --target-session nqn.2014-08.org.example:disk1:1 -d 1
expect target-session-syntax "^ntprof: option --target-session: 'bad' is not NQN:NSID" -r target --target-session bad
expect target-session-nsid0 "^ntprof: option --target-session: 'nqn.x:0' is not NQN:NSID" -r both --target-session nqn.x:0
expect target-session-host '^ntprof: option --target-session: -r host records no target side' \
	--target-session nqn.2014-08.org.example:disk1:1
expect target-session-spdk '^ntprof: option --target-session names an nvmet namespace; an SPDK target' \
	-r both --spdk-target /bin/true --target-session nqn.2014-08.org.example:disk1:1
expect out-nodir "^ntprof: -o $tmp/nodir/x.ntp: cannot create a file in $tmp/nodir: No such file or directory$" \
	-o "$tmp/nodir/x.ntp"
touch "$tmp/file"
expect out-notdir "^ntprof: -o $tmp/file/x.ntp: cannot create a file in $tmp/file: Not a directory$" -o "$tmp/file/x.ntp"
expect json-nodir "^ntprof: -j $tmp/nodir/r.json: cannot create a file in $tmp/nodir: No such file or directory$" \
	-j "$tmp/nodir/r.json"
expect btf-missing "^ntprof: option --btf: $tmp/none.btf: No such file or directory$" --btf "$tmp/none.btf"
expect btf-dir "^ntprof: option --btf: $tmp: is a directory, not a BTF file$" --btf "$tmp"
[ ! -e "$tmp/nodir" ] || { echo "  FAIL a directory was created"; fail=1; }

# accepted: what stops these is the kernel (modules, hooks) or root, not an option
for args in "-r target --target-session nqn.2014-08.org.example:disk1:1" "-o $tmp/r.ntp -j $tmp/r.json" \
	    "-o r.ntp" "--btf $tmp/file"; do
	# shellcheck disable=SC2086	# (in $tmp: "-o r.ntp" is relative)
	(cd "$tmp" && "$NTPROF" record $args -d 1 >"$tmp/out" 2>"$tmp/err")
	if grep -qE 'option|^ntprof: -[oj] ' "$tmp/err"; then
		echo "  FAIL accepted $args: $(head -2 "$tmp/err")"; fail=1
	else
		echo "  ok   accepted $args"
	fi
done

# as a user other than root (who records with CAP_BPF and CAP_PERFMON): an
# existing device or FIFO is written in place, and so is an existing
# recording (-o), in a directory that user may not write in; a new file there
# is refused, with the user's own permission
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$tmp"
	mkdir "$tmp/ro"
	mkfifo "$tmp/ro/f.fifo"
	install -m 666 /dev/null "$tmp/ro/rec.ntp"	# -o writes a recording in place
	chmod 555 "$tmp/ro"
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$NTPROF" record "$@" -d 1; }
	for args in "-o /dev/null" "-j /dev/null" "-o $tmp/ro/f.fifo" "-j $tmp/ro/f.fifo" \
		    "-o $tmp/ro/rec.ntp"; do
		# shellcheck disable=SC2086
		nobody $args >"$tmp/out" 2>"$tmp/err" </dev/null
		if grep -qE 'option|^ntprof: -[oj] ' "$tmp/err"; then
			echo "  FAIL accepted as nobody $args: $(head -2 "$tmp/err")"; fail=1
		else
			echo "  ok   accepted as nobody $args"
		fi
	done
	# /dev/stdout into a pipe
	nobody -j /dev/stdout 2>&1 </dev/null | cat >"$tmp/err"
	if grep -qE 'option|^ntprof: -[oj] ' "$tmp/err"; then
		echo "  FAIL accepted as nobody -j /dev/stdout: $(head -2 "$tmp/err")"; fail=1
	else
		echo "  ok   accepted as nobody -j /dev/stdout"
	fi
	nobody -j "$tmp/ro/r.json" >"$tmp/out" 2>"$tmp/err"
	if grep -qx "ntprof: -j $tmp/ro/r.json: cannot create a file in $tmp/ro: Permission denied" "$tmp/err"; then
		echo "  ok   nobody -j into a directory it cannot write"
	else
		echo "  FAIL nobody -j into a directory it cannot write: $(head -2 "$tmp/err")"; fail=1
	fi
	chmod 755 "$tmp/ro"
else
	echo "  skip the cases as another user (not root, or no setpriv)"
fi
exit $fail
