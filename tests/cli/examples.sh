#!/usr/bin/env bash
# The recordings in examples/ (real test-bed runs the README and docs/ show)
# must keep reading as the format and the reports move: every file's
# `report --detail` and its first CSV rows against golden outputs
# (tests/golden/examples/, UPDATE=1 rewrites them), every file replayed by
# ntprof-top in batch mode, and the README's example report byte for byte.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-$root/build/ntprof}
NTPROF_TOP=${NTPROF_TOP:-$root/build/ntprof-top}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
case $NTPROF_TOP in /*) ;; *) NTPROF_TOP=$root/$NTPROF_TOP ;; esac
golden=$root/tests/golden/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mkdir -p "$golden"

same() { # name, then the command
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || out+=$'\n'"exit $rc"
	if [ "${UPDATE:-0}" = 1 ]; then
		printf '%s\n' "$out" >"$golden/$name"
		echo "  updated $name"
	elif ! diff -u "$golden/$name" <(printf '%s\n' "$out") >"$tmp/diff"; then
		echo "  FAIL $name:"; head -40 "$tmp/diff"; fail=1
	else
		echo "  ok   $name"
	fi
}

n=0
for f in examples/*.ntp; do
	b=$(basename "$f" .ntp)
	n=$((n + 1))
	same "$b.report.txt" "$NTPROF" report --detail "$f"
	same "$b.dump.csv" bash -c "\"$NTPROF\" dump '$f' | head -4"
	# ntprof-top replays it to its end: exit 0, stage rows with a share
	if ! "$NTPROF_TOP" -b --speed 0 --width 100 --replay "$f" >"$tmp/top" 2>&1 ||
	   ! grep -Eq '^  (host block|network|storage) .* [0-9]+%' "$tmp/top"; then
		echo "  FAIL ntprof-top --replay $f:"; head -20 "$tmp/top"; fail=1
	else
		echo "  ok   ntprof-top --replay $f"
	fi
done
[ $n -gt 0 ] || { echo "  FAIL no examples/*.ntp"; fail=1; }

# The README shows `$ ntprof report A B` and its output in one code block.
awk '/^\$ ntprof report examples\//{on=1; print; next} on && /^```/{exit} on' README.md >"$tmp/readme"
cmd=$(head -1 "$tmp/readme" | sed 's/^\$ ntprof //')
if [ -z "$cmd" ]; then
	echo "  FAIL README.md: no \`\$ ntprof report examples/...\` block"; fail=1
else
	# shellcheck disable=SC2086
	"$NTPROF" $cmd >"$tmp/out" 2>&1
	if ! diff -u <(tail -n +2 "$tmp/readme") "$tmp/out" >"$tmp/diff"; then
		echo "  FAIL README.md's example report differs from ntprof $cmd:"; head -30 "$tmp/diff"; fail=1
	else
		echo "  ok   README.md's example report"
	fi
fi
exit $fail
