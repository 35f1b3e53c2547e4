#!/usr/bin/env bash
# ntprof dump: golden CSV of a small generated recording (UPDATE=1 rewrites
# tests/golden/dump.csv), a file cut short (rows up to the last whole block,
# a note on stderr, exit 0), bad files (one-line error naming the file).
# Environment: NTPROF (the binary under test).
set -euo pipefail
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
tmp=$(mktemp -d /tmp/ntprof-dump.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "dump.sh: $*" >&2; exit 1; }

# A small recording with every flow: reads, in-capsule and R2T writes, a
# missed T_RSP_SENT and target records left out (empty cells). Delays are
# fixed or uniform so the numbers are the same on every machine.
"$NTPROF" generate -q -o "$tmp/small.ntp" -r both -n 16 -s 1 --qd 4 --queues 2 \
	--sizes 4K,64K --read 50 --seed 7 --rate 100000 --target-clock-offset 5000000000 \
	--delay host-block-sub=fixed:1us --delay host-driver-sub=uniform:3us:0.5 \
	--delay wire=uniform:6us:0.2 --delay target-recv=fixed:4us \
	--delay target-driver-sub=uniform:3us:0.3 --delay host-recv=fixed:4us \
	--delay host-driver-data=fixed:2us --delay target-driver-data=fixed:2us \
	--delay storage=uniform:80us:0.9 --delay target-driver-comp=fixed:1500ns \
	--delay target-send=fixed:3us --delay host-driver-comp=fixed:2us \
	--delay host-block-comp=fixed:1us --miss-rsp-sent 20 --drop-target 15
"$NTPROF" dump "$tmp/small.ntp" >"$tmp/small.csv" 2>"$tmp/err"
[ ! -s "$tmp/err" ] || fail "unexpected stderr: $(cat "$tmp/err")"
if [ "${UPDATE:-0}" = 1 ]; then
	cp "$tmp/small.csv" tests/golden/dump.csv
	echo "dump.sh: tests/golden/dump.csv updated"
fi
if ! cmp -s "$tmp/small.csv" tests/golden/dump.csv; then
	diff -u tests/golden/dump.csv "$tmp/small.csv" | head -20 >&2 || true
	fail "output differs from tests/golden/dump.csv (UPDATE=1 to accept)"
fi
# RFC 4180: CRLF line ends, same number of fields on every line, a header row
lines=$(wc -l <"$tmp/small.csv")
[ "$(grep -c $'\r$' "$tmp/small.csv")" = "$lines" ] || fail "lines not CRLF-terminated"
[ "$(awk -F, '{print NF}' "$tmp/small.csv" | sort -u)" = 40 ] || fail "rows do not all have 40 fields"
head -1 "$tmp/small.csv" | grep -q '^side,cntlid,qid,cid,' || fail "no header row"

# The bio's submission (record slot 23, last column): set in every host row
# whose ts_valid has bit 23, empty elsewhere; at or before h_blk_submit (two
# tags at 200k commands/s: most commands wait for one), and the mean of
# h_blk_submit - h_bio_submit is the report's own tag wait, read from the
# same records by the model
"$NTPROF" generate -q -o "$tmp/bio.ntp" -r both -n 200 -s 1 --qd 2 --rate 200000 --seed 5 --bio-stamp
"$NTPROF" dump "$tmp/bio.ntp" >"$tmp/bio.csv"
head -1 "$tmp/bio.csv" | grep -q ',t_bp_recv,t_bp_rsp,h_bio_submit'$'\r''$' || fail "bio: header: $(head -1 "$tmp/bio.csv")"
bio=$(awk -F, -v RS='\r\n' 'function hex(s,  v, i) {	# mawk has no strtonum
	for (i = 3; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
{
	stamped = int(hex($16) / 8388608) % 2	# bit 23
	if ($1 == "host" && stamped && $40 != "" && $40 <= $17) { n++; w += $17 - $40; before += $40 < $17 }
	else bad++
} END {printf "%d %d %d %.3f", bad, n, before, n ? w / n / 1000 : 0}' <(grep '^host,' "$tmp/bio.csv"))
awk -F, -v RS='\r\n' '$1 == "target" && $40 != "" {exit 1}' "$tmp/bio.csv" || fail "bio: a target row has h_bio_submit"
want=$("$NTPROF" report -j - "$tmp/bio.ntp" | awk '/"tag_wait":/ {t = 1} t && /"n":/ {sub(/.*:/, ""); sub(/,/, ""); n = $0}
	t && /"mean_us":/ {sub(/.*:/, ""); sub(/,/, ""); print n, $0; exit}')
set -- $bio
[ "$1" = 0 ] && [ "$2" = 200 ] && [ "$3" -gt 100 ] ||
	fail "bio: $1 host rows without a stamp at or before h_blk_submit, $2 with, $3 before it (want 0, 200, > 100)"
[ "$2 $4" = "$want" ] || fail "bio: $2 rows, mean h_blk_submit - h_bio_submit $4 us; the report's tag wait: $want"

# Cut short: a 3-second recording flushed every second, cut mid-block
"$NTPROF" generate -q -o "$tmp/long.ntp" -r host -d 3.5 --rate 200 -s 1 --seed 3
"$NTPROF" dump "$tmp/long.ntp" >"$tmp/long.csv"
size=$(stat -c %s "$tmp/long.ntp")
head -c $((size * 2 / 3)) "$tmp/long.ntp" >"$tmp/cut.ntp"
"$NTPROF" dump "$tmp/cut.ntp" >"$tmp/cut.csv" 2>"$tmp/err" || fail "dump of a cut file must exit 0"
rows=$(($(wc -l <"$tmp/cut.csv") - 1))
[ "$rows" -gt 0 ] && [ "$rows" -lt $(($(wc -l <"$tmp/long.csv") - 1)) ] || fail "cut file: $rows rows"
cmp -s "$tmp/cut.csv" <(head -n $((rows + 1)) "$tmp/long.csv") || fail "cut file rows are not a prefix of the whole file's"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "cut file: expected one line on stderr, got: $(cat "$tmp/err")"
grep -q "^ntprof: $tmp/cut.ntp: cut inside a block at offset [0-9]*; $rows records read, [1-9][0-9]* dropped$" "$tmp/err" ||
	fail "cut file: unexpected note: $(cat "$tmp/err")"

# A pipe written as a live recorder writes it: the rows of every whole block
# are out before the rest of the file is written, not held for a full batch
# or the end (with the read-ahead thread and without)
mkfifo "$tmp/fifo"
for threads in default 0; do
	if [ "$threads" = default ]; then set -- ; else set -- NTPROF_THREADS=0; fi
	env "$@" "$NTPROF" dump "$tmp/fifo" >"$tmp/live.csv" 2>"$tmp/err" &
	pid=$!
	exec 3>"$tmp/fifo"
	head -c $((size * 2 / 3)) "$tmp/long.ntp" >&3
	for _ in $(seq 200); do
		[ "$(wc -l <"$tmp/live.csv")" -gt "$rows" ] && break
		sleep 0.05
	done
	seen=$(($(wc -l <"$tmp/live.csv") - 1))
	tail -c +$((size * 2 / 3 + 1)) "$tmp/long.ntp" >&3
	exec 3>&-
	wait "$pid" || fail "live dump ($threads threads): exit $?: $(cat "$tmp/err")"
	[ "$seen" = "$rows" ] ||
		fail "live dump ($threads threads): $seen rows out before the rest was written, $rows in whole blocks"
	cmp -s "$tmp/live.csv" "$tmp/long.csv" || fail "live dump ($threads threads): rows differ from the file's"
done

# Bad files: one line naming the file, non-zero exit, nothing on stdout
check_bad() {
	local f=$1 want=$2 rc=0
	"$NTPROF" dump "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$f: exit 0"
	[ ! -s "$tmp/out" ] || fail "$f: printed output"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$f: not one line: $(cat "$tmp/err")"
	grep -q "^ntprof: $f: .*$want" "$tmp/err" || fail "$f: unexpected error: $(cat "$tmp/err")"
}
: >"$tmp/empty.ntp"
check_bad "$tmp/empty.ntp" "empty"
echo "not a recording, just some text that is long enough to be a header" >"$tmp/text.ntp"
check_bad "$tmp/text.ntp" "wrong magic"
check_bad "$tmp/missing.ntp" "cannot open"
# a flipped byte in a block's payload: every row but that block's, then a
# one-line error, exit 1; report and compare alike
cp "$tmp/long.ntp" "$tmp/flip.ntp"
printf '\xff' | dd of="$tmp/flip.ntp" bs=1 seek=$((size / 2)) conv=notrunc status=none
rc=0; "$NTPROF" dump "$tmp/flip.ntp" >"$tmp/flip.csv" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "corrupt file: exit $rc"
grep -q "^ntprof: $tmp/flip.ntp: block at offset [0-9]* fails its CRC; [0-9]* records read, [1-9][0-9]* dropped$" "$tmp/err" ||
	fail "corrupt file: unexpected error: $(cat "$tmp/err")"
read_n=$(sed -n 's/.* fails its CRC; \([0-9]*\) records read, \([0-9]*\) dropped$/\1 \2/p' "$tmp/err")
whole=$("$NTPROF" dump "$tmp/long.ntp" | tail -n +2 | wc -l)
[ "$(($(wc -l <"$tmp/flip.csv") - 1))" = "${read_n% *}" ] || fail "corrupt file: $(wc -l <"$tmp/flip.csv") lines for ${read_n% *} records"
[ "$(( ${read_n% *} + ${read_n#* } ))" = "$whole" ] ||
	fail "corrupt file: read ${read_n% *} + dropped ${read_n#* } is not the whole file's $whole (blocks after the damaged one lost?)"
# the rows of the file's end are there: the last row of the whole file is the flipped file's last
[ "$(tail -1 "$tmp/flip.csv")" = "$("$NTPROF" dump "$tmp/long.ntp" | tail -1)" ] || fail "corrupt file: the rows after the damaged block are missing"
for cmd in report "compare $tmp/long.ntp"; do
	rc=0; "$NTPROF" $cmd "$tmp/flip.ntp" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] || fail "${cmd%% *} of a corrupt file: exit $rc"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "^ntprof: $tmp/flip.ntp: block at offset [0-9]* fails its CRC; .* (the .* is of the records read)$" "$tmp/err" ||
		fail "${cmd%% *} of a corrupt file: unexpected error: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] || fail "${cmd%% *} of a corrupt file: no output"
done
# usage errors
rc=0; "$NTPROF" dump >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -ne 0 ] && grep -q "FILE" "$tmp/err" || fail "no FILE: exit $rc, $(cat "$tmp/err")"
rc=0; "$NTPROF" dump --bogus x >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -ne 0 ] && grep -q "'--bogus'" "$tmp/err" || fail "bad option: exit $rc, $(cat "$tmp/err")"
"$NTPROF" dump --help | grep -q "^usage: ntprof dump \[--header\] FILE" || fail "--help"
# --header: the header's fields, no CSV; bad files as above (golden outputs
# with the host's queues: tests/cli/report.sh)
"$NTPROF" dump --header "$tmp/small.ntp" >"$tmp/hdr" 2>"$tmp/err" || fail "--header: exit $?"
[ ! -s "$tmp/err" ] || fail "--header: unexpected stderr: $(cat "$tmp/err")"
grep -qx "format: 1.2" "$tmp/hdr" && grep -qx "role: both" "$tmp/hdr" && grep -qx "sampling: 1 in 1" "$tmp/hdr" &&
	grep -qx "host_queues: none recorded" "$tmp/hdr" || fail "--header: $(cat "$tmp/hdr")"
grep -q "^side," "$tmp/hdr" && fail "--header printed CSV"
rc=0; "$NTPROF" dump --header "$tmp/text.ntp" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -ne 0 ] && [ ! -s "$tmp/out" ] && grep -q "wrong magic" "$tmp/err" || fail "--header of a bad file: exit $rc, $(cat "$tmp/err")"
exit 0
