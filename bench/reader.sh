#!/usr/bin/env bash
# Reader speed: records/s of the .ntp reader on a synthetic file of RECORDS
# records (default 1 M), and its time against `cat FILE >/dev/null` of the
# same file in the same run (page cache warm for both, best of 5 each); then
# the speed of each CRC32C implementation the CPU has (read_bench --crc).
# Usage: bench/reader.sh [RECORDS]   (env NTPROF, O)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
NTPROF=${NTPROF:-$O/ntprof}
n=${1:-1000000}
f=$(mktemp /tmp/ntprof-reader.XXXXXX.ntp)
trap 'rm -f "$f"' EXIT
"$NTPROF" generate -q -o "$f" -r host -s 1 -n "$n" --rate 1000000 --qd 128
best() {
	local b=999999 s e x
	for _ in 1 2 3 4 5; do
		s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
		x=$(( (e - s) / 1000 )); [ "$x" -lt "$b" ] && b=$x
	done
	echo "$b"
}
cat "$f" >/dev/null
tc=$(best cat "$f")
out=$("$O/bench/read_bench" "$f")
echo "$out"
tr=$(echo "$out" | awk '/next_block/ { print $5 * 1000000 }')
awk -v n="$n" -v mb="$(stat -c %s "$f")" -v tc="$tc" -v tr="$tr" 'BEGIN {
	printf "reader: %d records (%.0f MB): cat %.3f s, reader %.3f s = %.2fx cat, %.1f M records/s\n",
	       n, mb / 1e6, tc / 1e6, tr / 1e6, tr / tc, n / (tr / 1e6) / 1e6 }'
"$O/bench/read_bench" --crc
