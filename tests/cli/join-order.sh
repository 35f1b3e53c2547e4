#!/usr/bin/env bash
# The order of the files on the command line does not change what the join
# aligns (docs/failures.md, "Recordings the join cannot align"): a busy host
# of another run given first is said, and the real host and its target are
# still aligned on each other, where the target's wall clock is 3 s off and
# the hosts' records are more than the join's window holds (so that the wall
# clocks alone pair the wrong instances of a command). Two recordings of
# different runs are said in one note. Environment: NTPROF.
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
if ! command -v python3 >/dev/null; then
	echo "join-order.sh: python3 absent, skipped"
	exit 0
fi
tmp=$(mktemp -d /tmp/ntprof-joinorder.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # NAME CONDITION-RESULT(0 ok) DETAILS
	if [ "$2" = 0 ]; then echo "  ok   $1"; else echo "  FAIL $1: $3"; fail=1; fi
}
"$NTPROF" generate -q -o "$tmp/h%d.ntp" --target-out "$tmp/t0.ntp" --hosts 2 --rate 150000 -d 1 -s 1 \
	--seed 4 || exit 1
"$NTPROF" generate -q -o "$tmp/x%d.ntp" --target-out "$tmp/xt.ntp" --hosts 2 --rate 2000 -d 1 -s 1 \
	--seed 9 || exit 1
# the target's wall clock (start_real_ns, the header's CRC again) 3 s late
python3 - "$tmp/t0.ntp" "$tmp/t.ntp" 3000000000 <<'PY' || exit 1
import struct, sys
src, dst, ns = sys.argv[1], sys.argv[2], int(sys.argv[3])
def crc32c(data, crc=0xFFFFFFFF):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF
buf = bytearray(open(src, 'rb').read())
hl, = struct.unpack_from('<I', buf, 12)
v, = struct.unpack_from('<Q', buf, 40)
struct.pack_into('<Q', buf, 40, (v + ns) % 2**64)
struct.pack_into('<I', buf, hl - 4, crc32c(bytes(buf[:hl - 4])))
open(dst, 'wb').write(bytes(buf))
PY
matched() { sed -n 's/^records: .* \([0-9]*\) matched.*/\1/p' <<<"$1"; }
# the stage table's names and means (avg QD is over the report's interval,
# which is on the first host file's clock)
means() { awk '/^stage /{on=1; next} on && NF == 0 {on=0} on {print $0}' <<<"$1" |
	sed -E 's/ +[0-9]+% .*//'; }
alone=$("$NTPROF" report "$tmp/h1.ntp" "$tmp/t.ntp" 2>&1)
first=$("$NTPROF" report "$tmp/x2.ntp" "$tmp/h1.ntp" "$tmp/t.ntp" 2>&1)
last=$("$NTPROF" report "$tmp/h1.ntp" "$tmp/x2.ntp" "$tmp/t.ntp" 2>&1)
n=$(matched "$alone")
check aligned-alone "$([ -n "$n" ] && grep -Eq "^records: $n host, [0-9]+ target; $n matched" <<<"$alone"; echo $?)" \
	"$(grep '^records:' <<<"$alone")"
check foreign-first-aligned "$([ "$(matched "$first")" = "$n" ]; echo $?)" \
	"$(grep '^records:' <<<"$first"), alone $n"
check foreign-last-aligned "$([ "$(matched "$last")" = "$n" ]; echo $?)" "$(grep '^records:' <<<"$last")"
check same-records "$([ "$(grep '^records:' <<<"$first")" = "$(grep '^records:' <<<"$last")" ]; echo $?)" \
	"$(grep '^records:' <<<"$first") / $(grep '^records:' <<<"$last")"
check same-means "$([ -n "$(means "$first")" ] && [ "$(means "$first")" = "$(means "$last")" ]; echo $?)" \
	"$(diff <(means "$first") <(means "$last") | head -4)"
# one note, of the foreign host, whichever comes first
for o in first last; do
	out=${!o}
	check "$o-notes" "$([ "$(grep -c '^note: .*clock offset' <<<"$out")" = 1 ] &&
		grep -q "^note: $tmp/x2.ntp: no clock offset to the other recordings found: none of its commands.*another run" \
			<<<"$out"; echo $?)" "$(grep '^note' <<<"$out" | head -3)"
done
# two recordings of different runs: one note says so
out=$("$NTPROF" report "$tmp/h1.ntp" "$tmp/xt.ntp" 2>&1)
check other-run-said "$([ "$(grep -c '^note: .*clock offset' <<<"$out")" = 1 ] &&
	grep -q "^note: $tmp/xt.ntp: .*a recording of another run or of another target" <<<"$out"; echo $?)" \
	"$(grep '^note' <<<"$out" | head -3)"
# hosts of one run with the target of another: the target, the one wrong
# file, is named first (a report names only the first few)
out=$("$NTPROF" report "$tmp/h1.ntp" "$tmp/h2.ntp" "$tmp/xt.ntp" 2>&1)
check target-named-first "$(grep -m1 '^note: ' <<<"$out" | grep -q "^note: $tmp/xt.ntp: "; echo $?)" \
	"$(grep '^note' <<<"$out" | head -3)"
# and the join's result is said: no pair at all (not when some joined)
check no-pair-said "$(grep -q '^note: no host record joined a target record: recordings of different runs' \
	<<<"$out" && grep -q '^records: .* 0 matched' <<<"$out"; echo $?)" "$(grep '^note\|^records' <<<"$out" | head -4)"
out=$("$NTPROF" report "$tmp/h1.ntp" "$tmp/x2.ntp" "$tmp/t.ntp" 2>&1)
check some-pair-not-said "$(grep -q '^note: no host record joined' <<<"$out" && echo 1 || echo 0)" \
	"$(grep '^note' <<<"$out" | head -3)"
exit $fail
