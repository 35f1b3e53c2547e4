#!/usr/bin/env bash
# Runs every unit test program given as an argument, then every tests/cli/*.sh
# script (golden outputs of the command line), and prints one closing line
# "N passed, N failed". Environment: NTPROF, NTPROF_TOP (binaries under test), O.
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0 failed=()
for t in "$@"; do
	if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
done
for s in tests/cli/*.sh; do
	[ -e "$s" ] || continue
	echo "[ RUN      ] $s"
	bash "$s"; rc=$?
	if [ $rc -eq 0 ]; then
		echo "[       OK ] $s"; pass=$((pass + 1))
	elif [ $rc -eq 77 ]; then	# automake's "skipped": a tool it needs is missing
		echo "[   SKIP   ] $s"; skip=$((skip + 1))
	else
		echo "[  FAILED  ] $s"; fail=$((fail + 1)); failed+=("$s")
	fi
done
[ ${#failed[@]} -eq 0 ] || printf 'failed: %s\n' "${failed[@]}"
echo "check: $pass passed, $fail failed$([ $skip -eq 0 ] || echo ", $skip skipped")"
[ "$fail" -eq 0 ]
