#!/usr/bin/env bash
# A join whose host holds fewer sampled commands than an offset is judged on
# (a short or idle recording) is not said to be misaligned: its few pairs
# agree, and the join pairs them as before the judging (docs/failures.md,
# "Recordings the join cannot align"); nor are the other small files of a
# many-host join when such a host comes first, and a busy host after it is
# aligned. A busy host of another run is said. Environment: NTPROF.
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
# a host of few commands (of another run: a third machine) first, then a
# busy host: the busy one is still aligned on its target, and nothing is said
"$NTPROF" generate -q -o "$tmp/f%d.ntp" --target-out "$tmp/ft.ntp" --hosts 3 --rate 200 -d 1 -s 10 --seed 5 || exit 1
alone=$("$NTPROF" report "$tmp/l1.ntp" "$tmp/lt.ntp" 2>&1)
out=$("$NTPROF" report "$tmp/f3.ntp" "$tmp/l1.ntp" "$tmp/lt.ntp" 2>&1)
check few-first-not-said "$(! grep -q 'clock offset' <<<"$out"; echo $?)" "$(grep 'clock offset' <<<"$out" | head -2)"
n=$(sed -n 's/^records: .* \([0-9]*\) matched.*/\1/p' <<<"$alone")
check few-first-busy-joined "$([ -n "$n" ] && grep -Eq "^records: [0-9]+ host, [0-9]+ target; $n matched" <<<"$out"; echo $?)" \
	"$(grep '^records:' <<<"$out"), alone $n"
# a busy host of another run given first: nothing of it pairs, and that is
# said; the real host and its target are aligned on each other, not said
# (tests/cli/join-order.sh: the same whichever comes first)
"$NTPROF" generate -q -o "$tmp/x%d.ntp" --target-out "$tmp/xt.ntp" --hosts 2 --rate 20000 -d 1 -s 10 --seed 9 || exit 1
out=$("$NTPROF" report "$tmp/x2.ntp" "$tmp/l1.ntp" "$tmp/lt.ntp" 2>&1)
check foreign-said "$(grep -q "^note: $tmp/x2.ntp: no clock offset" <<<"$out" &&
	[ "$(grep -c 'clock offset' <<<"$out")" = 1 ]; echo $?)" "$(grep '^note' <<<"$out" | head -3)"
exit $fail
