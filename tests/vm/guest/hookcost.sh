# hookcost.sh - the hook-cost bench's phases (scenarios bench-hooks,
# bench-hooks-rdma, bench-tcpstream; bench/hook_cost.sh prints their figures,
# docs/performance.md says what they mean). Sourced after /tb/lib.sh and
# /tb/ntprof-checks.sh.
#
# The guest is a process on a shared machine: what else runs there stretches
# every time the guest measures, by a factor that drifts over minutes. So a
# cost is always a ratio of two things measured at the same time: ntprof's
# programs against calibration programs attached beside them in the same
# phase (hc_cost), a latency with ntprof against the mean of bare runs just
# before and just after it (hc_lat).

# Published per-invocation costs on a real x86-64 CPU (docs/performance.md,
# "Real hardware"): the kernel's trigger benchmark (selftests/bpf bench
# trig-*), M/s: an in-kernel loop alone, and the same loop calling a hooked
# function per hook type; and one getpgid() system call per iteration.
HC_PUB_KCOUNT=313.423 HC_PUB_FENTRY=107.149 HC_PUB_FEXIT=56.565 HC_PUB_RAWTP=166.774
HC_PUB_KPROBE=43.719 HC_PUB_KRETPROBE=18.358 HC_PUB_SYSCALL=18.179
# and the kernel's hash-map lookup benchmark (bench bpf-hashmap-lookup), M/s,
# on a nearly empty map
HC_PUB_LOOKUP=50.739

# hc_progstats JSON PREFIX: one line per program name starting with PREFIX
# (summed over programs of that name): "name run_cnt run_time_ns recursion_misses"
hc_progstats() {
	sed 's/},{/}\n{/g' "$1" | awk -v pre="\"name\":\"$2" '
	index($0, pre) {
		n = $0; sub(/.*"name":"/, "", n); sub(/".*/, "", n)
		t = 0; c = 0; m = 0
		if ($0 ~ /"run_time_ns":/) { t = $0; sub(/.*"run_time_ns":/, "", t); sub(/[^0-9].*/, "", t) }
		if ($0 ~ /"run_cnt":/) { c = $0; sub(/.*"run_cnt":/, "", c); sub(/[^0-9].*/, "", c) }
		if ($0 ~ /"recursion_misses":/) { m = $0; sub(/.*"recursion_misses":/, "", m); sub(/[^0-9].*/, "", m) }
		cnt[n] += c; ns[n] += t; miss[n] += m
	}
	END { for (n in cnt) printf "%s %.0f %.0f %.0f\n", n, cnt[n], ns[n], miss[n] }' | sort
}

# hc_syscall: the dispatch cost of an empty fentry and kprobe in this guest
# (ntp-hookcal syscall), as the kernel's trigger benchmark measures it; sets
# HC_F_SYS, TCG's slowdown of kernel code (this guest's getpgid() over the
# published one).
hc_syscall() {
	HC_F_SYS=0
	ntp-hookcal syscall -n ${HC_CALLS:-200000} > $TB_OUT/hc-syscall.txt 2>&1
	HC_SYS_LINE=$(grep '^ntp-hookcal: calls=' $TB_OUT/hc-syscall.txt | tail -1)
	[ -n "$HC_SYS_LINE" ] || { cat $TB_OUT/hc-syscall.txt; return 1; }
	local kv
	for kv in ${HC_SYS_LINE#ntp-hookcal: }; do eval "HC_SYS_${kv%%=*}=${kv#*=}"; done
	HC_F_SYS=$(awk "BEGIN{ printf \"%.1f\", $HC_SYS_syscall_ns / (1000 / $HC_PUB_SYSCALL) }")
	local ffe=$(awk "BEGIN{ printf \"%.1f\", $HC_SYS_fentry_ns / (1000 / $HC_PUB_FENTRY - 1000 / $HC_PUB_KCOUNT) }")
	tb_figure hc-syscall ${HC_SYS_LINE#ntp-hookcal: } tcg_factor_syscall=$HC_F_SYS tcg_factor_fentry=$ffe
}

# hc_base NAME [ntp-load options]: the load without any BPF program; appends
# its mean to HC_BASES
hc_base() {
	local name=$1
	shift
	tb_load "$@" --secs ${HC_SECS:-8} > /dev/null
	HC_BASES="$HC_BASES $TB_LOAD_MEAN_US"
	tb_figure $name mean_us=$TB_LOAD_MEAN_US ios=$TB_LOAD_IOS iops=$TB_LOAD_IOPS
}

hc_cal_start() { # NAME TRANSPORT
	local i=0
	ntp-hookcal hooks -t $2 -r both > $TB_OUT/$1.cal.out 2> $TB_OUT/$1.cal.err &
	HC_CAL_PID=$!
	while ! grep -q '^ntp-hookcal: attached' $TB_OUT/$1.cal.out 2>/dev/null; do
		kill -0 $HC_CAL_PID 2>/dev/null || { cat $TB_OUT/$1.cal.err; return 1; }
		i=$((i + 1)); [ $i -gt 900 ] && { kill $HC_CAL_PID; return 1; }
		sleep 0.2
	done
}

# hc_lat NAME TRANSPORT S [ntp-load options]: the load's mean with ntprof
# record -r both -s S (nothing else attached), appended to HC_LATS; and the
# load's mean over the commands ntprof sampled against the rest's
hc_lat() {
	local name=$1 t=$2 s=$3 e2e
	shift 3
	ntp_rec_start $name -r both -t $t -s $s --offline -o $TB_OUT/$name.ntp ||
		{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return 1; }
	# --log before the options: tb_load takes a last argument starting with / for the device
	tb_load --log $TB_OUT/$name.iolog "$@" --secs ${HC_SECS:-8} > /dev/null
	ntp_rec_stop INT
	ntprof report -j $TB_OUT/$name.json $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
	e2e=$(ntp_json_groups $TB_OUT/$name.json | grep -v '^records ' | sort -t'|' -k2 -n | tail -1 | cut -d'|' -f3)
	HC_LATS="$HC_LATS $TB_LOAD_MEAN_US"
	# the sampled commands among the load's own I/Os (same run, same
	# conditions): a host record's byte offset is slba times the block size
	# (len / (nlb + 1)); the load's log gives each I/O's offset and latency
	local split med
	{ ntprof dump $TB_OUT/$name.ntp | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == "host" { printf "S %.0f\n", $(col["slba"]) * ($(col["len"]) / ($(col["nlb"]) + 1)) }'; cat $TB_OUT/$name.iolog; } |
		awk '$1 == "S" { s[$2] = 1; next } { print ($1 in s) ? "s" : "r", $2 }' > $TB_OUT/$name.split
	split=$(awk '$1 == "s" { sn++; st += $2 } $1 == "r" { rn++; rt += $2 }
		END { printf "sampled_ios=%d sampled_mean_us=%.1f rest_ios=%d rest_mean_us=%.1f sampled_vs_rest_pct=%.1f",
			sn, sn ? st / sn / 1000 : 0, rn, rn ? rt / rn / 1000 : 0, (sn && rn) ? 100 * (st / sn) / (rt / rn) - 100 : 0 }' $TB_OUT/$name.split)
	# medians too: under TCG a few very slow I/Os move a mean of tens of samples
	med=$(for k in s r; do grep "^$k " $TB_OUT/$name.split | cut -d' ' -f2 | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.1f ", NR ? v[int((NR + 1) / 2)] / 1000 : 0 }'; done)
	set -- $med
	split="$split sampled_p50_us=$1 rest_p50_us=$2 sampled_vs_rest_p50_pct=$(awk "BEGIN{ printf \"%.1f\", ($1 > 0 && $2 > 0) ? 100 * $1 / $2 - 100 : 0 }")"
	rm -f $TB_OUT/$name.split
	# the log stays beside the recording: bench/hook_cost.sh compares each
	# sampled I/O with its unsampled neighbours in the load's own order
	tb_figure $name transport=$t sampling=$s mean_us=$TB_LOAD_MEAN_US ios=$TB_LOAD_IOS ntprof_e2e_us=${e2e:-0} \
		e2e_over_load=$(awk "BEGIN{ printf \"%.3f\", ${e2e:-0} / $TB_LOAD_MEAN_US }") $split
}

# hc_bpftime NAME TRANSPORT S [ntp-load options]: ntprof record -r both -s S
# and the load with --bpf-time: each I/O's log line carries the run time of
# ntprof's programs while it was in flight (bpf_stats, read between I/Os),
# so that bench/hook_cost.sh can split a sampled I/O's extra latency into
# BPF run time and the rest. A phase of its own: the reads between I/Os
# touch the caches that the other phases measure.
hc_bpftime() {
	local name=$1 t=$2 s=$3
	shift 3
	ntp_rec_start $name -r both -t $t -s $s --offline -o $TB_OUT/$name.ntp ||
		{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return 1; }
	tb_load --log $TB_OUT/$name.iolog --bpf-time ntp_ "$@" --secs ${HC_SECS:-8} > /dev/null
	bpftool prog show --json > $TB_OUT/$name.progs.json	# the log's program ids, named
	ntp_rec_stop INT
	tb_figure $name transport=$t sampling=$s mean_us=$TB_LOAD_MEAN_US ios=$TB_LOAD_IOS
	tb_check $name "$(awk 'NF > 3 && $3 > 0' $TB_OUT/$name.iolog | wc -l) > 0" "-s $s: BPF run time in flight logged per I/O"
}

# hc_cost NAME TRANSPORT S [ntp-load options]: ntprof record -r both -s S and
# the calibration programs (ntp-hookcal hooks: an empty program of each kind
# and a one-lookup one on every function ntprof hooks) under the same load.
# Figures: ntprof's programs per I/O by kind, BPF ns per I/O (TCG), in runs of
# an empty fentry and in lookups beyond empty programs, and the estimate for a
# real CPU: published dispatch per kind, plus the bodies in lookups times a
# published lookup (both ratios of this phase: the machine's load cancels);
# and, for comparison, the bodies over HC_F_SYS (measured at another time).
hc_cost() {
	local name=$1 t=$2 s=$3 k v e l cal=""
	shift 3
	hc_cal_start $name $t || { tb_result $name FAIL "calibration programs did not attach"; return 1; }
	ntp_rec_start $name -r both -t $t -s $s --offline -o $TB_OUT/$name.ntp ||
		{ kill -INT $HC_CAL_PID; tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return 1; }
	tb_load "$@" --secs ${HC_SECS:-8} > /dev/null
	bpftool prog show --json > $TB_OUT/$name.progs.json
	ntp_rec_stop INT
	kill -INT $HC_CAL_PID; wait $HC_CAL_PID
	hc_progstats $TB_OUT/$name.progs.json ntp_ > $TB_OUT/$name.stats
	hc_progstats $TB_OUT/$name.progs.json cal_ > $TB_OUT/$name.cal.stats
	for k in fe_empty fx_empty tp_empty kp_empty kr_empty rt_empty fe_lookup kp_lookup; do
		v=$(awk -v n=cal_$k '$1 == n && $2 > 0 { printf "%.1f", $3 / $2 }' $TB_OUT/$name.cal.stats)
		eval "HC_C_$k=${v:-0}"
		cal="$cal ${k}_ns=${v:-0}"
	done
	local fig
	fig=$(awk -v ios=$TB_LOAD_IOS -v mean=$TB_LOAD_MEAN_US \
		-v efe=$HC_C_fe_empty -v efx=$HC_C_fx_empty -v etp=$HC_C_tp_empty -v ekp=$HC_C_kp_empty \
		-v ekr=$HC_C_kr_empty -v ert=$HC_C_rt_empty -v lfe=$HC_C_fe_lookup -v fsys=$HC_F_SYS -v plk=$HC_PUB_LOOKUP \
		-v kc=$HC_PUB_KCOUNT -v pfe=$HC_PUB_FENTRY -v pfx=$HC_PUB_FEXIT -v prt=$HC_PUB_RAWTP \
		-v pkp=$HC_PUB_KPROBE -v pkr=$HC_PUB_KRETPROBE '
	function disp(rate) { return 1000 / rate - 1000 / kc }
	{
		n = $1; c = $2; t = $3; m = $4
		k = substr(n, length(n) - 1)
		e = (k == "fe") ? efe : (k == "fx") ? efx : (k == "tb") ? etp : (k == "kp") ? ekp : (k == "kr") ? ekr : ert
		d = (k == "fe") ? disp(pfe) : (k == "fx") ? disp(pfx) : (k == "tb" || k == "rt") ? disp(prt) : (k == "kp") ? disp(pkp) : disp(pkr)
		kind = (k == "fe" || k == "kp") ? "entry" : (k == "fx" || k == "kr") ? "exit" : "tp"
		runs[kind] += c; ns += t; allruns += c; miss += m; progs++
		body += t - c * e; dreal += c * d
		per = per sprintf(" %s=%.2f/%.0f", n, c / (ios > 0 ? ios : 1), c ? t / c : 0)
		if (m) missed = missed sprintf(" misses_%s=%d", n, m)
	}
	END {
		io = ios > 0 ? ios : 1
		nsio = ns / io
		printf "progs=%d ios=%d runs_per_io=%.2f entry_per_io=%.2f exit_per_io=%.2f tp_per_io=%.2f", progs, ios, allruns / io, runs["entry"] / io, runs["exit"] / io, runs["tp"] / io
		printf " bpf_ns_per_io=%.0f empty_units=%.1f", nsio, (efe > 0 ? nsio / efe : 0)
		printf " body_ns_per_io=%.0f body_lookups=%.1f", body / io, (lfe > efe ? body / io / (lfe - efe) : 0)
		lk = (lfe > efe ? body / io / (lfe - efe) : 0)
		rb = lk * 1000 / plk
		printf " real_dispatch_ns=%.0f real_body_ns=%.0f real_ns_per_io=%.0f", dreal / io, rb, dreal / io + rb
		printf " real_ns_per_io_by_syscall=%.0f", dreal / io + (fsys > 0 ? body / io / fsys : 0)
		printf " share_pct=%.2f recursion_misses=%d%s\n", (mean > 0 ? 100 * nsio / (mean * 1000) : 0), miss, missed
		print per > "/dev/stderr"
	}' $TB_OUT/$name.stats 2> $TB_OUT/$name.perprog)
	tb_figure $name transport=$t sampling=$s $fig$cal
	tb_figure $name-progs $(cat $TB_OUT/$name.perprog)
	tb_check $name "$(grep -c . $TB_OUT/$name.stats) > 0 && $TB_LOAD_IOS > 0" "-s $s: $fig"
}

# hc_observer NAME: each -s run's slowdown against the bare runs around it
# (HC_BASES b0 b1 b2 b3 around HC_LATS m1000 m100 m1), and what a sampled
# command pays: at -s N a command's mean extra is du + (ds - du) / N, with ds
# and du the extra latency of a sampled and of an unsampled command; -s 1
# gives ds, -s 1000 about du.
hc_observer() {
	tb_figure $1 $(echo $HC_BASES $HC_LATS | awk '{
		b0 = $1; b1 = $2; b2 = $3; b3 = $4; m1000 = $5; m100 = $6; m1 = $7
		r1000 = m1000 / ((b0 + b1) / 2); r100 = m100 / ((b1 + b2) / 2); r1 = m1 / ((b2 + b3) / 2)
		printf "bare_us=%s/%s/%s/%s s1000_us=%s s100_us=%s s1_us=%s", b0, b1, b2, b3, m1000, m100, m1
		printf " slowdown_s1000_pct=%.1f slowdown_s100_pct=%.1f slowdown_s1_pct=%.1f", 100 * (r1000 - 1), 100 * (r100 - 1), 100 * (r1 - 1)
		printf " sampled_vs_rest_pct=%.1f\n", 100 * (r1 - r1000) / r1000 }')
}

# hc_transport NAME TRANSPORT [ntp-load options]: every phase for one transport
hc_transport() {
	local name=$1 t=$2 s
	shift 2
	HC_BASES="" HC_LATS=""
	hc_base $name-bare0 "$@"
	hc_lat $name-lat-s1000 $t 1000 "$@"
	hc_base $name-bare1 "$@"
	hc_lat $name-lat-s100 $t 100 "$@"
	hc_base $name-bare2 "$@"
	hc_lat $name-lat-s1 $t 1 "$@"
	hc_base $name-bare3 "$@"
	hc_observer $name-observer
	for s in 1000 100 1; do
		hc_cost $name-s$s $t $s "$@"
	done
}
