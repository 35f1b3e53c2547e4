#!/usr/bin/env bash
# ntprof report --what-if-qd on generated runs (docs/what-if.md): at the
# run's own QD the prediction gives back the measured IOPS and mean, also
# when rate x mean lies just above an integer (the QD is rounded up, not
# down); a queue's capacity is never below the rate the run had; a QD given
# more than a tenth below the commands measured in flight is refused, saying
# why; within a tenth it stands.
# Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
tmp=$(mktemp -d /tmp/ntprof-whatif.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
# an open-loop generator at 19.5k/s: about 2.3 in flight
"$NTPROF" generate -q -o "$tmp/w2.ntp" -d 2 --rate 19500 -s 10 --qd 32 || exit 1
out=$("$NTPROF" report --what-if-qd 1,2,3 "$tmp/w2.ntp" 2>&1)
check rounds-up "$(grep -q '^measured at QD 3 (rate x mean = 2\.[0-9]*)' <<<"$out"; echo $?)" \
	"$(grep '^measured' <<<"$out")"
out=$("$NTPROF" report --what-if-qd 1 --what-if-qd-was 1 "$tmp/w2.ntp" 2>&1)
check given-below "$(grep -q '^no prediction: the QD given (1) is below the commands measured in flight (rate x mean = 2\.[0-9]*): give at least 3$' <<<"$out"; echo $?)" \
	"$(grep -A1 'what if' <<<"$out")"
# a QD given within a tenth of rate x mean (the sampled mean's noise) stands:
# about 2.07 in flight, QD 2 given, a prediction at QD 2
"$NTPROF" generate -q -o "$tmp/w18.ntp" -d 2 --rate 18000 -s 10 --qd 32 || exit 1
out=$("$NTPROF" report --what-if-qd 2,4 --what-if-qd-was 2 "$tmp/w18.ntp" 2>&1)
check given-near "$(grep -q '^measured at QD 2 (given; rate x mean = 2\.0[0-9]*)' <<<"$out" &&
	grep -Eq '^ +2 +[0-9]+ ' <<<"$out" && ! grep -q '^no prediction' <<<"$out"; echo $?)" \
	"$(grep -A1 '^measured\|^no prediction' <<<"$out" | head -3)"
# refused, the least QD named is the least the check accepts (2 here, not
# the rounded-up 3)
out=$("$NTPROF" report --what-if-qd 1 --what-if-qd-was 1 "$tmp/w18.ntp" 2>&1)
check given-least "$(grep -q '^no prediction: the QD given (1) is below the commands measured in flight (rate x mean = 2\.0[0-9]*): give at least 2$' <<<"$out"; echo $?)" \
	"$(grep -A1 'what if' <<<"$out")"
"$NTPROF" generate -q -o "$tmp/q16.ntp" -d 2 --rate 60000 --qd 16 -s 10 --delay storage=lognormal:150us:0.5 || exit 1
if command -v python3 >/dev/null; then
	for args in "--what-if-qd 1,2,3 $tmp/w2.ntp" "--what-if-qd 11,12 --what-if-servers storage=4 $tmp/q16.ntp"; do
		# shellcheck disable=SC2086
		"$NTPROF" report -j - $args >"$tmp/j.json" 2>&1
		res=$(python3 - "$tmp/j.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["what_if"]["groups"]:
    m = g["measured"]
    own = [p for p in g["predictions"] if p["qd"] == m["qd"]]
    if not own:
        print("no prediction at the run's QD %d" % m["qd"]); continue
    p = own[0]
    if abs(p["iops"] - m["iops"]) > 1e-3 * m["iops"] or abs(p["mean_us"] - m["mean_us"]) > 1e-3 * m["mean_us"]:
        print("QD %d: predicted %s IOPS %s us, measured %s IOPS %s us" % (m["qd"], p["iops"], p["mean_us"], m["iops"], m["mean_us"]))
    if g["max_iops"] is not None and g["max_iops"] < m["iops"]:
        print("capacity %s IOPS below the measured %s" % (g["max_iops"], m["iops"]))
PY
)
		check "own-qd ${args%% /*}" "$([ -z "$res" ]; echo $?)" "$res"
	done
else
	echo "note: python3 absent, JSON contents not checked"
fi
exit $fail
