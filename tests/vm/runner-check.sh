#!/usr/bin/env bash
# The test bed's runner checks itself (make vm-runner-check; CI runs it):
# a guest that stops in the middle of a scenario, by a kernel panic (what
# softlockup_panic=1 makes of a TCG lockup) or by hanging past the host's
# watchdog, must cost a bounded time, be named, be replaced by a fresh guest
# for the scenarios it did not finish, and fail the scenario it stopped in
# twice, while the scenarios after it still run and pass.
#   A: SCENARIOS="runner-crash smoke"   guest 1 and 2 panic in runner-crash,
#      guest 3 runs smoke
#   B: SCENARIOS="runner-stall"         the watchdog (NTP_VM_WATCH_SLACK=15)
#      stops guest 1 and guest 2
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
O=${O:-build}
fails=0
check() { # DESCRIPTION CONDITION-STATUS
	if [ "$2" = 0 ]; then echo "runner-check: ok   $1"; else echo "runner-check: FAIL $1"; fails=$((fails + 1)); fi
}
run() { # LOG, then the environment and run.sh's arguments
	local log=$1; shift
	t0=$(date +%s)
	env "$@" "$HERE/run.sh" test > "$log" 2>&1
	rc=$? secs=$(( $(date +%s) - t0 ))
	sed 's/^/  | /' "$log"
}

run "$O/runner-check-a.log" O="$O" KERNEL="${KERNEL:-6.1}" SCENARIOS="runner-crash smoke" NTP_VM_SKIP_DEPS=1
a=$O/runner-check-a.log
check "A: exit status 1 (was $rc)" "$([ $rc = 1 ]; echo $?)"
check "A: guest 1 named as stopped in runner-crash, with the panic" \
	"$(grep -q '^vm-test: RESTART guest 1 stopped in runner-crash: .*Kernel panic' "$a"; echo $?)"
check "A: runner-crash failed after two guests" \
	"$(grep -q '^vm-test: FAIL runner-crash did not finish in two guests' "$a"; echo $?)"
check "A: the verdict from before the crash is not counted twice or kept" \
	"$(! grep -q '^vm-test: PASS runner-crash-begun' "$a"; echo $?)"
check "A: smoke ran in guest 3 and passed, and nothing else failed" \
	"$(grep -q '^vm-test: PASS smoke' "$a" && [ "$(grep -c '^vm-test: FAIL ' "$a")" = 1 ]; echo $?)"
check "A: two guest restarts reported" "$(grep -q ', 2 guest restart(s)$' "$a"; echo $?)"
check "A: each panic ended its guest by itself ($secs s in all): no watchdog, no qemu time limit" \
	"$(! grep -q '^vm-test: watchdog:\|qemu killed after' "$a"; echo $?)"

run "$O/runner-check-b.log" O="$O" KERNEL="${KERNEL:-6.1}" SCENARIOS="runner-stall" NTP_VM_SKIP_DEPS=1 NTP_VM_WATCH_SLACK=15
b=$O/runner-check-b.log
check "B: exit status 1 (was $rc)" "$([ $rc = 1 ]; echo $?)"
check "B: the watchdog stopped guest 1 and named the scenario" \
	"$(grep -q '^vm-test: watchdog: guest stopped by the host.s watchdog: runner-stall running past its limit' "$b"; echo $?)"
check "B: runner-stall failed after two guests" \
	"$(grep -q '^vm-test: FAIL runner-stall did not finish in two guests: guest stopped by the host.s watchdog' "$b"; echo $?)"
check "B: the watchdog stopped both guests ($secs s in all), not qemu's time limit" \
	"$([ "$(grep -c '^vm-test: watchdog:' "$b")" = 2 ] && ! grep -q 'qemu killed after' "$b"; echo $?)"

echo "runner-check: $fails failure(s)"
[ $fails = 0 ]
