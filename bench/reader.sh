#!/usr/bin/env bash
# Reader speed: records/s of the .ntp reader on a 1 M-record synthetic file,
# and its time against `cat FILE >/dev/null` in the same run (page cache warm
# for both). Usage: bench/reader.sh [RECORDS]   (env NTPROF, O)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
NTPROF=${NTPROF:-$O/ntprof}
n=${1:-1000000}
f=$(mktemp /tmp/ntprof-reader.XXXXXX.ntp)
trap 'rm -f "$f"' EXIT
"$NTPROF" generate -q -o "$f" -r host -s 1 -n "$n" --rate 1000000 --qd 128
cat "$f" >/dev/null
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
best() { local b=999 x; for _ in 1 2 3; do x=$(t "$@"); b=$(echo "if ($x < $b) $x else $b" | bc -l); done; echo "$b"; }
tc=$(best cat "$f")
tr=$(best "$O/bench/read_bench" "$f")
"$O/bench/read_bench" "$f"
printf 'reader: %s records, %s MB; cat %.3f s, read_bench (both passes) %.3f s\n' \
	"$n" "$(( $(stat -c %s "$f") / 1000000 ))" "$tc" "$tr"
