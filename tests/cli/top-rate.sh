#!/usr/bin/env bash
# ntprof-top replaying a real recording (examples/tb61-tcp-read-qd8-exactq-both.ntp:
# 1 in 10, --exact-queues, totals blocks off the intervals' boundaries): every
# interval's counted commands are the kernel's (rate_exact), from the first
# interval on, as many as the counted QDs' commands of the same interval, and
# never fewer than its records (docs/json-schema.md, "Counted commands per
# interval"); at longer intervals too, the intervals add up to the
# recording's count.
set -u
cd "$(dirname "$0")/../.."
TOP=${NTPROF_TOP:-build/ntprof-top}
NTPROF=${NTPROF:-build/ntprof}
command -v python3 >/dev/null || exit 77
work=$(mktemp -d /tmp/ntprof-top-rate.XXXXXX)
trap 'rm -rf "$work"' EXIT
f=examples/tb61-tcp-read-qd8-exactq-both.ntp

"$TOP" -b --json --speed 0 --replay "$f" >"$work/j.txt" 2>"$work/err" || { echo "FAIL: replay: $(cat "$work/err")"; exit 1; }
python3 - "$work/j.txt" <<'PY'
import json, sys
fails = 0
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if len(lines) < 10:
    print("FAIL: %d intervals" % len(lines)); sys.exit(1)
for i, d in enumerate(lines):
    for g in d["groups"]:
        c, q, rec = g["commands"], g["qd_commands"], g["records"]
        if not g["rate_exact"] or c is None:
            print("FAIL: interval %d %s: not counted" % (i, g["label"])); fails += 1; continue
        if c < rec:
            print("FAIL: interval %d: %d commands, fewer than its %d records" % (i, c, rec)); fails += 1
        if q is None or abs(c - q) > 2:
            print("FAIL: interval %d: %d commands but the counted QDs' %s" % (i, c, q)); fails += 1
        # the load is steady (QD 8): each interval's rate within 2x of the mean
        if d["seconds"] >= 0.9 and not 800 <= g["rate"] <= 3200:
            print("FAIL: interval %d: rate %.0f/s" % (i, g["rate"])); fails += 1
sys.exit(1 if fails else 0)
PY
[ $? = 0 ] || exit 1

# Longer intervals: the first boundary comes after a totals block and the
# read-ahead's counts, and still counts from zero at the recording's start;
# at every length the intervals' counts add up to the recording's count
total=$("$NTPROF" report -j - "$f" | python3 -c 'import json,sys; print(sum(g["commands"] for g in json.load(sys.stdin)["groups"]))')
fails=0
for i in 1 3 5; do
	"$TOP" -b --json --speed 0 -i $i --replay "$f" >"$work/j$i.txt" 2>"$work/err" ||
		{ echo "FAIL: replay -i $i: $(cat "$work/err")"; exit 1; }
	res=$(python3 - "$work/j$i.txt" "$total" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
c = [d["groups"][0]["commands"] for d in lines]
first = lines[0]["groups"][0]
ok = None not in c and sum(c) == int(sys.argv[2]) and 800 <= first["rate"] <= 3200
print("%d sum %s first rate %.0f" % (0 if ok else 1, sum(x or 0 for x in c), first["rate"]))
PY
)
	if [ "${res%% *}" = 0 ]; then echo "  ok   -i $i: ${res#* } of $total"; else echo "  FAIL -i $i: ${res#* } of $total"; fails=1; fi
done
exit $fails
