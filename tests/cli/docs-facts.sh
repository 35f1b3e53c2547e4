#!/usr/bin/env bash
# What the man pages and docs/ say of the programs is what they do: the exit
# statuses of ntprof(8) and ntprof-top(8) (each page has an EXIT STATUS
# section, and the codes the programs return on an option error and on no
# command are the ones it lists), and the records per block the writer packs
# (src/core/store/ntpfile.h) in docs/failures.md and docs/ntp-format.md.
# Environment: NTPROF, NTPROF_TOP.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-build/ntprof}
NTPROF_TOP=${NTPROF_TOP:-build/ntprof-top}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
case $NTPROF_TOP in /*) ;; *) NTPROF_TOP=$root/$NTPROF_TOP ;; esac
tmp=$(mktemp -d /tmp/ntprof-docfacts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}

tools/gen-docs.sh "$NTPROF" "$NTPROF_TOP" "$tmp" || { echo "  FAIL tools/gen-docs.sh"; exit 1; }
# a page's EXIT STATUS section, one code a line: "CODE text..."
exits() { awk '/^\.SH / { on = ($0 == ".SH EXIT STATUS") ; next }
	on && /^\.B [0-9]+$/ { if (s != "") print s; s = $2; next }
	on && !/^\./ { s = s " " $0 } END { if (s != "") print s }' "$1" | sed 's/\\-/-/g; s/\\f[BIR]//g'; }
# the code a command exits with
rc() { "$@" >/dev/null 2>&1; echo $?; }

exits "$tmp/man/ntprof.8" >"$tmp/ntprof.exits"
exits "$tmp/man/ntprof-top.8" >"$tmp/top.exits"
c=$(rc "$NTPROF")
check ntprof-no-command "$(grep -q "^$c when no command is given" "$tmp/ntprof.exits"; echo $?)" \
	"exits $c; the page: $(cat "$tmp/ntprof.exits")"
for args in "report --frobnicate" "generate -o $tmp/x.ntp --qd 0" "frobnicate" "record -s 0"; do
	# shellcheck disable=SC2086
	c=$(rc "$NTPROF" $args)
	check "ntprof $args" "$(grep -q "^$c .*option" "$tmp/ntprof.exits"; echo $?)" \
		"exits $c; the page: $(cat "$tmp/ntprof.exits")"
done
for args in "--frobnicate" "-n 0 -b" "--width 10 -b" "--json" "-n 3"; do
	# shellcheck disable=SC2086
	c=$(rc "$NTPROF_TOP" $args)
	check "ntprof-top $args" "$(grep -q "^$c .*option" "$tmp/top.exits"; echo $?)" \
		"exits $c; the page: $(cat "$tmp/top.exits")"
done
c=$(rc "$NTPROF_TOP" -b --replay "$tmp/none.ntp")
check "ntprof-top missing replay" "$(grep -q "^$c .*a recording cannot be read" "$tmp/top.exits"; echo $?)" \
	"exits $c; the page: $(cat "$tmp/top.exits")"

# records per block: the writer's constant, as both documents say it
n=$(sed -n 's/^#define NTP_BLOCK_RECORDS[[:space:]]*\([0-9]*\).*/\1/p' src/core/store/ntpfile.h)
check block-failures "$(grep -q "written in blocks of up to $n records" docs/failures.md; echo $?)" \
	"ntpfile.h packs $n; failures.md: $(grep -o 'blocks of up to [0-9]* records' docs/failures.md)"
check block-format "$(grep -q "The writer packs at most" docs/ntp-format.md &&
	tr '\n' ' ' <docs/ntp-format.md | grep -q "The writer packs at most $n records"; echo $?)" \
	"ntpfile.h packs $n; ntp-format.md: $(tr '\n' ' ' <docs/ntp-format.md | grep -o 'The writer packs at most [0-9]* records')"
exit $fail
