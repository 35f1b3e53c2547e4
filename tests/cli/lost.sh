#!/usr/bin/env bash
# Records lost before they reached a recording: the file's lost block
# (docs/ntp-format.md, type 4) makes `report` (text and -j), `compare`,
# `dump` and `ntprof-top --replay` say so, as the live report does; a join
# names the file; a file cut after the block still says it; a file without
# one says nothing. The block is put into a generated recording here, as
# `ntprof record` writes it (before the trailer), CRCs and all.
# Environment: NTPROF, NTPROF_TOP (the binaries under test).
set -euo pipefail
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
NTPROF_TOP=${NTPROF_TOP:-build/ntprof-top}
tmp=$(mktemp -d /tmp/ntprof-lost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "lost.sh: $*" >&2; exit 1; }

if ! command -v python3 >/dev/null; then
	echo "lost.sh: python3 absent, skipped"
	exit 0
fi

gen() { "$NTPROF" generate -q "$@" || fail "generate $* failed"; }
gen -o "$tmp/plain.ntp" -r both -n 2000 -s 1 --seed 3
gen -o "$tmp/h.ntp" -r both -n 2000 -s 1 --seed 4 --target-out "$tmp/t.ntp"

# add_lost IN OUT COUNT [cut]: OUT is IN with a lost block of COUNT before
# its trailer (cut: and without the trailer, as a killed recorder leaves it)
add_lost() {
	python3 - "$@" <<'PY'
import struct, sys
src, dst, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
cut = len(sys.argv) > 4
def crc32c(data, crc=0xFFFFFFFF):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF
buf = open(src, 'rb').read()
off = struct.unpack_from('<I', buf, 12)[0]
while True:
    typ, = struct.unpack_from('<H', buf, off + 4)
    ln, = struct.unpack_from('<I', buf, off + 8)
    if typ == 3:
        break
    off += 24 + ln
payload = struct.pack('<QQ', 7 * 10**9, count)
hdr = struct.pack('<IHHIII', 0x4B4C4250, 4, 0, len(payload), 0, crc32c(payload))
hdr += struct.pack('<I', crc32c(hdr))
out = buf[:off] + hdr + payload + (b'' if cut else buf[off:])
open(dst, 'wb').write(out)
PY
}
add_lost "$tmp/plain.ntp" "$tmp/lost.ntp" 1234
add_lost "$tmp/plain.ntp" "$tmp/cut.ntp" 99 cut

note='note: records lost before reaching the recording: 1234 (ring buffer full, SPDK commands still in flight after the stop'"'"'s wait, or blocks ntprof-top dropped while its file lagged)'

# a file without the block: no note
"$NTPROF" report "$tmp/plain.ntp" >"$tmp/plain.txt" 2>&1 || fail "report of plain.ntp failed"
! grep -q "records lost" "$tmp/plain.txt" || fail "a note on a file that lost nothing"

# report: the live report's note; -j's lost_events; the rest as without it
"$NTPROF" report "$tmp/lost.ntp" >"$tmp/lost.txt" 2>&1 || fail "report of lost.ntp failed"
grep -qxF "$note" "$tmp/lost.txt" || fail "report lacks the note: $(cat "$tmp/lost.txt")"
diff <(grep -v "records lost" "$tmp/lost.txt") "$tmp/plain.txt" >/dev/null ||
	fail "the report changed beyond the note"
"$NTPROF" report -j - "$tmp/lost.ntp" >"$tmp/lost.json" || fail "report -j failed"
grep -q '"lost_events": *1234' "$tmp/lost.json" || fail "-j lacks lost_events 1234"
"$NTPROF" report -j - "$tmp/plain.ntp" | grep -q '"lost_events": *0' || fail "-j of plain.ntp: lost_events not 0"

# a file cut after the block (no trailer): the count up to there
"$NTPROF" report "$tmp/cut.ntp" >"$tmp/cut.txt" 2>&1 || fail "report of cut.ntp failed"
grep -q "^note: records lost before reaching the recording: 99 " "$tmp/cut.txt" ||
	fail "a cut file lost its count: $(cat "$tmp/cut.txt")"
grep -q "was cut short" "$tmp/cut.txt" || fail "cut.ntp not said cut"

# compare: a note for the side that lost records
"$NTPROF" compare "$tmp/plain.ntp" "$tmp/lost.ntp" >"$tmp/cmp.txt" 2>&1 || fail "compare failed"
grep -qF "note (B): records lost before reaching the recording: 1234 (" "$tmp/cmp.txt" ||
	fail "compare lacks the note: $(head -5 "$tmp/cmp.txt")"
! grep -q "note (A): records lost" "$tmp/cmp.txt" || fail "compare: a note on A"

# dump: the same rows, a note on stderr
"$NTPROF" dump "$tmp/lost.ntp" >"$tmp/lost.csv" 2>"$tmp/dump.err" || fail "dump failed"
"$NTPROF" dump "$tmp/plain.ntp" >"$tmp/plain.csv" 2>/dev/null
cmp -s "$tmp/lost.csv" "$tmp/plain.csv" || fail "dump's rows changed"
grep -qF "lost.ntp: records lost before reaching the recording: 1234 (" "$tmp/dump.err" ||
	fail "dump lacks the note: $(cat "$tmp/dump.err")"

# a join: the file that lost them named
add_lost "$tmp/t.ntp" "$tmp/t-lost.ntp" 55
"$NTPROF" report "$tmp/h.ntp" "$tmp/t-lost.ntp" >"$tmp/join.txt" 2>&1 || fail "join failed"
grep -qF "note: $tmp/t-lost.ntp: records lost before reaching the recording: 55 (" "$tmp/join.txt" ||
	fail "the join does not name the file: $(cat "$tmp/join.txt")"
grep -q "^note: records lost before reaching the recording: 55 " "$tmp/join.txt" ||
	fail "the join lacks the total"

# ntprof-top's replay: the note at the end, lost in its JSON lines
if [ -x "$NTPROF_TOP" ]; then
	"$NTPROF_TOP" -b --replay "$tmp/lost.ntp" >"$tmp/top.txt" 2>"$tmp/top.err" || fail "top replay failed"
	grep -qF "records lost before reaching the recording: 1234 (" "$tmp/top.txt" "$tmp/top.err" ||
		fail "top's replay lacks the note: $(cat "$tmp/top.err")"
	"$NTPROF_TOP" -b --json --replay "$tmp/lost.ntp" 2>/dev/null | tail -1 | grep -q '"lost_events": *1234' ||
		fail "top's JSON lacks lost_events 1234"
	"$NTPROF_TOP" -b --replay "$tmp/plain.ntp" >"$tmp/top0.txt" 2>&1 || fail "top replay of plain.ntp failed"
	! grep -q "records lost" "$tmp/top0.txt" || fail "top: a note on a file that lost nothing"
fi
echo "lost.sh: ok"
