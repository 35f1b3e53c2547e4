#!/usr/bin/env bash
# compare's verdict on generated recordings (docs/reports.md, "The verdict"):
# every segment 1.4x slower is a uniform slowdown that names no stage (the
# largest stage grows most in microseconds, and was named before); one
# segment slowed names its stage; two slowed name both; one command a side
# is not judged; the QD1 -> QD8 recordings of examples/
# still name the host block layer. Text and the JSON's kind. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=$(realpath "${NTPROF:-build/ntprof}")
tmp=$(mktemp -d /tmp/ntprof-compare-verdict.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
# kind STAGE-BEYOND-OTHERS of the first group's verdict
kind() {
	"$NTPROF" compare -j - "$1" "$2" | python3 -c '
import json, sys
v = json.load(sys.stdin)["groups"][0]["verdict"]
b = v["beyond_others"]
print(v["kind"], b["stage"] if b else None, v["amplifies"])'
}

# the generator's default delays (src/core/synth/synth.c ntp_synth_defaults), no
# serialisation (it would not scale): B's every one 1.4x
defaults="host-block-sub:lognormal:1.5 host-driver-sub:lognormal:3.0 wire:lognormal:6.0
target-recv:lognormal:4.0 target-driver-sub:lognormal:3.0 host-recv:lognormal:4.0
host-driver-data:lognormal:3.0 target-driver-data:lognormal:2.0 storage:exp:80
target-driver-comp:lognormal:1.5 target-send:lognormal:3.0 host-driver-comp:lognormal:2.0
host-block-comp:lognormal:1.0"
scaled=()
for d in $defaults; do
	IFS=: read -r seg dist us <<<"$d"
	scaled+=(--delay "$seg=$dist:$(awk -v u="$us" 'BEGIN { printf "%.3f", u * 1.4 }')us:0.3")
done
gen() { "$NTPROF" generate -q -d 1 --rate 20000 -s 10 --link-gbps 0 "$@" || exit 1; }
gen -o "$tmp/a.ntp"
gen -o "$tmp/uniform.ntp" --seed 2 "${scaled[@]}"
gen -o "$tmp/wire.ntp" --seed 2 --delay wire=lognormal:30us:0.3

out=$("$NTPROF" compare "$tmp/a.ntp" "$tmp/uniform.ntp" 2>&1); rc=$?
check uniform-text "$([ $rc = 0 ] &&
	grep -Eqx 'verdict: every stage grew about 1\.[34][0-9]x: a uniform slowdown \(CPU, contention\), no stage stands out' <<<"$out"
	echo $?)" "exit $rc: $(grep '^verdict' <<<"$out")"
k=$(kind "$tmp/a.ntp" "$tmp/uniform.ntp")
check uniform-json "$([ "$k" = "uniform None False" ]; echo $?)" "$k"

out=$("$NTPROF" compare "$tmp/a.ntp" "$tmp/wire.ntp" 2>&1); rc=$?
check one-stage-text "$([ $rc = 0 ] &&
	grep -Eq '^verdict: network \(TCP/IP, NICs, wire\) amplifies latency from A to B: ' <<<"$out"
	echo $?)" "exit $rc: $(grep '^verdict' <<<"$out")"
k=$(kind "$tmp/a.ntp" "$tmp/wire.ntp")
check one-stage-json "$([ "$k" = "stage network True" ]; echo $?)" "$k"

# network and storage 2x, the rest flat: both named (each against the
# others' factor, the other grown one among them, read "uniform")
gen -o "$tmp/two-a.ntp" --seed 1 --delay storage=fixed:20us --delay wire=fixed:20us \
	--delay host-block-sub=fixed:20us
gen -o "$tmp/two-b.ntp" --seed 2 --delay storage=fixed:40us --delay wire=fixed:40us \
	--delay host-block-sub=fixed:20us
out=$("$NTPROF" compare "$tmp/two-a.ntp" "$tmp/two-b.ntp" 2>&1); rc=$?
check two-stages-text "$([ $rc = 0 ] &&
	grep -Eq '^verdict: network \(TCP/IP, NICs, wire\) and storage \(target block layer, drive\) amplify latency from A to B: ' <<<"$out"
	echo $?)" "exit $rc: $(grep '^verdict' <<<"$out")"
k=$(kind "$tmp/two-a.ntp" "$tmp/two-b.ntp")
check two-stages-json "$([ "$k" = "stage network True" ]; echo $?)" "$k"

# one command a side: not judged
"$NTPROF" generate -q -o "$tmp/one-a.ntp" -n 1 -s 1 --seed 4 --rate 1000 || exit 1
"$NTPROF" generate -q -o "$tmp/one-b.ntp" -n 1 -s 1 --seed 7 --rate 1000 || exit 1
out=$("$NTPROF" compare "$tmp/one-a.ntp" "$tmp/one-b.ntp" 2>&1); rc=$?
check too-few-text "$([ $rc = 0 ] &&
	grep -Eq '^verdict: too few samples to judge \(A 1, B 1 commands sampled, fewer than 100\); ' <<<"$out" &&
	! grep -q amplif <<<"$out"
	echo $?)" "exit $rc: $(grep '^verdict' <<<"$out")"
k=$(kind "$tmp/one-a.ntp" "$tmp/one-b.ntp")
check too-few-json "$([ "$k" = "too_few None False" ]; echo $?)" "$k"

ex=examples
out=$("$NTPROF" compare $ex/tb61-tcp-read-qd1-both.ntp $ex/tb61-tcp-read-qd8-exactq-both.ntp 2>&1); rc=$?
check qd1-qd8 "$([ $rc = 0 ] &&
	grep -qx 'verdict: host block layer amplifies latency from A to B: +1495.75 us of the +1141.37 us (131 %), 35.37x' <<<"$out"
	echo $?)" "exit $rc: $(grep '^verdict' <<<"$out")"
k=$(kind $ex/tb61-tcp-read-qd1-both.ntp $ex/tb61-tcp-read-qd8-exactq-both.ntp)
check qd1-qd8-json "$([ "$k" = "stage host_block True" ]; echo $?)" "$k"
exit $fail
