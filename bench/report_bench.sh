#!/usr/bin/env bash
# How fast ntprof reads recordings, each figure a ratio of two times measured
# in the same run (the machine may be shared: a ratio to `cat` of the same
# bytes, taken minutes apart from another, would not mean much):
#   report N      `ntprof report` of one file of N records (role both: host and
#                 target records joined, every command sampled) against `cat`
#                 of it, records per second, peak RSS
#   report -j     the same report as JSON of the first size: every stage's and
#                 component's quantiles kept (the text report prints none of
#                 the stages' and, without --detail, none of the components')
#   read()        report of the first size's file with read() only
#                 (NTPROF_NO_MMAP=1) against the same report as it reads by
#                 default (mapped while the windows fault seldom), in the cpu
#                 measure only: whether mapping pays on this machine and page
#                 cache (on every CPU the read-ahead thread uses read())
#   shared        report of the first size's file and of a 10-record file by
#                 the build linked with shared libraries (NTPROF_SHARED,
#                 default build/rel/ntprof) against the default static-pie
#                 build, in the cpu measure only: the dynamic loader's work
#                 at each start
#   written       report of the first size's file as just written, not read back
#                 (settle): what a report right after `ntprof record` reads, its
#                 page cache in the pieces the writes made, small folios in part,
#                 against `cat` of it in the same state
#   bio stamp     report of the first size's commands with the bio's submission
#                 in every host record (generate --bio-stamp, as a host whose
#                 kernel stamps bios writes them) against the same without
#   dump          `ntprof dump` (CSV) of the 1 M file against `cat`
#   join 2 N      report of a host file and a target file of N records together
#                 against `cat` of both
#   join 64 N     report of 63 host files and their target, per record, against
#                 join 2 of N records (the same records)
#   join 64 c     the same report against cat of its 64 files
#   cat 64        cat of those 64 files against cat of the 2 files of join 2 (the
#                 same bytes): what reading the many small files costs the
#                 kernel (their page cache in smaller folios), in join 64's ratio
#   page cache    the share of those files' pages by folio size (bench/folios.c,
#                 as root), as read back and as 4 MiB writes leave them
#   join 64 L     join 64 against join 2 with every file of both in the page
#                 cache as 4 MiB writes left it (large folios where the kernel
#                 makes them, copies in BENCH_DIR/L): join 64's ratio without
#                 the small folios of its small files; cat 64 L the same for cat
#   join 64 R     join 64 L against join 2 L with read() only (NTPROF_NO_MMAP=1,
#                 as join 64 reads its files), in the cpu measure; then the
#                 user and system seconds of the three at the largest size
#   join 16 R     the same records in 15 host files and their target (as
#                 4 MiB writes left them) against join 2 L with read() only,
#                 in the cpu measure: join 64's extra per record with fewer
#                 hosts' blocks held at once
#   groups 64 N   report of 64 groups (64 sizes, reads) of N records per record
#                 against one group (same flows: 4 KiB reads, no link
#                 serialisation)
#   per record    join 64 against join 2 (as read back, and L), and 64 groups
#                 against one, from the best times at the largest and the
#                 smallest size: the cost of the records between the two
#                 sizes, without the costs paid once per file or per group
# Two measures of every row, each a ratio within this run:
#   cpu    CPU seconds (user + system; perf stat's task-clock when perf is
#          there), pinned to one CPU, so the reader runs in the one thread
#          (ntp_read_ahead_wanted: one CPU); wall times in parentheses
#   wall   wall seconds on every CPU (two or more: the blocks are read and
#          checked by a second thread, docs/performance.md), from the
#          program's exec to its exit (perf stat's elapsed time; bash's time
#          without perf, which counts the fork of this shell too); the CPU
#          seconds of that run (both threads) in parentheses
# The two programs of a row run in turn, RUNS times each (pair): the times
# shown are the best of each, the ratio is the median of the RUNS ratios of
# runs side by side, and the range their least and largest.
# Page cache warm, each file as read back from the disk (settle). Peak RSS
# from /usr/bin/time -v, on every CPU.
# Environment: NTPROF (default build/ntprof), NTPROF_SHARED (above), GEN
# (the ntprof that writes the files, default NTPROF), BENCH_DIR (default a
# temporary directory under /var/tmp, removed after; files in it are
# reused), MEASURES (default "cpu wall"), SIZES (default "1000000
# 10000000"), ONLY (a subset of "report dump join groups"), RUNS (default 7).
set -eu
cd "$(dirname "$0")/.."
NTPROF=${NTPROF:-build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$PWD/$NTPROF ;; esac
NTPROF_SHARED=${NTPROF_SHARED:-$(dirname "$NTPROF")/rel/ntprof}	# make SHARED=1's link
dir=${BENCH_DIR:-$(mktemp -d /var/tmp/ntprof-bench.XXXXXX)}	# /var/tmp: on disk, not tmpfs (settle)
[ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir"
sizes=${SIZES:-"1000000 10000000"}
only=${ONLY:-"report dump join groups"}
core=$(( $(nproc) - 1 ))	# one core: the targets are per core
GEN=${GEN:-$NTPROF}	# the program that writes the files (another version's, to compare)
folios=${FOLIOS:-$(dirname "$NTPROF")/bench/folios}	# make bench builds it
[ -x "$folios" ] && [ "$(id -u)" = 0 ] || folios=	# reads /proc/kpageflags
rm -rf "$dir/L"		# largewritten's copies: as written in this run only
gen() { nice "$GEN" generate -q -s 1 --rate 200000 --qd 64 --seed 1 "$@"; }

pin="taskset -c $core"	# cleared for the wall rows
one() {		# "cpu wall" seconds of one run of "$@"
	local t0 t1 c TIMEFORMAT='%3R %3U %3S'
	if [ "$measure" = wall ] && command -v perf >/dev/null; then
		# perf's elapsed time runs from the program's exec to its exit:
		# not perf's own start, nor the fork of this shell (time's)
		LC_ALL=C perf stat -e task-clock -- "$@" 2>&1 >/dev/null |
			awk '/task-clock/ {c = $1 / 1000} / seconds time elapsed/ {w = $1}
			     END {printf "%.4f %.4f", c, w}'
	elif [ "$measure" = wall ]; then
		{ time "$@" >/dev/null 2>&1; } 2>"$dir/time.txt"
		awk '{printf "%.4f %.4f", $2 + $3, $1}' "$dir/time.txt"
	elif command -v perf >/dev/null; then
		t0=$(date +%s.%N)
		c=$($pin perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null |
		    awk -F, '/task-clock/ {print $1 / 1000}')
		t1=$(date +%s.%N)
		awk -v c="$c" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f %.2f", c, b - a}'
	else
		/usr/bin/time -o "$dir/time.txt" -f '%U %S %e' $pin "$@" >/dev/null 2>&1
		awk '{printf "%.4f %.2f", $1 + $2, $3}' "$dir/time.txt"
	fi
}

# settle FILE...: each file's pages dropped from the page cache and read
# back by `cat`, as a file read some time after it was written is. A file
# just written sits in the cache in the pieces its writes made; read back,
# in the larger ones the kernel's read-ahead makes, and copying it out
# (read(), what `cat` does and every row's reader) then took half the time
# (a 2-file join's files: `cat` 24 against 11.7 ms): which of the two a
# file was in moved every ratio to `cat` more than any change measured.
# On tmpfs nothing is dropped (its pages are the file): BENCH_DIR on a
# disk's file system for figures that compare.
settle() {
	sync "$@"
	for f; do
		dd if="$f" iflag=nocache count=0 status=none
	done
	cat "$@" >/dev/null
}

# largewritten FILE...: each file copied into $dir/L by 4 MiB writes, its
# page cache left as they made it (once a run: read back after a drop, a
# copy would be in readahead's folios again). settle's read-back puts a
# file's first 30 MiB or so in small folios (readahead's grow as it goes),
# so a join of 64 files of 21 MiB reads small folios where the 2 files of
# a join of as many records read 2 MiB ones
largewritten() {
	mkdir -p "$dir/L"
	for f; do
		[ -s "$dir/L/${f##*/}" ] || dd if="$f" of="$dir/L/${f##*/}" bs=4M status=none
	done
	sync
}

# the "first second" line of "$1" (lines of two times) with the least first
least() { printf '%s' "$1" | sort -g -k1,1 | head -n 1; }

# pair A... -- B...: "a wa b wb ratio lo hi", A and B run in turn, RUNS times
# each (A, B, A, B, ...): a and b the least time of each in this measure (wa
# and wb the other measure of those runs), ratio the median of the RUNS
# ratios A/B of runs side by side, lo and hi the least and the largest of
# them. A machine shared with others drifts over seconds: two bests taken
# one after the other can fall in different states of it, a pair of runs a
# moment apart in the same one.
pair() {
	local a=() b=() ta tb ratios='' as='' bs='' i
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	for ((i = 0; i < ${RUNS:-7}; i++)); do
		ta=$(one "${a[@]}")
		tb=$(one "${b[@]}")
		if [ "$measure" != cpu ]; then
			ta="${ta#* } ${ta% *}"
			tb="${tb#* } ${tb% *}"
		fi
		as+="$ta"$'\n'
		bs+="$tb"$'\n'
		ratios+="$(awk -v x="${ta% *}" -v y="${tb% *}" 'BEGIN {printf "%.6f", (x > 0 ? x : 0.0001) / (y > 0 ? y : 0.0001)}') "
	done
	echo "$(least "$as") $(least "$bs") $(printf '%s\n' $ratios | sort -g |
		awk '{r[NR] = $1} END {m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
			printf "%.4f %.4f %.4f", m, r[1], r[NR]}')"
}

rss() {		# peak RSS in MiB of one run of "$@"
	/usr/bin/time -o "$dir/time.txt" -v "$@" >/dev/null 2>&1 || true
	awk '/Maximum resident set size/ {printf "%.1f", $6 / 1024}' "$dir/time.txt"
}

records() {	# records in the report of "$@" (files)
	"$NTPROF" report "$@" 2>/dev/null | awk '/^records:/ {print $2 + $4}'
}

# per_record "A1 B1" "A2 B2": the best times of two rows of one pair at two
# sizes, (A2 - A1) / (B2 - B1): what a record beyond the smaller size costs
# in A against B, without what each costs once (a group's first use of its
# memory, its quantiles and text; a file's opening and first block)
per_record() {
	awk -v x="$1" -v y="$2" 'BEGIN { split(x, s, " "); split(y, l, " ")
		if (l[2] - s[2] > 0) printf "%.3fx", (l[1] - s[1]) / (l[2] - s[2]); else printf "-" }'
}

# usertime A...: "user system" seconds of one run of "$@", pinned as the
# cpu rows. A kernel that accounts by ticks (CONFIG_TICK_CPU_ACCOUNTING)
# splits a process's run time between the two by the ticks that fell in
# each: read them as means of several runs, not bests
usertime() {
	local TIMEFORMAT='%3U %3S'
	{ time $pin "$@" >/dev/null 2>&1; } 2>&1
}

# row NAME RECORDS PAIR RSS: PAIR as pair() prints it, the first time
# against the second, the ratio the median of the pairs'
row() {
	set -- "$1" "$2" $3 "$4"
	awk -v name="$1" -v n="$2" -v a="$3" -v wa="$4" -v b="$5" -v wb="$6" -v r="$7" -v lo="$8" \
	    -v hi="$9" -v rss="${10}" 'BEGIN {
		if (a <= 0) a = 0.001
		printf "%-10s %9d %6.3f (%5.3f) %6.3f (%5.3f) %8.2fM %7.2fx %5.2f-%-5.2f %7s MiB\n",
		       name, n, a, wa, b, wb, n / a / 1e6, r, lo, hi, rss }'
}

for measure in ${MEASURES:-cpu wall}; do
[ "$measure" = cpu ] && pin="taskset -c $core" || pin=
	if [ "$measure" = cpu ]; then
		echo "ntprof reading recordings: CPU seconds on one CPU, best of ${RUNS:-7} runs of each, taken in turn;"
		echo "ratio: the median of the ${RUNS:-7} ratios of runs side by side, range: the least and the largest"
		head="cpu (wall)"
	else
		echo "the same on every CPU ($(nproc)): wall seconds, best of ${RUNS:-7} runs of each, taken in turn;"
		echo "ratio: the median of the ${RUNS:-7} ratios of the wall times of runs side by side, range as above"
		head="wall (cpu)"
	fi
	printf '%-10s %9s %14s %14s %9s %8s %-11s %11s\n' what records "time s" "against s" "records/s" ratio range "peak RSS"
	printf '%-10s %9s %14s %14s\n' "" "" "$head" "$head"
	case " $only " in *" report "*)
		for n in $sizes; do
			f=$dir/both-$n.ntp
			[ -s "$f" ] || gen -o "$f" -n $((n / 2))
			settle "$f"
			row "report" "$(records "$f")" "$(pair "$NTPROF" report "$f" -- cat "$f")" \
			    "$(rss "$NTPROF" report "$f")"
		done
		f=$dir/both-${sizes%% *}.ntp
		row "report -j" "$(records "$f")" "$(pair "$NTPROF" report -j - "$f" -- cat "$f")" \
		    "$(rss "$NTPROF" report -j - "$f")"
		echo "  against: cat of the file; targets: <= 2x cat, >= 30 M records/s, peak RSS flat and < 64 MiB"
		if [ "$measure" = cpu ]; then	# on every CPU the read-ahead thread reads with read() anyway
			row "read()" "$(records "$f")" \
			    "$(pair env NTPROF_NO_MMAP=1 "$NTPROF" report "$f" -- "$NTPROF" report "$f")" \
			    "$(rss env NTPROF_NO_MMAP=1 "$NTPROF" report "$f")"
			echo "  against: the same report as it reads by default, mapped while the windows fault seldom"
			echo "  (docs/performance.md, \"Mapped or read()\"): above 1x, the mapping pays here"
			# (not when NTPROF is that build: make SHARED=1)
			if [ -x "$NTPROF_SHARED" ] && ! cmp -s "$NTPROF_SHARED" "$NTPROF"; then
				ft=$dir/ten.ntp
				[ -s "$ft" ] || gen -o "$ft" -n 5
				for g in "$f" "$ft"; do
					row "shared" "$(records "$g")" \
					    "$(pair "$NTPROF_SHARED" report "$g" -- "$NTPROF" report "$g")" \
					    "$(rss "$NTPROF_SHARED" report "$g")"
				done
				echo "  against: the same report by the default build (static-pie, docs/building.md): what loading"
				echo "  the shared libraries costs each run, above 1x"
			fi
		fi
		n=${sizes%% *}
		fw=$dir/written-$n.ntp	# written again at every run: never settled
		rm -f "$fw"
		gen -o "$fw" -n $((n / 2))
		row "written" "$(records "$fw")" "$(pair "$NTPROF" report "$fw" -- cat "$fw")" \
		    "$(rss "$NTPROF" report "$fw")"
		rm -f "$fw"
		echo "  against: cat of the same file as written; target: as report's"
		fb=$dir/bio-$n.ntp
		[ -s "$fb" ] || gen -o "$fb" -n $((n / 2)) --bio-stamp
		settle "$fb"
		row "bio stamp" "$(records "$fb")" "$(pair "$NTPROF" report "$fb" -- "$NTPROF" report "$f")" \
		    "$(rss "$NTPROF" report "$fb")"
		echo "  against: report of the same commands without the stamp; target: <= 1x"
	esac
	f1=$dir/both-1000000.ntp
	case " $only " in *" dump "*)
		[ -s "$f1" ] || gen -o "$f1" -n 500000
		settle "$f1"
		row "dump" 1000000 "$(pair "$NTPROF" dump "$f1" -- cat "$f1")" "$(rss "$NTPROF" dump "$f1")"
		echo "  against: cat of the file; target: <= 4x cat"
	esac
	case " $only " in *" join "*)
		# a host file and its target's of each size (the 1 M one's names
		# as before, so that a BENCH_DIR of then is reused)
		for n in $sizes; do
			[ "$n" = 1000000 ] && p=$dir/j2 || p=$dir/j2-$n
			[ -s "$p-t.ntp" ] || gen -o "$p-h.ntp" --target-out "$p-t.ntp" -n $((n / 2))
			settle "$p-h.ntp" "$p-t.ntp"
			row "join 2" "$(records "$p-h.ntp" "$p-t.ntp")" \
			    "$(pair "$NTPROF" report "$p-h.ntp" "$p-t.ntp" -- cat "$p-h.ntp" "$p-t.ntp")" \
			    "$(rss "$NTPROF" report "$p-h.ntp" "$p-t.ntp")"
		done
		# 63 hosts and their target of each size, against the 2 files
		# of the same size (a host's file: 2 MB at 1 M, 21 MB at 10 M)
		jbest=()
		for n in $sizes; do
			[ "$n" = 1000000 ] && p=$dir/j2 q=$dir/j64 || p=$dir/j2-$n q=$dir/j64-$n
			[ -s "$p-t.ntp" ] || gen -o "$p-h.ntp" --target-out "$p-t.ntp" -n $((n / 2))
			[ -s "$q-t.ntp" ] || gen -o "$q-h%d.ntp" --target-out "$q-t.ntp" --hosts 63 -n $((n / 2))
			set -- "$q"-h*.ntp "$q-t.ntp"
			settle "$p-h.ntp" "$p-t.ntp" "$@"
			pr=$(pair "$NTPROF" report "$@" -- "$NTPROF" report "$p-h.ntp" "$p-t.ntp")
			jbest+=("$(echo $pr | cut -d' ' -f1,3)")
			row "join $#" "$(records "$@")" "$pr" "$(rss "$NTPROF" report "$@")"
			row "join $# c" "$(records "$@")" "$(pair "$NTPROF" report "$@" -- cat "$@")" \
			    "$(rss "$NTPROF" report "$@")"
			row "cat $#" "$(records "$@")" "$(pair cat "$@" -- cat "$p-h.ntp" "$p-t.ntp")" "$(rss cat "$@")"
		done
		echo "  against: join 2 of cat of both; join $#, against join 2 of as many records (the same records); targets: <= 2.5x, <= 1x"
		echo "  join $# c: against cat of its $# files (as join 2 against cat of both); cat $#: cat of the $# files"
		echo "  against cat of the 2 (the same bytes), the kernel's part of join $#'s ratio to join 2"
		[ ${#jbest[@]} -lt 2 ] ||
			echo "  join $# against join 2 per record past the first size (per_record): $(per_record "${jbest[0]}" "${jbest[-1]}")"
		# The same joins with every file in the page cache as one large
		# write leaves it (largewritten): what join 64's ratio is without
		# the small folios of its small files (docs/performance.md, "What
		# limits the targets")
		jlbest=() jrbest=() j16best=()
		for n in $sizes; do
			[ "$n" = 1000000 ] && p=$dir/j2 q=$dir/j64 || p=$dir/j2-$n q=$dir/j64-$n
			set -- "$q"-h*.ntp "$q-t.ntp"
			if [ -n "$folios" ]; then
				echo "  page cache, share of the pages by folio size: join 2 ($n): $("$folios" "$p-h.ntp" "$p-t.ntp")"
				echo "  join $#'s hosts: $("$folios" "$q"-h*.ntp)"
			fi
			largewritten "$p-h.ntp" "$p-t.ntp" "$@"
			p=$dir/L/${p##*/} q=$dir/L/${q##*/}
			set -- "$q"-h*.ntp "$q-t.ntp"
			[ -z "$folios" ] || echo "  join $#'s hosts as 4 MiB writes left them: $("$folios" "$q"-h*.ntp)"
			pr=$(pair "$NTPROF" report "$@" -- "$NTPROF" report "$p-h.ntp" "$p-t.ntp")
			jlbest+=("$(echo $pr | cut -d' ' -f1,3)")
			lrss=$(rss "$NTPROF" report "$@")	# the R row's program too
			row "join $# L" "$(records "$@")" "$pr" "$lrss"
			row "cat $# L" "$(records "$@")" "$(pair cat "$@" -- cat "$p-h.ntp" "$p-t.ntp")" "$(rss cat "$@")"
			[ "$measure" = cpu ] || continue
			# in one thread join 2 maps its files and join 64 copies its
			# own with read(): both joins reading alike
			pr=$(pair "$NTPROF" report "$@" -- env NTPROF_NO_MMAP=1 "$NTPROF" report "$p-h.ntp" "$p-t.ntp")
			jrbest+=("$(echo $pr | cut -d' ' -f1,3)")
			row "join $# R" "$(records "$@")" "$pr" "$lrss"
			# the same records in 15 hosts' files and their target's,
			# read alike: whether join 64's extra per record comes with
			# the files merged or with the hosts' blocks held at once
			# (docs/performance.md, "What limits the targets"). Only
			# the copies are kept: the originals' pages would crowd
			# out of the page cache the files the other rows read
			m16=$dir/L/j16-$n
			if [ ! -s "$m16-t.ntp" ]; then
				gen -o "$dir/j16-$n-h%d.ntp" --target-out "$dir/j16-$n-t.ntp" --hosts 15 -n $((n / 2))
				largewritten "$dir/j16-$n"-h*.ntp "$dir/j16-$n-t.ntp"
				rm -f "$dir/j16-$n"-h*.ntp "$dir/j16-$n-t.ntp"
			fi
			pr=$(pair "$NTPROF" report "$m16"-h*.ntp "$m16-t.ntp" -- env NTPROF_NO_MMAP=1 "$NTPROF" report "$p-h.ntp" "$p-t.ntp")
			j16best+=("$(echo $pr | cut -d' ' -f1,3)")
			row "join 16 R" "$(records "$m16"-h*.ntp "$m16-t.ntp")" "$pr" "$(rss "$NTPROF" report "$m16"-h*.ntp "$m16-t.ntp")"
		done
		echo "  L: every file of both joins as 4 MiB writes left it in the page cache (large folios where the"
		echo "  kernel makes them); against join 2 and cat of its 2 files in the same state"
		[ ${#jlbest[@]} -lt 2 ] ||
			echo "  join $# L against join 2 L per record past the first size (per_record): $(per_record "${jlbest[0]}" "${jlbest[-1]}")"
		if [ ${#jrbest[@]} -ge 2 ]; then
			echo "  R: join $# L against join 2 L read with read() (NTPROF_NO_MMAP=1), as join $# reads"
			echo "  join $# R per record past the first size (per_record): $(per_record "${jrbest[0]}" "${jrbest[-1]}")"
			echo "  join 16 R: the same records in 16 files (15 hosts) against join 2 L read with read(), as join 16 reads"
			echo "  join 16 R per record past the first size (per_record): $(per_record "${j16best[0]}" "${j16best[-1]}")"
		fi
		if [ "$measure" = cpu ]; then	# the largest size's files, from the loop
			us=''
			for ((i = 0; i < ${RUNS:-7}; i++)); do
				us+="$(usertime "$NTPROF" report "$@") $(usertime "$NTPROF" report "$p-h.ntp" "$p-t.ntp")"
				us+=" $(usertime env NTPROF_NO_MMAP=1 "$NTPROF" report "$p-h.ntp" "$p-t.ntp")"$'\n'
			done
			printf '%s' "$us" | awk -v n="$#" 'NF == 6 {for (i = 1; i <= 6; i++) t[i] += $i; k++}
				END {if (k) printf "  user + system s, means of %d runs in turn: join %d L %.3f + %.3f, join 2 L %.3f + %.3f, join 2 L read() %.3f + %.3f\n",
					k, n, t[1] / k, t[2] / k, t[3] / k, t[4] / k, t[5] / k, t[6] / k}'
		fi
	esac
	case " $only " in *" groups "*)
		# 64 groups and one of each size: a cost per group (its first use
		# of its memory, its quantiles and text) weighs less in more records
		gbest=()
		for n in $sizes; do
			[ "$n" = 1000000 ] && p=$dir/g || p=$dir/g-$n-
			[ -s "${p}1.ntp" ] || gen -o "${p}1.ntp" -n $((n / 2)) --read 100 --link-gbps 0
			[ -s "${p}64.ntp" ] || gen -o "${p}64.ntp" -n $((n / 2)) --read 100 --link-gbps 0 \
				--sizes "$(seq -s, 4 4 256 | sed 's/,/K,/g')K"
			settle "${p}1.ntp" "${p}64.ntp"
			g=$("$NTPROF" report "${p}64.ntp" | grep -c '^== ')
			pr=$(pair "$NTPROF" report "${p}64.ntp" -- "$NTPROF" report "${p}1.ntp")
			gbest+=("$(echo $pr | cut -d' ' -f1,3)")
			row "groups $g" "$(records "${p}64.ntp")" "$pr" "$(rss "$NTPROF" report "${p}64.ntp")"
		done
		echo "  against: the same records in one group; target: <= 1x"
		[ ${#gbest[@]} -lt 2 ] ||
			echo "  groups $g against one group per record past the first size (per_record): $(per_record "${gbest[0]}" "${gbest[-1]}")"
	esac
done
