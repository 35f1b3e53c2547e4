#!/usr/bin/env bash
# What a hostile or unlucky user does to ntprof and ntprof-top -b: outputs
# that would replace an input or follow a symbolic link, writes that fail
# (/dev/full), a recording cut to its header, a damaged file under -j -,
# names with control bytes, very long paths, options that would never end,
# a replayed file truncated under the reader. Each case checks the exit
# status, the one-line message and that nothing was lost. The binaries under
# test are the sanitized ones in make check: a sanitizer report fails a case.
# Environment: NTPROF, NTPROF_TOP (set by tests/run-tests.sh).
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-build/ntprof}
TOP=${NTPROF_TOP:-build/ntprof-top}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
case $TOP in /*) ;; *) TOP=$root/$TOP ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok() { echo "  ok   $1"; }
bad() { echo "  FAIL $1: $2"; fail=1; }
# run NAME EXPECTED-EXIT GREP-PATTERN CMD...: stdout+stderr in $out
run() {
	local name=$1 want=$2 pat=$3
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ]; then
		bad "$name" "exit $rc (want $want): $(head -c 600 <<<"$out")"
	elif grep -q 'runtime error\|AddressSanitizer\|LeakSanitizer' <<<"$out"; then
		bad "$name" "sanitizer: $(grep -m1 'runtime error\|Sanitizer' <<<"$out")"
	elif [ -n "$pat" ] && ! grep -qE -- "$pat" <<<"$out"; then
		bad "$name" "no /$pat/ in: $(head -c 600 <<<"$out")"
	else
		ok "$name"
	fi
}
same() { cmp -s "$1" "$2"; }

"$NTPROF" generate -q -o r.ntp -d 1 --seed 3 || { echo "generate failed"; exit 1; }
"$NTPROF" generate -q -o h.ntp --target-out t.ntp -d 1 --seed 4 || { echo "generate failed"; exit 1; }
cp r.ntp keep.ntp

# ---- an output that is an input, another output, or a link ----
run report-j-self 1 'refusing to write over r.ntp' "$NTPROF" report -j r.ntp r.ntp
same r.ntp keep.ntp && ok "report-j-self: recording intact" || bad report-j-self "r.ntp was changed"
ln r.ntp hard.ntp
run report-j-hardlink 1 'the same file' "$NTPROF" report -j hard.ntp r.ntp
run compare-j-self 1 'refusing to write over' "$NTPROF" compare -j ./r.ntp r.ntp h.ntp,t.ntp
same r.ntp keep.ntp || bad compare-j-self "r.ntp was changed"
run compare-j-joined-input 1 'refusing to write over' "$NTPROF" compare -j t.ntp r.ntp h.ntp,t.ntp
ln -s r.ntp link.json
run report-j-symlink 1 'symbolic link' "$NTPROF" report -j link.json h.ntp
same r.ntp keep.ntp || bad report-j-symlink "r.ntp was changed through the link"
# a link to a device or a pipe is fine (/dev/stdout into a pipe, /dev/null)
ln -s /dev/null null.json
run report-j-link-to-device 0 '' "$NTPROF" report -j null.json r.ntp
n=$("$NTPROF" report -j /dev/stdout r.ntp | grep -c '"schema":"ntprof-report"')
[ "$n" = 1 ] && ok "report-j-dev-stdout-pipe" || bad report-j-dev-stdout-pipe "$n JSON documents"
run generate-same-outputs 1 'refusing to write over' "$NTPROF" generate -q -o X.ntp -r both --target-out ./X.ntp
[ ! -e X.ntp ] && ok "generate-same-outputs: nothing created" || bad generate-same-outputs "X.ntp was created"
run generate-over-link 1 'symbolic link' "$NTPROF" generate -q -o link.json -d 0.1
same r.ntp keep.ntp || bad generate-over-link "r.ntp was changed through the link"
run record-j-over-o 1 'refusing to write over' "$NTPROF" record -o r.ntp -j ./r.ntp -d 1
same r.ntp keep.ntp || bad record-j-over-o "r.ntp was changed"
run record-o-link 1 'symbolic link' "$NTPROF" record -o link.json -d 1
# -j taken for a flag: a recording that is not an input is not replaced
cp h.ntp keep-h.ntp
run report-j-recording 1 '^ntprof: -j h.ntp: is an ntprof recording; refusing to write over it' \
	"$NTPROF" report -j h.ntp r.ntp
same h.ntp keep-h.ntp && [ "$(ls h.ntp* | wc -l)" = 1 ] && ok "report-j-recording: recording intact" ||
	bad report-j-recording "h.ntp was changed"
run compare-j-recording 1 'is an ntprof recording' "$NTPROF" compare -j h.ntp r.ntp r.ntp
same h.ntp keep-h.ntp || bad compare-j-recording "h.ntp was changed"
run record-j-recording 1 '-j h.ntp: is an ntprof recording' "$NTPROF" record -j h.ntp -d 1
same h.ntp keep-h.ntp || bad record-j-recording "h.ntp was changed"
echo 'old report' >old.json
run report-j-over-report 0 '' "$NTPROF" report -j old.json r.ntp
grep -q '"schema":"ntprof-report"' old.json && ok "report-j-over-report: replaced" ||
	bad report-j-over-report "old.json not replaced"
# a report written whole under its name, no temporary file left
run report-j-file 0 '' "$NTPROF" report -j out.json h.ntp t.ntp
[ "$(ls out.json* | wc -l)" = 1 ] && grep -q '"schema":"ntprof-report"' out.json &&
	ok "report-j-file: one file, whole" || bad report-j-file "$(ls out.json*)"

# ---- a failed write is an error ----
if [ -w /dev/full ]; then
	run report-j-devfull 1 'No space left on device' "$NTPROF" report -j /dev/full r.ntp
	run report-j-stdout-full 1 'No space left on device' sh -c '"$0" report -j - r.ntp >/dev/full' "$NTPROF"
	run report-text-full 1 'cannot write the report to stdout' sh -c '"$0" report r.ntp >/dev/full' "$NTPROF"
	run compare-j-stdout-full 1 'No space left on device' sh -c '"$0" compare -j - r.ntp r.ntp >/dev/full' "$NTPROF"
	run compare-text-full 1 'cannot write the comparison' sh -c '"$0" compare r.ntp r.ntp >/dev/full' "$NTPROF"
	run top-batch-full 1 'cannot write to stdout: No space left' sh -c '"$0" --replay r.ntp -b >/dev/full' "$TOP"
	run top-json-full 1 'cannot write to stdout: No space left' sh -c '"$0" --replay r.ntp -b --json >/dev/full' "$TOP"
	run dump-full 1 'dump: cannot write to stdout: No space left' sh -c '"$0" dump r.ntp >/dev/full' "$NTPROF"
	run help-full 1 'cannot write to stdout' sh -c '"$0" --help >/dev/full' "$NTPROF"
	run report-help-full 1 'cannot write to stdout' sh -c '"$0" report --help >/dev/full' "$NTPROF"
	run top-help-full 1 'cannot write to stdout' sh -c '"$0" --help >/dev/full' "$TOP"
	run generate-devfull 1 '/dev/full: cannot write: No space left' "$NTPROF" generate -q -o /dev/full -d 0.1
fi

# ---- damaged and cut inputs ----
head -c 256 r.ntp >head256.ntp		# a header and nothing else: no totals block
run report-header-only 0 'was cut short' "$NTPROF" report head256.ntp
run report-header-only-json 0 '"records"' "$NTPROF" report -j - head256.ntp
run join-header-only 0 '' "$NTPROF" report head256.ntp t.ntp
run compare-header-only 0 '' "$NTPROF" compare head256.ntp r.ntp
run top-header-only 0 'replay ended: 0 records' "$TOP" --replay head256.ntp -b
# a target clock at the end of the 64-bit range: the alignment's sums
# overflowed (UBSan at join_align.c); they wrap and every command joins
for off in 9223372036854775807 -9223372036854775808; do
	"$NTPROF" generate -q -o oh.ntp --target-out ot.ntp -d 0.2 --target-clock-offset $off
	run "join-clock-offset$off" 0 'matched \(100 % of the host' "$NTPROF" report oh.ntp ot.ntp
	run "compare-clock-offset$off" 0 '' "$NTPROF" compare oh.ntp,ot.ntp r.ntp
done
cp r.ntp dmg.ntp
printf '\377' | dd of=dmg.ntp bs=1 seek=5000 conv=notrunc 2>/dev/null
"$NTPROF" report -j - dmg.ntp >dmg.out 2>dmg.err
rc=$?
if [ $rc = 1 ] && [ "$(grep -c '^{' dmg.out)" = 1 ] && [ "$(grep -c '^}' dmg.out)" = 1 ] &&
   grep -q 'fails its CRC' dmg.err; then
	ok "report-j-damaged: one JSON value on stdout, the error on stderr, exit 1"
else
	bad report-j-damaged "exit $rc, stdout: $(grep -c '^{' dmg.out) values; stderr: $(cat dmg.err)"
fi

# ---- names: control bytes escaped, long messages whole ----
esc=$'evil\e]0;pwned\a.ntp'
run name-escaped 1 'evil\\x1b\]0;pwned\\x07\.ntp' "$NTPROF" report "$esc"
grep -q $'\e' <<<"$out" && bad name-escaped "a raw ESC reached the terminal"
run top-name-escaped 1 'evil\\x1b' "$TOP" --replay "$esc" -b
long=$(printf 'd%.0s' $(seq 1 700))/missing.ntp
run long-message 1 "$long" "$NTPROF" report "$long"
d200=$(printf 'd%.0s' $(seq 1 200))
mkdir -p "$d200/$d200"
deep=$d200/$d200/$(printf 'x%.0s' $(seq 1 200)).ntp
cp dmg.ntp "$deep"
run long-damaged 1 "$deep: block at offset [0-9]+ fails its CRC" "$NTPROF" report "$deep"
run long-damaged-note 1 "note: $deep is damaged" "$NTPROF" report "$deep"

# ---- options that would never end ----
run link-gbps-tiny 1 "option --link-gbps: '1e-30' is below" timeout 20 "$NTPROF" generate -q -o g.ntp --link-gbps 1e-30
[ ! -e g.ntp ] || bad link-gbps-tiny "g.ntp was written"
run link-gbps-slowest 0 '' timeout 60 "$NTPROF" generate -q -o g.ntp --link-gbps 0.001 -d 0.2
run speed-tiny 2 'option --speed: 1e-300 is below' timeout 20 "$TOP" --replay r.ntp -b --speed 1e-300

# ---- a replayed file truncated under ntprof-top's reader ----
"$NTPROF" generate -q -o big.ntp -d 8 --rate 20000 -s 1
"$TOP" --replay big.ntp -b -i 0.5 >/dev/null 2>sigbus.err &
pid=$!
sleep 1.5
truncate -s 100000 big.ntp
wait $pid
rc=$?
if [ $rc = 1 ] && grep -q 'big.ntp: the file was truncated while being read' sigbus.err; then
	ok "top-replay-truncated: a one-line error, exit 1"
else
	bad top-replay-truncated "exit $rc: $(head -c 300 sigbus.err)"
fi

exit $fail
