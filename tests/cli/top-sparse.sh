#!/usr/bin/env bash
# ntprof-top replaying a recording sampled 1 in 1000 at short intervals
# (docs/top.md): the first interval, before any command is sampled, shows
# the totals' count in the header and a line for the group saying none is
# sampled yet, not "0 cmds/s" and nothing; between two totals blocks the
# few records do not make the intervals' counts all or nothing (each about
# the load's rate); --json gives such a group's latency as null. The
# header's rate is the load's in role target and in a join of two hosts.
set -u
cd "$(dirname "$0")/../.."
TOP=${NTPROF_TOP:-build/ntprof-top}
NTPROF=${NTPROF:-build/ntprof}
command -v python3 >/dev/null || exit 77
work=$(mktemp -d /tmp/ntprof-top-sparse.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0

"$NTPROF" generate -q -o "$work/s.ntp" -s 1000 --rate 20000 -d 2 || { echo "FAIL: generate"; exit 1; }
"$TOP" -b -i 0.1 -n 1 --replay "$work/s.ntp" >"$work/b.txt" 2>"$work/err" || { echo "FAIL: replay: $(cat "$work/err")"; exit 1; }
if grep -q '^ 0 cmds/s' "$work/b.txt" || ! grep -Eq '^ 20\.[0-9]k cmds/s  lost' "$work/b.txt"; then
	echo "FAIL: the first interval's header:"; cat "$work/b.txt"; fails=1
fi
if ! grep -q 'read 4KiB nvme1n1 .* cmds/s counted, no command sampled yet (1 in 1000)' "$work/b.txt"; then
	echo "FAIL: no line for the counted group:"; cat "$work/b.txt"; fails=1
fi

"$TOP" -b --json -i 0.1 --replay "$work/s.ntp" >"$work/j.txt" 2>"$work/err" || { echo "FAIL: replay --json: $(cat "$work/err")"; exit 1; }
python3 - "$work/j.txt" <<'PY' || fails=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = 0
# a group with no command sampled has no latency: null, not 0 us
nosample = [g for d in lines for g in d["groups"] if g["sampled"] == 0]
if not nosample:
    print("FAIL: no group without a sample in the replay"); bad = 1
for g in nosample:
    lat = g["latency_us"]
    if any(lat[k] is not None for k in ("mean", "p50", "p99", "p99_9")):
        print("FAIL: %s with no sample: latency_us %s" % (g["label"], lat)); bad = 1; break
for d in lines:
    if d["seconds"] < 0.09:
        continue
    rate = sum(g["rate"] for g in d["groups"])
    if not 15000 <= rate <= 25000:
        print("FAIL: interval %d: %.0f cmds/s (the load's 20k)" % (d["interval"], rate)); bad = 1
sys.exit(bad)
PY
# The header's rate, every interval, target only and two hosts joined to one
# target: the load's 20k (each group once: no double count across the
# groups the records and the totals make)
header_ok() {
	awk -v what="$1" '/^ [0-9.]+k cmds\/s  lost/ { n++; r = substr($1, 1, length($1) - 1) + 0;
		if (r < 15 || r > 25) { print "FAIL: " what ": header " $0; bad = 1 } }
		END { if (!n) { print "FAIL: " what ": no header"; bad = 1 } exit bad }' "$2"
}
"$NTPROF" generate -q -o "$work/t.ntp" -r target -s 1000 --rate 20000 -d 2 || { echo "FAIL: generate -r target"; exit 1; }
"$TOP" -b -i 0.5 --replay "$work/t.ntp" >"$work/t.txt" 2>"$work/err" || { echo "FAIL: replay target: $(cat "$work/err")"; exit 1; }
header_ok "target only" "$work/t.txt" || fails=1
"$NTPROF" generate -q -o "$work/h%d.ntp" --target-out "$work/ht.ntp" --hosts 2 -s 1000 --rate 20000 -d 2 ||
	{ echo "FAIL: generate --hosts 2"; exit 1; }
"$TOP" -b -i 0.5 --replay "$work/h1.ntp" "$work/h2.ntp" "$work/ht.ntp" >"$work/j2.txt" 2>"$work/err" ||
	{ echo "FAIL: replay of the join: $(cat "$work/err")"; exit 1; }
header_ok "two hosts joined" "$work/j2.txt" || fails=1
exit $fails
