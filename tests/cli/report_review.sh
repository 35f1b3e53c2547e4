#!/usr/bin/env bash
# What a user reading `ntprof report` / `compare` output relies on: JSON
# unmatched_records is records - sampled of a joined group; the stage means of
# every group (host-only too) add up to the end-to-end mean; a damaged
# trailer is not counted as records lost; a --what-if-fit recording is checked
# and its damage said; compare says when A and B measure different things; a
# many-host report names its hosts.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-$root/build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
command -v python3 >/dev/null || { echo "python3 absent: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
bad() { echo "  FAIL $*"; fail=1; }
gen() { "$NTPROF" generate -q "$@" || { echo "generate $* failed"; exit 1; }; }

# JSON unmatched_records: every host record whose target never came, in its
# own group (some still waiting at the end, some of a reused key)
gen -o dt.ntp -d 0.5 --rate 20000 -s 10 --read 50 --sizes 4K,128K --drop-target 10 --seed 3
"$NTPROF" report -j dt.json dt.ntp >/dev/null || bad "report -j dt.ntp"
python3 - dt.json <<'PY' || bad "unmatched_records is not records - sampled"
import json, sys
d = json.load(open(sys.argv[1]))
tot = 0
for g in d["groups"]:
    want = g["records"] - g["sampled"] - g["incomplete_records"]
    if g["unmatched_records"] != want:
        sys.exit("%s: unmatched_records %d, records - sampled %d" % (g["label"], g["unmatched_records"], want))
    tot += g["unmatched_records"]
r = d["records"]
if tot != r["host"] - r["matched"] or tot == 0:
    sys.exit("unmatched %d of host %d matched %d" % (tot, r["host"], r["matched"]))
PY

# the stage means add up to the end-to-end mean, host-only groups too (their
# host receive path inside the network stage, and given apart)
gen -o ho.ntp -r host -d 0.2 --rate 10000 -s 10 --seed 4
gen -o both.ntp -d 0.2 --rate 10000 -s 10 --seed 4
gen -o to.ntp -r target -d 0.2 --rate 10000 -s 10 --seed 4
for f in ho both to; do
	"$NTPROF" report -j $f.json $f.ntp >/dev/null || bad "report -j $f.ntp"
	python3 - $f.json <<'PY' || bad "$f: stage means do not add up"
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["groups"]:
    s = sum(x["mean_us"] for x in g["stages"])
    m = g["latency_us"]["mean"]
    if abs(s - m) > 0.0005 * len(g["stages"]) + 1e-9:
        sys.exit("%s: stages %.3f, mean %.3f" % (g["label"], s, m))
    for x in g["stages"]:
        if g["side"] == "host_only" and x["stage"] == "network" and not 0 < x["host_receive_path_us"] < x["mean_us"]:
            sys.exit("host receive path %s not inside network %s" % (x["host_receive_path_us"], x["mean_us"]))
PY
done

# a damaged trailer header: the records were all read, none is counted lost;
# a bad header whose block cannot be told is an estimate, said so
gen -o mid.ntp -d 0.2 --rate 20000 -s 10 --seed 5
flip() { python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[int(sys.argv[3])] ^= int(sys.argv[4], 0)
open(sys.argv[2], "wb").write(d)' "$@"; }
end=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().rfind(b"PBLK"))' mid.ntp)
records=$("$NTPROF" dump mid.ntp | tail -n +2 | wc -l)
flip mid.ntp tr.ntp "$end" 0x40
out=$("$NTPROF" report tr.ntp 2>&1); rc=$?
[ $rc -eq 1 ] || bad "damaged trailer header: exit $rc, not 1"
grep -q "the trailer's: its payload is sound and was read; $records records read, 0 dropped" <<<"$out" ||
	bad "damaged trailer header: $(grep dropped <<<"$out" | tail -1)"
flip mid.ntp tr2.ntp $((end + 4)) 0x01		# its type: not known to be the trailer
out=$("$NTPROF" dump tr2.ntp 2>&1 >/dev/null)
grep -q "bytes skipped, about [0-9]* records (an estimate); $records records read" <<<"$out" ||
	bad "bad header at the end, estimate not said: $out"

# --what-if-fit: a damaged fit recording is said (exit 1), a cut one noted; one
# of other sides or transport refused; another -s noted; no FILE before @
gen -o qd1.ntp -d 0.2 --rate 20000 -s 10 --seed 6 --qd 1
gen -o qd8.ntp -d 0.2 --rate 20000 -s 10 --seed 7 --qd 8
gen -o qd8s7.ntp -d 0.2 --rate 20000 -s 7 --seed 7 --qd 8
gen -o qd8h.ntp -r host -d 0.2 --rate 20000 -s 10 --seed 7 --qd 8
gen -o qd8r.ntp -d 0.2 --rate 20000 -s 10 --seed 7 --qd 8 --transport rdma
flip qd8.ntp qd8bad.ntp 1000 0x40
head -c $(($(wc -c <qd8.ntp) / 2)) qd8.ntp >qd8cut.ntp
out=$("$NTPROF" report --what-if-qd 4 --what-if-fit qd8bad.ntp qd1.ntp 2>&1); rc=$?
[ $rc -eq 1 ] || bad "damaged fit file: exit $rc, not 1"
grep -q "^note: --what-if-fit: qd8bad.ntp is damaged (block at offset 256 fails its CRC)" <<<"$out" ||
	bad "damaged fit file: no note"
out=$("$NTPROF" report -j - --what-if-qd 4 --what-if-fit qd8cut.ntp@8 qd1.ntp 2>&1); rc=$?
[ $rc -eq 0 ] || bad "cut fit file: exit $rc"
grep -q '"--what-if-fit: qd8cut.ntp was cut short' <<<"$out" || bad "cut fit file: no JSON note"
out=$("$NTPROF" report --what-if-qd 4 --what-if-fit qd8s7.ntp qd1.ntp 2>&1) ||
	bad "fit file with another -s refused"
grep -q "^note: --what-if-fit qd8s7.ntp: recorded with -s 7, the input with -s 10" <<<"$out" ||
	bad "fit file with another -s: no note"
for f in qd8h qd8r; do
	out=$("$NTPROF" report --what-if-qd 4 --what-if-fit $f.ntp qd1.ntp 2>&1) && bad "$f.ntp as fit accepted"
	grep -q "^ntprof: --what-if-fit $f.ntp: .*: its stages are not the same" <<<"$out" || bad "$f.ntp: $out"
done
out=$("$NTPROF" report --what-if-qd 4 --what-if-fit @4 qd1.ntp 2>&1) && bad "--what-if-fit @4 accepted"
[ "$out" = "ntprof: --what-if-fit: '@4': no FILE before @" ] || bad "--what-if-fit @4: $out"

# compare of runs that record different sides: a note, no latency change
# where the end to end differs, and the verdict marked as of the stages both
# record (never "amplifies")
out=$("$NTPROF" compare to.ntp ho.ntp 2>&1) || bad "compare to ho: exit $?"
grep -q "^note: A has the target's side only, B the host's side only: the latency rows are not the same measure" <<<"$out" ||
	bad "compare target-only host-only: no note"
grep -Eq '^mean +[0-9.]+ +[0-9.]+ +- +-$' <<<"$out" || bad "compare target-only host-only: a latency change"
out=$("$NTPROF" compare ho.ntp both.ntp 2>&1) || bad "compare ho both: exit $?"
grep -q "^note: A has the host's side only, B both sides: the latency is the host's end to end in both" <<<"$out" ||
	bad "compare host-only joined: no note"
grep -q "^verdict (of the stages both record): " <<<"$out" || bad "compare host-only joined: verdict not marked"
"$NTPROF" compare -j - ho.ntp both.ntp | python3 -c '
import json, sys
g = json.load(sys.stdin)["groups"][0]
v = g["verdict"]
sys.exit(0 if g["note"] and v["restricted"] is True and v["amplifies"] is False else "JSON: %s %s" % (g["note"], v))
' || bad "compare -j host-only joined: note/restricted"

exit $fail
