#!/usr/bin/env bash
# ntprof report over 1 M and 10 M synthetic records (one file, role both: host
# and target records joined, every command sampled). For each size, in the
# same run: the time of `ntprof report` and of `cat FILE >/dev/null` on the
# same file (both from the page cache, pinned to one CPU, best of 5), records
# per second, the ratio to cat, and the peak RSS (/usr/bin/time -v). Times are
# CPU seconds (user + system, perf stat's task-clock when perf is there): the
# machine may be shared, and CPU time is what a busy neighbour cannot inflate;
# wall times are printed in parentheses.
# Targets: >= 10 M records/s on one core, <= 3x cat, peak RSS flat
# and < 64 MiB. Environment: NTPROF (default build/ntprof), BENCH_DIR (default
# a temporary directory, removed after), SIZES (default "1000000 10000000").
set -eu
cd "$(dirname "$0")/.."
NTPROF=${NTPROF:-build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$PWD/$NTPROF ;; esac
dir=${BENCH_DIR:-$(mktemp -d)}
[ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$dir"' EXIT
sizes=${SIZES:-"1000000 10000000"}
core=$(( $(nproc) - 1 ))	# one core: the target is per core

one() {		# "cpu wall" seconds of one run of "$@"
	local t0 t1 c
	if command -v perf >/dev/null; then
		t0=$(date +%s.%N)
		c=$(taskset -c $core perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null |
		    awk -F, '/task-clock/ {print $1 / 1000}')
		t1=$(date +%s.%N)
		awk -v c="$c" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f %.2f", c, b - a}'
	else
		/usr/bin/time -o "$dir/time.txt" -f '%U %S %e' taskset -c $core "$@" >/dev/null 2>&1
		awk '{printf "%.4f %.2f", $1 + $2, $3}' "$dir/time.txt"
	fi
}

best() {	# "cpu wall" of the run with the least CPU time out of 5
	local b='' w='' t
	for _ in 1 2 3 4 5; do
		t=$(one "$@")
		if [ -z "$b" ] || awk -v a="${t% *}" -v b="$b" 'BEGIN {exit !(a < b)}'; then
			b=${t% *}
			w=${t#* }
		fi
	done
	echo "$b $w"
}

printf '%-10s %8s %13s %13s %12s %8s %10s\n' records "file MB" "report s" "cat s" "records/s" "x cat" "peak RSS"
printf '%-10s %8s %13s %13s\n' "" "" "cpu (wall)" "cpu (wall)"
for n in $sizes; do
	f=$dir/bench-$n.ntp
	[ -s "$f" ] || nice "$NTPROF" generate -q -o "$f" -s 1 -n $((n / 2)) --rate 200000 --qd 64 --seed 1
	cat "$f" >/dev/null	# warm the page cache
	rec=$("$NTPROF" report "$f" | awk '/^records:/ {print $2 + $4}')
	tr=$(best "$NTPROF" report "$f")
	tc=$(best cat "$f")
	/usr/bin/time -o "$dir/time.txt" -v "$NTPROF" report "$f" >/dev/null
	rss=$(awk '/Maximum resident set size/ {print $6}' "$dir/time.txt")
	awk -v n="$rec" -v tr="${tr% *}" -v wr="${tr#* }" -v tc="${tc% *}" -v wc="${tc#* }" \
	    -v rss="$rss" -v mb="$(stat -c %s "$f")" 'BEGIN {
		if (tr <= 0) tr = 0.001
		if (tc <= 0) tc = 0.001
		printf "%-10d %8.0f %6.3f (%4.2f) %6.3f (%4.2f) %11.2fM %7.2fx %6.1f MiB\n",
		       n, mb / 1e6, tr, wr, tc, wc, n / tr / 1e6, tr / tc, rss / 1024 }'
done
echo "targets: >= 10 M records/s, <= 3x cat, peak RSS flat and < 64 MiB"
