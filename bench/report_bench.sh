#!/usr/bin/env bash
# ntprof report over 1 M and 10 M synthetic records (one file, role both: host
# and target records joined, every command sampled). For each size, in the
# same run: the time of `ntprof report` and of `cat FILE >/dev/null` on the
# same file (both from the page cache, best of 3), records per second, the
# ratio to cat, and the peak RSS (/usr/bin/time -v). Targets (issue 2):
# >= 10 M records/s on one core, <= 3x cat, peak RSS flat and < 64 MiB.
# Environment: NTPROF (default build/ntprof), BENCH_DIR (default a temp dir),
# SIZES (default "1000000 10000000").
set -eu
cd "$(dirname "$0")/.."
NTPROF=${NTPROF:-build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$PWD/$NTPROF ;; esac
dir=${BENCH_DIR:-$(mktemp -d)}
[ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$dir"' EXIT
sizes=${SIZES:-"1000000 10000000"}
cpu=$(( $(nproc) - 1 ))

best() {	# best wall time in seconds of 3 runs of "$@", output discarded
	local b= t
	for _ in 1 2 3; do
		/usr/bin/time -o "$dir/time.txt" -f %e taskset -c $cpu "$@" >/dev/null 2>&1
		t=$(tail -1 "$dir/time.txt")
		if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN{exit !(a<b)}'; then b=$t; fi
	done
	echo "$b"
}

printf '%-10s %10s %9s %9s %12s %8s %10s\n' records "file MB" "report s" "cat s" "records/s" "x cat" "peak RSS"
for n in $sizes; do
	f=$dir/bench-$n.ntp
	[ -s "$f" ] || nice "$NTPROF" generate -q -o "$f" -s 1 -n $((n / 2)) --rate 200000 --qd 64 --seed 1
	cat "$f" >/dev/null	# warm the page cache
	rec=$("$NTPROF" report "$f" | awk '/^records:/ {print $2 + $4}')
	tr=$(best "$NTPROF" report "$f")
	tc=$(best cat "$f")
	/usr/bin/time -o "$dir/time.txt" -v "$NTPROF" report "$f" >/dev/null
	rss=$(awk '/Maximum resident set size/ {print $6}' "$dir/time.txt")
	awk -v n="$rec" -v tr="$tr" -v tc="$tc" -v rss="$rss" -v mb="$(stat -c %s "$f")" 'BEGIN {
		printf "%-10d %10.0f %9.2f %9.2f %11.2fM %7.2fx %7.1f MiB\n",
		       n, mb / 1e6, tr, tc, n / (tr > 0 ? tr : 0.001) / 1e6, tr / (tc > 0 ? tc : 0.001), rss / 1024 }'
done
echo "targets: >= 10 M records/s, <= 3x cat, peak RSS flat and < 64 MiB"
