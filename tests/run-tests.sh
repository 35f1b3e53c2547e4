#!/usr/bin/env bash
# Runs every unit test program given as an argument, then every tests/cli/*.sh
# script (golden outputs of the command line), and prints one closing line
# "N passed, N failed". Environment: NTPROF, NTPROF_TOP (binaries under test), O.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 failed=()
for t in "$@"; do
	if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
done
for s in tests/cli/*.sh; do
	[ -e "$s" ] || continue
	echo "[ RUN      ] $s"
	if bash "$s"; then
		echo "[       OK ] $s"; pass=$((pass + 1))
	else
		echo "[  FAILED  ] $s"; fail=$((fail + 1)); failed+=("$s")
	fi
done
[ ${#failed[@]} -eq 0 ] || printf 'failed: %s\n' "${failed[@]}"
echo "check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
