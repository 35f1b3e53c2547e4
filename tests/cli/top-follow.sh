#!/usr/bin/env bash
# ntprof-top --replay of a recording still being written (docs/top.md,
# "Replay"): a writer appends the file's bytes in pieces that cut blocks in
# the middle while a paced batch replay runs; the replay follows it to its
# trailer and prints the intervals of the whole file, not one interval and a
# "cut short" note. A cut file written long ago still ends at once. And
# --session naming a namespace the recording lacks is refused (one line),
# a multipath path counting as its head; a FIFO's is not waited on. A file
# created but still empty is waited for.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
TOP=${NTPROF_TOP:-build/ntprof-top}
command -v python3 >/dev/null || exit 77
work=$(mktemp -d /tmp/ntprof-top-follow.XXXXXX)
trap 'kill $feeder 2>/dev/null; rm -rf "$work"' EXIT
feeder=
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$NTPROF" generate -q -o "$work/src.ntp" -d 3 --rate 2000 -s 1 || exit 1
"$TOP" -b --json --speed 0 --replay "$work/src.ntp" >"$work/full.json" 2>/dev/null || fail "replay of the whole file"
head -c 256 "$work/src.ntp" >"$work/grow.ntp"
# 7 pieces, 0.4 s apart: the replay starts on the header alone
python3 - "$work/src.ntp" "$work/grow.ntp" <<'PY' &
import sys, time
src = open(sys.argv[1], 'rb').read()
out = open(sys.argv[2], 'ab')
off, step = 256, (len(src) - 256) // 7 + 1
while off < len(src):
    time.sleep(0.4)
    out.write(src[off:off + step]); out.flush()
    off += step
PY
feeder=$!
"$TOP" -b --json --replay "$work/grow.ntp" >"$work/grow.json" 2>"$work/err"; rc=$?
wait $feeder
[ $rc -eq 0 ] || fail "following replay: exit $rc: $(cat "$work/err")"
grep -q "waiting for the writer: .*grow.ntp has no trailer yet" "$work/err" || fail "no 'waiting for the writer': $(cat "$work/err")"
grep -q "cut short" "$work/err" && fail "the growing file was called cut short: $(cat "$work/err")"
sum() { python3 -c 'import json,sys; print(len([1 for l in open(sys.argv[1])]), sum(json.loads(l)["records"]["host"] for l in open(sys.argv[1])))' "$1"; }
[ "$(sum "$work/grow.json")" = "$(sum "$work/full.json")" ] ||
	fail "intervals and host records followed: $(sum "$work/grow.json"), the whole file's: $(sum "$work/full.json")"

# cut, and not written for an hour: no wait
head -c 1000000 "$work/src.ntp" >"$work/cut.ntp"
touch -d '1 hour ago' "$work/cut.ntp"
start=$(date +%s%N)
"$TOP" -b --json --speed 50 --replay "$work/cut.ntp" >/dev/null 2>"$work/err"
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 3000 ] || fail "an old cut file was waited for"
grep -q "cut.ntp was cut short" "$work/err" || fail "old cut file: $(cat "$work/err")"

# created, not yet written: waited for, not refused as an empty file
: >"$work/late.ntp"
( sleep 0.5; cat "$work/src.ntp" >>"$work/late.ntp" ) &
"$TOP" -b --json --speed 50 --replay "$work/late.ntp" >"$work/late.json" 2>"$work/err"; rc=$?
wait
[ $rc -eq 0 ] && [ "$(sum "$work/late.json")" = "$(sum "$work/full.json")" ] ||
	fail "a file written after the replay started: exit $rc: $(cat "$work/err")"

# --session: the namespaces of the header's table, or of the totals at the file's end
out=$("$TOP" -b --speed 0 --session nvme9n9 --replay "$work/src.ntp" 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$out" = "ntprof-top: nvme9n9 is not in the recording (it has nvme1n1)" ] ||
	fail "--session nvme9n9: exit $rc: $out"
out=$("$TOP" -b --speed 0 --session nvme9n9 --replay examples/tb61-tcp-read-qd1-both.ntp 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$out" = "ntprof-top: nvme9n9 is not in the recording (it has nvme0n1)" ] ||
	fail "--session nvme9n9 of an example: exit $rc: $out"
"$TOP" -b --speed 0 -n 1 --session nvme0n1 --replay examples/tb61-tcp-read-qd1-both.ntp >/dev/null 2>&1 ||
	fail "--session nvme0n1 of an example refused"
# a multipath path's records are the head's, as the filter folds them
"$NTPROF" generate -q -o "$work/mp.ntp" -d 2 --rate 1000 -s 1 --host-dev nvme0c1n1 -r host || exit 1
"$TOP" -b --json --speed 0 -n 1 --session nvme0n1 --replay "$work/mp.ntp" >/dev/null 2>"$work/err" ||
	fail "--session nvme0n1 of a recording naming nvme0c1n1 refused: $(cat "$work/err")"
out=$("$TOP" -b --speed 0 --session nvme0c1n1 --replay "$work/mp.ntp" 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$out" = "ntprof-top: nvme0c1n1 is not in the recording (it has nvme0n1)" ] ||
	fail "--session nvme0c1n1 (which the filter never keeps): exit $rc: $out"
# a FIFO whose writer is gone: the check does not open it again (and wait)
"$NTPROF" generate -q -o "$work/small.ntp" -d 0.02 --rate 200 -s 1 -r host || exit 1
mkfifo "$work/ff"
cat "$work/small.ntp" >"$work/ff" &
timeout 20 "$TOP" -b --speed 0 --session nvme1n1 --replay "$work/ff" >/dev/null 2>"$work/err"; rc=$?
[ $rc -eq 0 ] || fail "--session on a FIFO: exit $rc: $(cat "$work/err")"
[ $fails -eq 0 ]
