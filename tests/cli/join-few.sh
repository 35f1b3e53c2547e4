#!/usr/bin/env bash
# A join whose host holds fewer sampled commands than an offset is judged on
# (a short or idle recording) is not said to be misaligned: its few pairs
# agree, and the join pairs them as before the judging (docs/failures.md,
# "Recordings the join cannot align"); nor are the other small files of a
# many-host join when such a host comes first. A busy host of another run
# is said. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
tmp=$(mktemp -d /tmp/ntprof-joinfew.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
# four sampled commands: fewer than the eight pairs an offset is judged on
"$NTPROF" generate -q -o "$tmp/h.ntp" --target-out "$tmp/t.ntp" --rate 200 -d 1 || exit 1
out=$("$NTPROF" report "$tmp/h.ntp" "$tmp/t.ntp" 2>&1)
check few-not-said "$(! grep -q 'clock offset' <<<"$out"; echo $?)" "$(grep 'clock offset' <<<"$out" | head -2)"
check few-joined "$(grep -Eq '^records: ([0-9]+) host, [0-9]+ target; \1 matched' <<<"$out"; echo $?)" \
	"$(grep '^records:' <<<"$out")"
# a host of few commands first, then a busy host, of one target
"$NTPROF" generate -q -o "$tmp/s%d.ntp" --target-out "$tmp/st.ntp" --hosts 2 --rate 200 -d 1 --seed 3 || exit 1
"$NTPROF" generate -q -o "$tmp/l%d.ntp" --target-out "$tmp/lt.ntp" --hosts 2 --rate 20000 -d 1 -s 10 --seed 4 || exit 1
out=$("$NTPROF" report "$tmp/s1.ntp" "$tmp/s2.ntp" "$tmp/st.ntp" 2>&1)
check few-hosts-not-said "$(! grep -q 'clock offset' <<<"$out"; echo $?)" "$(grep 'clock offset' <<<"$out" | head -2)"
# the busy pair still aligns and is not said either
out=$("$NTPROF" report "$tmp/l1.ntp" "$tmp/l2.ntp" "$tmp/lt.ntp" 2>&1)
check busy-not-said "$(! grep -q 'clock offset' <<<"$out"; echo $?)" "$(grep 'clock offset' <<<"$out" | head -2)"
# a busy host of another run given first: nothing pairs, and that is said
# (the target, and the real host that had nothing to align on)
"$NTPROF" generate -q -o "$tmp/x%d.ntp" --target-out "$tmp/xt.ntp" --hosts 2 --rate 20000 -d 1 -s 10 --seed 9 || exit 1
out=$("$NTPROF" report "$tmp/x2.ntp" "$tmp/l1.ntp" "$tmp/lt.ntp" 2>&1)
check foreign-said "$(grep -q "^note: $tmp/lt.ntp: no clock offset" <<<"$out" &&
	grep -q "^note: $tmp/l1.ntp: no clock offset" <<<"$out"; echo $?)" "$(grep '^note' <<<"$out" | head -3)"
exit $fail
