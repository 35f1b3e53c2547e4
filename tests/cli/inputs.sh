#!/usr/bin/env bash
# Inputs refused or read as they are (inpfix): compare's comma lists refuse an
# empty name and take an existing file whose name holds a comma whole
# (docs/reports.md); a record whose times one machine's clock cannot give (an
# end before its start) or of an unknown side is left out and counted
# (docs/reports.md); an option without a value given one, and --help's
# listing of -V. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
tmp=$(mktemp -d /tmp/ntprof-inputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
"$NTPROF" generate -q -o "$tmp/h.ntp" --target-out "$tmp/t.ntp" --rate 2000 -d 1 || exit 1

# ---- compare: empty names, a comma in a file's name ----
for a in "$tmp/h.ntp,,$tmp/t.ntp" "$tmp/h.ntp," ",$tmp/h.ntp"; do
	out=$("$NTPROF" compare "$a" "$tmp/h.ntp" 2>&1); rc=$?
	check "compare-empty-item $a" "$([ $rc = 1 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
		grep -Eq "^ntprof: compare: '$a' (has an empty file name between two commas|ends with a comma|starts with a comma)$" <<<"$out"
		echo $?)" "exit $rc: $(head -2 <<<"$out")"
done
cp "$tmp/h.ntp" "$tmp/a,b.ntp"
out=$("$NTPROF" compare "$tmp/a,b.ntp" "$tmp/h.ntp" 2>&1); rc=$?
check compare-comma-name "$([ $rc = 0 ] && grep -q "^A: $tmp/a,b.ntp, " <<<"$out"; echo $?)" "exit $rc: $(head -3 <<<"$out")"
out=$("$NTPROF" compare "$tmp/h.ntp,$tmp/t.ntp" "$tmp/h.ntp" 2>&1); rc=$?
check compare-joined "$([ $rc = 0 ] && grep -q "^A: $tmp/h.ntp,$tmp/t.ntp, " <<<"$out"; echo $?)" "exit $rc: $(head -3 <<<"$out")"

# ---- options: a value to an option that takes none; -V in --help ----
out=$("$NTPROF" report --detail=1 "$tmp/h.ntp" 2>&1); rc=$?
check detail-value "$([ $rc = 1 ] && [ "$out" = "ntprof: option --detail takes no value" ]; echo $?)" "exit $rc: $out"
out=$("$NTPROF" report -h=1 "$tmp/h.ntp" 2>&1); rc=$?
check short-value "$([ $rc = 1 ] && [ "$out" = "ntprof: option -h takes no value" ]; echo $?)" "exit $rc: $out"
out=$("$NTPROF" report -dZ "$tmp/h.ntp" 2>&1); rc=$?
check short-unknown "$([ $rc = 1 ] && [ "$out" = "ntprof: unknown option '-Z' (ntprof report --help)" ]; echo $?)" "exit $rc: $out"
# "-j=f.json" would write a file named "=f.json": refused, nothing written
abs=$(realpath "$NTPROF")	# the next three run in $tmp
out=$(cd "$tmp" && "$abs" report -j=out.json "$tmp/h.ntp" 2>&1); rc=$?
check short-equals "$([ $rc = 1 ] && [ ! -e "$tmp/=out.json" ] &&
	[ "$out" = "ntprof: option -j: a value is given after a space (-j out.json), not after '='" ]; echo $?)" \
	"exit $rc: $out"
# generate's own parser says the same as the others'
out=$(cd "$tmp" && "$abs" generate -q=1 -o g.ntp -d 0.01 2>&1); rc=$?
check gen-short-value "$([ $rc = 1 ] && [ "$out" = "ntprof: option -q takes no value" ]; echo $?)" "exit $rc: $out"
out=$(cd "$tmp" && "$abs" generate -q= -s=3 -o g.ntp -d 0.01 2>&1); rc=$?
check gen-short-equals-next "$([ $rc = 1 ] && [ "$out" = "ntprof: option -q takes no value" ]; echo $?)" "exit $rc: $out"
out=$(cd "$tmp" && "$abs" generate -qo 2>&1); rc=$?
check gen-cluster-needs-value "$([ $rc = 1 ] && [ "$out" = "ntprof: option -o needs a value" ]; echo $?)" "exit $rc: $out"
out=$(cd "$tmp" && "$abs" generate -o=g.ntp -d 0.01 2>&1); rc=$?
check gen-short-equals "$([ $rc = 1 ] && [ ! -e "$tmp/=g.ntp" ] &&
	[ "$out" = "ntprof: option -o: a value is given after a space (-o g.ntp), not after '='" ]; echo $?)" \
	"exit $rc: $out"
# "-X=" then "-Y=": the error names X (not Y); a missing value in a cluster its letter
out=$("$NTPROF" report -d= -s=3 "$tmp/h.ntp" 2>&1); rc=$?
check short-equals-next "$([ $rc = 1 ] && [ "$out" = "ntprof: option -d takes no value" ]; echo $?)" "exit $rc: $out"
out=$("$NTPROF" report "$tmp/h.ntp" -dj 2>&1); rc=$?
check cluster-needs-value "$([ $rc = 1 ] && [ "$out" = "ntprof: option -j needs a value" ]; echo $?)" "exit $rc: $out"
# -j -: an option's error is JSON on stdout, as every other (docs/json-schema.md), before or after the -j
for cmd in "report -j - --bogus $tmp/h.ntp" "report --bogus -j - $tmp/h.ntp" "report -j - --what-if-qd 0 $tmp/h.ntp" \
	   "compare --json=- --bogus $tmp/h.ntp $tmp/h.ntp" "record -d 1 --bogus -j -"; do
	out=$("$NTPROF" $cmd 2>"$tmp/err"); rc=$?
	check "json-option-error $cmd" "$([ $rc = 1 ] && [ ! -s "$tmp/err" ] &&
		python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert list(d)==["error"] and d["error"]' <<<"$out"
		echo $?)" "exit $rc: stdout '$out' stderr '$(cat "$tmp/err")'"
done
out=$("$NTPROF" --help); v=$("$NTPROF" -V)
check help-lists-V "$(grep -q -- '-V' <<<"$out" && grep -q '^ntprof ' <<<"$v"; echo $?)" "$(head -2 <<<"$out")"

# ---- a record whose times one clock cannot give: left out and counted ----
# edit IN OUT SIDE N WHAT: the Nth record of SIDE (1 host, 2 target) of IN gets
# WHAT (blkdone1: h_blk_complete = 1; rspsent1: t_rsp_sent = 1; side7: side 7), its block's
# CRCs made anew: the record reads as sound
edit() {
	python3 - "$@" <<'PY'
import struct, sys
# edit.py IN OUT SIDE N WHAT: the Nth record of side SIDE (1 host, 2 target) gets
# WHAT: "blkdone1" (h_blk_complete = 1), "rspsent1" (t_rsp_sent = 1), "side7"
src, dst, side, n, what = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    T.append(c)
def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
buf = bytearray(open(src, 'rb').read())
off, = struct.unpack_from('<I', buf, 12)
rs, = struct.unpack_from('<I', buf, 16)
seen = 0
while off + 24 <= len(buf):
    typ, = struct.unpack_from('<H', buf, off + 4)
    ln, cnt = struct.unpack_from('<II', buf, off + 8)
    if typ == 1:
        for i in range(cnt):
            r = off + 24 + i * rs
            if buf[r + 233] != side:
                continue
            if seen == n:
                if what == 'blkdone1':
                    struct.pack_into('<Q', buf, r + 8 * 9, 1)
                elif what == 'rspsent1':
                    struct.pack_into('<Q', buf, r + 8 * 19, 1)
                elif what == 'side7':
                    buf[r + 233] = 7
                p = bytes(buf[off + 24:off + 24 + ln])
                struct.pack_into('<I', buf, off + 16, crc32c(p))
                struct.pack_into('<I', buf, off + 20, crc32c(bytes(buf[off:off + 20])))
                open(dst, 'wb').write(buf)
                sys.exit(0)
            seen += 1
    off += 24 + ln
sys.exit('no such record')
PY
}
"$NTPROF" generate -q -o "$tmp/b.ntp" -r both --rate 2000 -d 1 -s 10 || exit 1
"$NTPROF" generate -q -o "$tmp/ho.ntp" -r host --rate 2000 -d 1 -s 10 || exit 1
"$NTPROF" generate -q -o "$tmp/to.ntp" -r target --rate 2000 -d 1 -s 10 || exit 1
edit "$tmp/b.ntp" "$tmp/b-e2e.ntp" 1 3 blkdone1 || exit 1
edit "$tmp/b.ntp" "$tmp/b-res.ntp" 2 3 rspsent1 || exit 1
edit "$tmp/ho.ntp" "$tmp/ho-e2e.ntp" 1 3 blkdone1 || exit 1
edit "$tmp/to.ntp" "$tmp/to-res.ntp" 2 3 rspsent1 || exit 1
for f in b-e2e b-res ho-e2e to-res; do
	base=${f%-*}
	good=$("$NTPROF" report "$tmp/$base.ntp" 2>&1)
	out=$("$NTPROF" report "$tmp/$f.ntp" 2>&1); rc=$?
	mean=$(sed -n 's/^latency (us): mean \([-0-9.]*\),.*/\1/p' <<<"$out")
	mean0=$(sed -n 's/^latency (us): mean \([-0-9.]*\),.*/\1/p' <<<"$good")
	# one command of ~195 left out: the mean moves by well under 10 %
	check "bad-time-$f" "$([ $rc = 0 ] && grep -q '^note: 1 records lacked a timestamp' <<<"$out" &&
		awk -v a="$mean" -v b="$mean0" 'BEGIN { exit !(a > 0.9 * b && a < 1.1 * b) }'; echo $?)" \
		"exit $rc, mean $mean (was $mean0): $(grep -E '^(latency|note)' <<<"$out" | head -3)"
	j=$("$NTPROF" report -j - "$tmp/$f.ntp" 2>/dev/null)
	check "bad-time-$f-json" "$(grep -q '"incomplete_records":1' <<<"$j"; echo $?)" \
		"$(grep -o '"incomplete_records":[0-9]*' <<<"$j" | head -2)"
done
# a record of neither side (side 7): left out and said, text and JSON
edit "$tmp/b.ntp" "$tmp/b-side.ntp" 1 3 side7 || exit 1
out=$("$NTPROF" report "$tmp/b-side.ntp" 2>&1); rc=$?
check other-side "$([ $rc = 0 ] && grep -q '^note: records of neither side (host 1, target 2) left out: 1$' <<<"$out"
	echo $?)" "exit $rc: $(grep '^note' <<<"$out" | head -2)"
j=$("$NTPROF" report -j - "$tmp/b-side.ntp" 2>/dev/null)
check other-side-json "$(grep -q '"records of neither side (host 1, target 2) left out: 1"' <<<"$j"; echo $?)" \
	"$(grep -A2 '"notes"' <<<"$j")"

# ---- probe: root refused is told why it may be; kprobes' absence said plainly ----
if [ "$(id -u)" = 0 ]; then
	out=$("$NTPROF" probe 2>/dev/null)
	check probe-kprobes "$(grep -Eq '^kprobes: (yes|no \(neither the kprobe PMU nor kprobe_events is there: CONFIG_KPROBES, CONFIG_KPROBE_EVENTS\))$' <<<"$out"; echo $?)" \
		"$(grep '^kprobes' <<<"$out")"
	if grep -q '^fentry: no (.*Operation not permitted' <<<"$out"; then
		check probe-eperm-hint "$(grep -q "^fentry: no (.*Operation not permitted; .*root" <<<"$out"; echo $?)" \
			"$(grep '^fentry' <<<"$out")"
	fi
	# a row says ok only where its flavour loads: none when no program does
	if grep -q '^bpf: no' <<<"$out"; then
		check probe-nothing-ok "$(! grep -q '^ok ' <<<"$out"; echo $?)" "$(grep '^ok ' <<<"$out" | head -2)"
	fi
fi
# root of a user namespace where unprivileged BPF is off: no program loads,
# no row says ok, and why is said
out=$(unshare -Ur "$NTPROF" probe 2>/dev/null)
if [ -n "$out" ] && [ "$(cat /proc/sys/kernel/unprivileged_bpf_disabled 2>/dev/null || echo 0)" != 0 ]; then
	check probe-userns "$(! grep -q '^ok ' <<<"$out" && grep -q '^bpf: no (.*; root of a user namespace' <<<"$out"
		echo $?)" "$(grep -E '^(ok |bpf)' <<<"$out" | head -3)"
fi

exit $fail
