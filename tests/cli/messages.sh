#!/usr/bin/env bash
# Messages that say what happened: compare names which queue
# depths are counted (--exact-queues) and which Little's law's; two
# recordings of both sides of one machine; a forced hook flavour names its
# own reason only; generate says an open loop its tags cannot serve; the
# alignment notes' wording. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=$(realpath "${NTPROF:-build/ntprof}")	# some checks run in $tmp
tmp=$(mktemp -d /tmp/ntprof-messages.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
ex=examples

# ---- compare: counted and Little's-law queue depths are named per side ----
out=$("$NTPROF" compare $ex/tb61-tcp-read-qd1-both.ntp $ex/tb61-tcp-read-qd8-exactq-both.ntp 2>&1); rc=$?
check compare-qd-kind "$([ $rc = 0 ] &&
	grep -qx "QD: A's by Little's law (mean x rate), B's counted in the kernel (--exact-queues)" <<<"$out"; echo $?)" \
	"exit $rc: $(grep -m1 -B1 '^stage' <<<"$out")"
out=$("$NTPROF" compare $ex/tb61-tcp-read-qd8-exactq-both.ntp $ex/tb61-tcp-read-qd8-exactq-both.ntp 2>&1)
check compare-qd-both-counted "$(grep -qx "QD: A's and B's counted in the kernel (--exact-queues)" <<<"$out"; echo $?)" \
	"$(grep -m1 -B1 '^stage' <<<"$out")"
out=$("$NTPROF" compare $ex/tb61-tcp-read-qd1-both.ntp $ex/tb61-tcp-read-qd1-both.ntp 2>&1)
check compare-qd-little "$(! grep -q '^QD: ' <<<"$out"; echo $?)" "$(grep -m1 -B1 '^stage' <<<"$out")"
# compare -j: a one-sided stage row has change_us and ratio null, not left
# out; each side says whether its queue depths are counted
out=$("$NTPROF" compare -j - $ex/tb61-tcp-read-host.ntp $ex/tb61-tcp-read-qd8-exactq-both.ntp 2>&1)
check compare-json-nulls "$(python3 -c '
import json, sys
g = json.loads(sys.stdin.read())["groups"][0]
assert g["a_qd_counted"] is False and g["b_qd_counted"] is True, (g["a_qd_counted"], g["b_qd_counted"])
one = [s for s in g["stages"] if s["a_name"] is None or s["b_name"] is None]
assert one and all(s["change_us"] is None and s["ratio"] is None for s in one), one
' <<<"$out" 2>&1; echo $?)" "$(head -c 300 <<<"$out")"

# two recordings of both sides of one machine: said once, not "both both"
"$NTPROF" generate -q -o "$tmp/b.ntp" -d 0.05 --rate 1000 -s 1 || exit 1
cp "$tmp/b.ntp" "$tmp/b2.ntp"
out=$("$NTPROF" report "$tmp/b.ntp" "$tmp/b2.ntp" 2>&1); rc=$?
check both-sides-twice "$([ $rc = 1 ] &&
	[ "$out" = "ntprof: $tmp/b.ntp and $tmp/b2.ntp each record both sides of synth-loopback: pass one of them" ]
	echo $?)" "exit $rc: $out"

# a flavour forced: only its reason is named (when the kernel modules are
# missing, every other missing thing is named in the same line). Run only
# where the host role's nvme_tcp is absent, as root: record then stops at
# that check and records nothing; elsewhere said skipped.
mod_there() { # MODULE: loaded, or built in (as ntprof's kmod.c tells)
	[ -e "/sys/module/$1" ] ||
		grep -Eq "/${1//_/[-_]}\.ko" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null
}
for f in kprobes fentry; do
	if [ "$(id -u)" != 0 ]; then
		echo "  skip forced-$f-reason: not root (record stops at the privilege check)"
		continue
	fi
	if mod_there nvme_tcp; then
		echo "  skip forced-$f-reason: nvme_tcp is there (record would record)"
		continue
	fi
	out=$("$NTPROF" record -r host --$f -d 1 2>&1 >/dev/null)
	other=$([ $f = kprobes ] && echo fentry || echo kprobes)
	check "forced-$f-reason" "$(grep -q '^ntprof: kernel modules* not loaded: .*nvme_tcp' <<<"$out" &&
		! grep -q "; no $other (" <<<"$out"; echo $?)" "$out"
done

# generate: an open loop faster than its tags serve says so, with what they served
out=$("$NTPROF" generate -o "$tmp/o.ntp" -d 0.5 --rate 10000 --qd 1 2>&1); rc=$?
check generate-overload "$([ $rc = 0 ] && grep -Eq '^ntprof: --rate 10000 is more than 1 tag \(--qd 1 x --queues 1\) serve: [0-9]+ commands/s; the run took 0\.[5-9][0-9]* s, not 0\.500 s, and the time commands waited for a tag is in no timestamp$' <<<"$out"; echo $?)" \
	"exit $rc: $out"
out=$("$NTPROF" generate -o "$tmp/o.ntp" -d 0.5 --rate 10000 --qd 32 2>&1)
check generate-not-overloaded "$(! grep -q 'more than' <<<"$out"; echo $?)" "$out"
# a long latency is no overload (about 5 of 32 tags busy), nor are -n's
# random arrivals ending after count / rate
out=$("$NTPROF" generate -o "$tmp/o.ntp" -d 0.1 --rate 100 --qd 32 -s 1 --delay storage=fixed:50ms 2>&1)
check generate-long-latency-not-overloaded "$(! grep -q 'more than' <<<"$out"; echo $?)" "$out"
seeds=
for k in $(seq 1 20); do
	"$NTPROF" generate -o "$tmp/o.ntp" -n 50 --rate 1000 -s 1 --seed $k 2>&1 | grep -q 'more than' && seeds+=" $k"
done
check generate-count-not-overloaded "$([ -z "$seeds" ]; echo $?)" "noted with --seed$seeds"

# alignment notes: what "the others'" are; "1 more file was", not "1 more files were"
( cd "$tmp" && "$NTPROF" generate -q -o h%d.ntp --target-out t.ntp --hosts 5 --rate 20000 -d 0.5 -s 1 --seed 4 &&
  rm t.ntp && "$NTPROF" generate -q -o x.ntp --target-out yt.ntp --rate 1000 -d 1 -s 1 --seed 11 ) || exit 1
out=$(cd "$tmp" && "$NTPROF" report h1.ntp h2.ntp h3.ntp h4.ntp h5.ntp yt.ntp 2>&1)
check align-note-other-side "$(grep -q "^note: yt.ntp: no clock offset to the other recordings found: none of its commands, or too few to judge, is in the other side's recordings (" <<<"$out"; echo $?)" \
	"$(grep '^note' <<<"$out")"
check align-note-one-more "$(grep -qx 'note: 1 more file was not aligned either' <<<"$out"; echo $?)" "$(grep '^note' <<<"$out")"

exit $fail
