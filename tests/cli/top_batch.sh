#!/usr/bin/env bash
# ntprof-top without a terminal: batch screens and JSON from a replay, the
# stages adding up, the refusals (bad options, no terminal, no live source).
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
TOP=${NTPROF_TOP:-build/ntprof-top}
work=$(mktemp -d /tmp/ntprof-top-batch.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect_err WANT_TEXT CMD...: exits non-zero with WANT_TEXT on stderr, nothing on stdout.
expect_err() {
	local want=$1 out err rc
	shift
	out=$("$@" 2>"$work/err" </dev/null); rc=$?
	err=$(cat "$work/err")
	[ $rc -ne 0 ] || fail "'$*' exited 0"
	[ -z "$out" ] || fail "'$*' printed on stdout: $out"
	grep -qF -- "$want" <<<"$err" || fail "'$*': stderr '$err' lacks '$want'"
	[ "$(wc -l <<<"$err")" -eq 1 ] || fail "'$*': more than one line of error: $err"
}

"$NTPROF" generate -q -o "$work/run.ntp" -d 5 --rate 20000 --sizes 4K,128K --read 70 -s 100 || exit 1

# Three screens of text, each with every group; as fast as the file reads.
LANG=C.UTF-8 "$TOP" -b -n 3 --speed 0 --width 100 --replay "$work/run.ntp" >"$work/b.txt" || fail "batch failed"
[ "$(grep -c '^ ntprof-top ' "$work/b.txt")" -eq 3 ] || fail "batch -n 3 did not print 3 screens"
for i in 0 1 2; do grep -q "sampled  *#$i\$" "$work/b.txt" || fail "no screen for interval $i"; done
[ "$(grep -c 'write 128KiB nvme1n1' "$work/b.txt")" -eq 3 ] || fail "a screen lacks write 128KiB"
grep -q $'\e' "$work/b.txt" && fail "batch output has escape sequences"
# ASCII without a UTF-8 locale.
LANG=C LC_ALL=C "$TOP" -b -n 1 --speed 0 --replay "$work/run.ntp" >"$work/a.txt" || fail "batch in C locale failed"
LC_ALL=C grep -q '[^ -~]' "$work/a.txt" && fail "C locale output is not ASCII"
grep -q '%%%%' "$work/a.txt" || fail "ASCII storage bars missing"

# JSON: one object per interval; every group's stage means add up to its e2e mean.
"$TOP" -b --json --speed 0 --replay "$work/run.ntp" >"$work/j.txt" || fail "batch --json failed"
n=$(wc -l <"$work/j.txt")
[ "$n" -ge 5 ] && [ "$n" -le 6 ] || fail "5 s of recording gave $n intervals"
if command -v python3 >/dev/null; then
	python3 - "$work/j.txt" <<'PY' || fail "JSON check failed"
import json, sys
for i, line in enumerate(open(sys.argv[1])):
    o = json.loads(line)
    assert o["schema"] == "ntprof-top", o["schema"]
    assert o["interval"] == i, (o["interval"], i)
    assert o["groups"], "no groups"
    for g in o["groups"]:
        s = sum(st["mean_us"] for st in g["stages"])
        assert abs(s - g["latency_us"]["mean"]) < 0.01, (g["io"], g["size"], s, g["latency_us"]["mean"])
        assert abs(sum(st["share"] for st in g["stages"]) - 1) < 0.001
PY
else
	echo "note: python3 absent, JSON contents not checked"
fi

# Read as fast as it goes, batch mode still prints every interval, in order
# (the background thread waits for the printer instead of dropping).
"$NTPROF" generate -q -o "$work/long.ntp" -d 100 --rate 2000 -s 10 || exit 1
"$TOP" -b --json --speed 0 -i 0.5 --replay "$work/long.ntp" 2>/dev/null |
	awk -F'"interval":' '{ split($2, a, ","); if (a[1] != NR - 1) bad++ } END { exit !(NR == 200 && !bad) }' ||
	fail "100 s at 0.5 s intervals did not give intervals 0..199 in order"
# Nearly empty intervals, published faster than the printer takes them in:
# every one printed, in order, twice the same (the printer once took more
# than its history holds in one go, and printed from before its start).
"$NTPROF" generate -q -o "$work/sparse.ntp" -r host -d 300 --rate 1000 -s 1000 --seed 2 || exit 1
for k in 1 2; do
	"$TOP" -b --json --speed 0 -i 0.1 --replay "$work/sparse.ntp" >"$work/sparse$k.txt" 2>/dev/null ||
		fail "replay of 3000 short intervals: exit $?"
done
# A replay closes an interval at each 0.1 s boundary its records cross;
# after the last record, the rest of the recording up to its end is one
# last, partial interval (src/top/source.c, ntp_pump_finish): so the count
# is the boundaries below the last record's latest timestamp, plus one
# (fewer than 3000, as the last sampled command comes before the 300th s).
start=$("$NTPROF" dump --header "$work/sparse.ntp" | awk '/^start_mono_ns:/ { print $2 }')
want=$("$NTPROF" dump "$work/sparse.ntp" | awk -F, -v s="$start" 'NR > 1 { for (i = 17; i <= NF; i++) {
	v = $i; sub(/\r$/, "", v); if (v != "" && v + 0 > m) m = v + 0 } }
	END { q = int((m - s) / 1e8); if (q * 1e8 < m - s) q++; print q }')
awk -F'"interval":' -v want="$want" '{ split($2, a, ","); if (a[1] != NR - 1) bad++ }
	END { exit !(NR == want && want > 2900 && !bad) }' "$work/sparse1.txt" ||
	fail "3000 short intervals: not every one in order ($(wc -l <"$work/sparse1.txt") lines, want $want)"
cmp -s "$work/sparse1.txt" "$work/sparse2.txt" || fail "two replays of the same file printed different intervals"

# A host and a target file replayed together are joined as ntprof report
# joins them: each line's records are its interval's (docs/json-schema.md),
# and they add up to the report's.
"$NTPROF" generate -q -o "$work/h.ntp" --target-out "$work/t.ntp" -r both -d 3 -s 10 --rate 20000 || exit 1
want=$("$NTPROF" report -j - "$work/h.ntp" "$work/t.ntp" | tr -d ' \n' | grep -o '"records":{[^}]*}')
got=$("$TOP" -b --json --speed 0 --replay "$work/t.ntp" "$work/h.ntp" 2>/dev/null | grep -o '"records":{[^}]*}' |
	awk -F'[:,}]' '{ h += $3; t += $5; m += $7; n++ }
		END { if (n > 2) printf "\"records\":{\"host\":%d,\"target\":%d,\"matched\":%d}", h, t, m }')
[ -n "$want" ] && [ "$got" = "$want" ] && grep -q '"matched":6' <<<"$got" ||
	fail "replay of host + target: the lines' records add up to '$got', report: '$want'"
# ... and no line holds the running totals: the first and the last are alike
lines=$("$TOP" -b --json --speed 0 --replay "$work/t.ntp" "$work/h.ntp" 2>/dev/null | grep -o '"host":[0-9]*' |
	sed 's/.*://' | tr '\n' ' ')
set -- $lines
[ $# -ge 3 ] && [ "$3" -lt $(($1 * 3 / 2)) ] || fail "records of the intervals: $lines (running totals?)"

# A damaged or cut file that is not the first: one line naming it with the
# records read and dropped (stderr, and the notes of the last JSON line);
# "replay ended" counts every file; a block that failed its CRC exits 1, as
# ntprof report (docs/failures.md), a file cut short 0.
"$NTPROF" generate -q -o "$work/dh.ntp" --target-out "$work/dt.ntp" -d 1 --rate 50000 -s 10 || exit 1
cp "$work/dt.ntp" "$work/dt_bad.ntp"
b=$(od -An -tu1 -j1000 -N1 "$work/dt.ntp" | tr -d ' ')
printf "\\$(printf %o $((b ^ 64)))" | dd of="$work/dt_bad.ntp" bs=1 seek=1000 conv=notrunc status=none
head -c 500000 "$work/dt.ntp" >"$work/dt_cut.ntp"
rw=$("$NTPROF" report "$work/dh.ntp" "$work/dt.ntp" | awk '/^records:/ { print $2 + $4 }')
"$TOP" -b --json --speed 0 -i 0.25 --replay "$work/dh.ntp" "$work/dt.ntp" >"$work/dj" 2>"$work/de"; rc=$?
[ $rc -eq 0 ] || fail "replay of two whole files: exit $rc"
grep -qx "ntprof-top: replay ended: $rw records" "$work/de" || fail "whole: want 'replay ended: $rw records': $(cat "$work/de")"
grep -q '"notes":\[\]' <<<"$(tail -1 "$work/dj")" || fail "whole files: notes on the last line"
for k in bad cut; do
	"$NTPROF" report "$work/dh.ntp" "$work/dt_$k.ntp" >"$work/rr" 2>/dev/null; rrc=$?
	note=$(sed -n "s/^note: \($(sed 's/[./]/\\&/g' <<<"$work")\/dt_$k\.ntp .*dropped\); this report is of the records read$/\1/p" "$work/rr")
	[ -n "$note" ] || { fail "report gave no note for dt_$k.ntp: $(cat "$work/rr")"; continue; }
	"$TOP" -b --json --speed 0 -i 0.25 --replay "$work/dh.ntp" "$work/dt_$k.ntp" >"$work/dj" 2>"$work/de"; rc=$?
	[ $rc -eq $rrc ] || fail "dt_$k.ntp: exit $rc, ntprof report's $rrc"
	grep -qxF "ntprof-top: $note; the intervals are of the records read" "$work/de" ||
		fail "dt_$k.ntp: stderr lacks the report's note '$note': $(cat "$work/de")"
	[ "$(grep -c "dt_$k" "$work/de")" -eq 1 ] || fail "dt_$k.ntp: not one line: $(cat "$work/de")"
	grep -qF "\"notes\":[\"${note//\//\\/}; the intervals are of the records read\"]" <<<"$(tail -1 "$work/dj")" ||
		fail "dt_$k.ntp: the last JSON line's notes: $(tail -1 "$work/dj" | grep -o '"notes":[^]]*]')"
	[ "$(grep -c "dt_$k" "$work/dj")" -eq 1 ] || fail "dt_$k.ntp: named on $(grep -c "dt_$k" "$work/dj") JSON lines, want one (the last)"
	# every file's records: the host file's and those read of the target's
	hn=$("$NTPROF" report "$work/dh.ntp" "$work/dt.ntp" | awk '/^records:/ { print $2 }')
	tn=$(grep -o '[0-9]* records read' <<<"$note" | awk '{ print $1 }')
	grep -qx "ntprof-top: replay ended: $((hn + tn)) records read, [1-9][0-9]* dropped" "$work/de" ||
		fail "dt_$k.ntp: want 'replay ended: $((hn + tn)) records read': $(cat "$work/de")"
done
expect_err "unexpected argument '$work/t.ntp'" "$TOP" -b "$work/t.ntp"

# A replay applies --session, --io-type and --size as live recording does.
"$NTPROF" generate -q -o "$work/mix.ntp" -r host -d 2 -s 10 --rate 20000 --sizes 4K,128K --read 50 || exit 1
sel=$("$TOP" -b --json --speed 0 -n 1 --io-type write --size 128K --replay "$work/mix.ntp" 2>/dev/null |
	grep -o '"label":"[^"]*"' | sort -u | tr '\n' ' ')
[ "$sel" = '"label":"write 128KiB nvme1n1" ' ] || fail "--io-type write --size 128K on a replay kept: $sel"
sel=$("$TOP" -b --json --speed 0 -n 1 --session nvme7n1 --replay "$work/mix.ntp" 2>/dev/null | grep -c '"label"')
[ "$sel" = 0 ] || fail "--session nvme7n1 on a replay of nvme1n1 kept $sel groups"
expect_err "a target recording's records name the target's backing devices" \
	"$TOP" -b --session nvme1n1 --replay "$work/t.ntp"

# Refusals: one line naming the option or file, non-zero.
expect_err "-n is for batch mode" "$TOP" -n 3 --replay "$work/run.ntp"
expect_err "--json is for batch mode" "$TOP" --json
expect_err "-s: 'x' is not a whole number" "$TOP" -b -s x
expect_err "-r: 'middle' is not host, target or both" "$TOP" -b -r middle
expect_err "--size: '3Q' is not a size" "$TOP" -b --size 4K,3Q
expect_err "--speed: '-1'" "$TOP" -b --speed -1 --replay "$work/run.ntp"
expect_err "unknown option '--frobnicate'" "$TOP" --frobnicate
expect_err "theme 'nosuch'" "$TOP" -b --theme nosuch --replay "$work/run.ntp"
expect_err "--kprobes and --fentry exclude each other" "$TOP" -b --kprobes --fentry
expect_err "option --btf needs a value" "$TOP" -b --btf
expect_err "theme '$work': Is a directory" "$TOP" -b --theme "$work" --replay "$work/run.ntp"
expect_err "the full screen needs a terminal" "$TOP" --replay "$work/run.ntp"
# An option the mode run has no use for is refused, not ignored (docs/top.md),
# as an option error: exit 2. run.ntp: one command in 100, host and target
# (generate's default), NVMe/TCP; sparse.ntp: the host alone.
refused() {
	local rc
	expect_err "$@"
	shift
	"$@" >/dev/null 2>&1 </dev/null; rc=$?
	[ $rc -eq 2 ] || fail "'$*' exited $rc, not 2"
}
refused "option -s 7: the replayed recording samples one command in 100" "$TOP" -b -n 1 -s 7 --replay "$work/run.ntp"
refused "option -t rdma: the replayed recording is of NVMe/TCP" "$TOP" -b -n 1 -t rdma --replay "$work/run.ntp"
refused "option -r target: the replayed recording holds the host side only" \
	"$TOP" -b -n 1 -r target --replay "$work/sparse.ntp"
refused "--kprobes is for the live source, not --replay" "$TOP" -b -n 1 --kprobes --replay "$work/run.ntp"
refused "--exact-queues is for the live source, not --replay" "$TOP" -b -n 1 --exact-queues --replay "$work/run.ntp"
refused "--width is for batch mode: add -b" "$TOP" --width 80 --replay "$work/run.ntp"
refused "--width is for batch mode's screens, not --json" "$TOP" -b --json --width 80 --replay "$work/run.ntp"
refused "--speed is for --replay" "$TOP" -b -n 1 --speed 2
refused "--what-if-servers is for the full screen, not -b" "$TOP" -b -n 1 --what-if-servers storage=2 --replay "$work/run.ntp"
refused "--dir is for the full screen, not -b" "$TOP" -b -n 1 --dir "$work" --replay "$work/run.ntp"
# what the recording holds is accepted: -s 100, and -r host of both sides
"$TOP" -b -n 1 --speed 0 -s 100 -r host -t tcp --replay "$work/run.ntp" >/dev/null 2>&1 ||
	fail "-s 100 -r host -t tcp refused on a replay of them"
expect_err "$work/missing.ntp" "$TOP" -b --replay "$work/missing.ntp"
printf 'not a recording' >"$work/bad.ntp"
expect_err "$work/bad.ntp" "$TOP" -b --replay "$work/bad.ntp"
# Live mode on a machine without NVMe-oF (or without the collector): says what is missing.
out=$("$TOP" -b -n 1 2>"$work/err" </dev/null); rc=$?
if [ $rc -eq 0 ]; then
	echo "note: live mode worked here (NVMe-oF present): $(head -2 <<<"$out")"
else
	[ -s "$work/err" ] || fail "live mode failed silently"
	echo "live mode here: $(cat "$work/err")"
fi
[ "$fails" -eq 0 ]
