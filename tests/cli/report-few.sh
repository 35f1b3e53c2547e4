#!/usr/bin/env bash
# A group of few sampled commands (docs/stage-model.md, "Few samples"): the
# report marks its stage means and Little's-law QDs ('?', a line naming n,
# "largest:" with "(n=N: too few)"), the JSON lists "mean" in too_few, a QD
# sum above the host's queues is a note, and the what-if gives no prediction;
# from enough samples none of it.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-$root/build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1"; fail=1; }
has() { local name=$1 pat=$2 file=$3; if grep -qF -- "$pat" "$file"; then ok "$name"; else bad "$name: no '$pat'"; cat "$file"; fi; }
hasnt() { local name=$1 pat=$2 file=$3; if grep -qF -- "$pat" "$file"; then bad "$name: '$pat'"; cat "$file"; else ok "$name"; fi; }

# 1 in 1000 of 8k commands/s for 1 s at QD 1 on 1 tag: 10 commands sampled
# with this seed, whose mean x the counted rate reads 1.33 in flight
"$NTPROF" generate -q -o few.ntp -d 1 --rate 8000 -s 1000 --qd 1 --host-queues \
	--delay storage=lognormal:100us:1.5 --seed 2 || { echo "generate failed"; exit 1; }
"$NTPROF" report --what-if-qd 8 few.ntp >few.txt 2>&1
has "few: n named" "== read 4KiB nvme1n1: 10 commands sampled" few.txt
has "few: means marked" "storage (target block layer, drive)   " few.txt
grep -E '^storage .* [0-9.]+\? +[0-9]+% +[0-9.]+\? #' few.txt >/dev/null && ok "few: mean and QD '?'" ||
	{ bad "few: mean and QD '?'"; cat few.txt; }
has "few: legend" "(?: from 10 sampled commands, fewer than 100:" few.txt
has "few: largest marked" "of the latency (n=10: too few)" few.txt
has "few: QD sum above the tags" "note: the stages' avg QD (rate x mean) add up to 1.33, above the 1 the host's queues hold in flight (1 tag x 1 hardware queue)" few.txt
has "few: what-if refused" "no prediction: 10 commands sampled, fewer than the 100 its means need" few.txt
"$NTPROF" report -j - few.ntp >few.json
python3 - few.json <<'PY' && ok "few: json" || bad "few: json"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["groups"][0]
assert g["latency_us"]["too_few"] == ["mean", "p99", "p99_9"], g["latency_us"]["too_few"]
assert len(d["notes"]) == 1 and d["notes"][0].startswith("read 4KiB nvme1n1: the stages' avg QD"), d["notes"]
PY

# 1 in 10: enough samples, nothing marked but the p99.9
"$NTPROF" generate -q -o many.ntp -d 1 --rate 8000 -s 10 --qd 1 --host-queues \
	--delay storage=lognormal:100us:1.5 --seed 2 || { echo "generate failed"; exit 1; }
"$NTPROF" report --what-if-qd 8 many.ntp >many.txt 2>&1
hasnt "many: no mean marked" "?" many.txt
hasnt "many: no QD note" "note: the stages' avg QD" many.txt
has "many: what-if" "measured at QD 1 " many.txt
exit $fail
