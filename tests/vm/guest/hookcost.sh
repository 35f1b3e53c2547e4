# hookcost.sh - the hook-cost bench's phases (scenarios bench-hooks,
# bench-hooks-rdma, bench-tcpstream; bench/hook_cost.sh prints their figures,
# docs/performance.md says what they mean). Sourced after /tb/lib.sh and
# /tb/ntprof-checks.sh.

# Published per-invocation costs on a real x86-64 CPU (docs/performance.md,
# "Real hardware"): the kernel's trigger benchmark (selftests/bpf bench
# trig-*), M/s: an in-kernel loop alone, and the same loop calling a hooked
# function per hook type; and one getpgid() system call per iteration.
HC_PUB_KCOUNT=313.423 HC_PUB_FENTRY=107.149 HC_PUB_FEXIT=56.565 HC_PUB_RAWTP=166.774
HC_PUB_KPROBE=43.719 HC_PUB_KRETPROBE=18.358 HC_PUB_SYSCALL=18.179

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
# (ntp-hookcal syscall), as the kernel's trigger benchmark measures it.
hc_syscall() {
	ntp-hookcal syscall -n ${HC_CALLS:-100000} > $TB_OUT/hc-syscall.txt 2>&1
	HC_SYS_LINE=$(grep '^ntp-hookcal: calls=' $TB_OUT/hc-syscall.txt | tail -1)
	[ -n "$HC_SYS_LINE" ] || { cat $TB_OUT/hc-syscall.txt; return 1; }
	local kv
	for kv in ${HC_SYS_LINE#ntp-hookcal: }; do eval "HC_SYS_${kv%%=*}=${kv#*=}"; done
	# the TCG slowdown of kernel code: this guest's getpgid() over the
	# published one; and of a hook's dispatch: our empty fentry over the published
	HC_F_SYS=$(awk "BEGIN{ printf \"%.1f\", $HC_SYS_syscall_ns / (1000 / $HC_PUB_SYSCALL) }")
	HC_F_FENTRY=$(awk "BEGIN{ printf \"%.1f\", $HC_SYS_fentry_ns / (1000 / $HC_PUB_FENTRY - 1000 / $HC_PUB_KCOUNT) }")
	tb_figure hc-syscall $HC_SYS_LINE tcg_factor_syscall=$HC_F_SYS tcg_factor_fentry=$HC_F_FENTRY
}

# hc_base NAME [ntp-load options]: the load without any BPF program; sets
# HC_MEAN, the mean of every such run so far (one before the others, one after:
# TCG drifts)
hc_base() {
	local name=$1
	shift
	tb_load "$@" --secs ${HC_SECS:-8} > /dev/null
	HC_BASE_SUM=$(awk "BEGIN{ print ${HC_BASE_SUM:-0} + $TB_LOAD_MEAN_US }")
	HC_BASE_N=$(( ${HC_BASE_N:-0} + 1 ))
	HC_MEAN=$(awk "BEGIN{ printf \"%.1f\", $HC_BASE_SUM / $HC_BASE_N }")
	tb_figure $name mean_us=$TB_LOAD_MEAN_US ios=$TB_LOAD_IOS iops=$TB_LOAD_IOPS
}

# hc_calib NAME TRANSPORT [ntp-load options]: the calibration programs on
# every function ntprof hooks for `-r both -t TRANSPORT`, under the load.
# Sets HC_E_<kind> (ns per run of an empty program: fe fx tp kp kr rt) and
# HC_L_fe, HC_L_kp (one lookup), and HC_CAL_RUNS_fe... (runs per I/O).
hc_calib() {
	local name=$1 t=$2 i=0
	shift 2
	ntp-hookcal hooks -t $t -r both > $TB_OUT/$name.out 2> $TB_OUT/$name.err &
	local pid=$!
	while ! grep -q '^ntp-hookcal: attached' $TB_OUT/$name.out 2>/dev/null; do
		kill -0 $pid 2>/dev/null || { cat $TB_OUT/$name.err; return 1; }
		i=$((i + 1)); [ $i -gt 900 ] && { kill $pid; return 1; }
		sleep 0.2
	done
	tb_load "$@" --secs ${HC_SECS:-8} > /dev/null
	bpftool prog show --json > $TB_OUT/$name.progs.json
	kill -INT $pid; wait $pid
	hc_progstats $TB_OUT/$name.progs.json cal_ > $TB_OUT/$name.stats
	local k v line="" ios=$TB_LOAD_IOS
	for k in fe_empty fx_empty tp_empty kp_empty kr_empty rt_empty fe_lookup kp_lookup; do
		set -- $(awk -v n=cal_$k -v ios=$ios '$1 == n { printf "%.1f %.2f", $2 ? $3 / $2 : 0, $2 / (ios > 0 ? ios : 1) }' $TB_OUT/$name.stats)
		v=${1:-0}
		case $k in
		*_empty) eval "HC_E_${k%_empty}=$v" ;;
		*_lookup) eval "HC_L_${k%_lookup}=$v" ;;
		esac
		line="$line ${k}_ns=$v ${k}_runs_per_io=${2:-0}"
	done
	tb_figure $name transport=$t ios=$ios mean_us=$TB_LOAD_MEAN_US$line
}

# hc_ntprof NAME TRANSPORT S [ntp-load options]: ntprof record -r both at -s S
# under the load. Figures: programs per I/O by kind, BPF ns per I/O (TCG), in
# empty-program runs and lookups, the real-hardware estimate, the load's mean
# against the bare one (HC_MEAN), ntprof's own end-to-end mean.
hc_ntprof() {
	local name=$1 t=$2 s=$3
	shift 3
	ntp_rec_start $name -r both -t $t -s $s --offline -o $TB_OUT/$name.ntp ||
		{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; return 1; }
	tb_load "$@" --secs ${HC_SECS:-8} > /dev/null
	bpftool prog show --json > $TB_OUT/$name.progs.json
	ntp_rec_stop INT
	hc_progstats $TB_OUT/$name.progs.json ntp_ > $TB_OUT/$name.stats
	ntprof report -j $TB_OUT/$name.json $TB_OUT/$name.ntp > $TB_OUT/$name.report 2>&1
	local e2e=$(ntp_json_groups $TB_OUT/$name.json | grep -v '^records ' | sort -t'|' -k2 -n | tail -1 | cut -d'|' -f3)
	eval "HC_MEAN_s$s=$TB_LOAD_MEAN_US"
	# per program: its kind from the name's suffix; dispatch published per kind
	local fig
	fig=$(awk -v ios=$TB_LOAD_IOS -v mean=$TB_LOAD_MEAN_US -v base=$HC_MEAN -v e2e=${e2e:-0} \
		-v efe=$HC_E_fe -v efx=$HC_E_fx -v etp=$HC_E_tp -v ekp=$HC_E_kp -v ekr=$HC_E_kr -v ert=$HC_E_rt \
		-v lfe=$HC_L_fe -v fsys=$HC_F_SYS \
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
		if (m) missed = missed sprintf(" misses_%s=%d", n, m)
	}
	END {
		io = ios > 0 ? ios : 1
		nsio = ns / io
		printf "progs=%d ios=%d runs_per_io=%.2f entry_per_io=%.2f exit_per_io=%.2f tp_per_io=%.2f", progs, ios, allruns / io, runs["entry"] / io, runs["exit"] / io, runs["tp"] / io
		printf " bpf_ns_per_io=%.0f empty_units=%.1f", nsio, efe > 0 ? nsio / efe : 0
		printf " body_ns_per_io=%.0f body_lookups=%.1f", body / io, lfe > efe ? body / io / (lfe - efe) : 0
		printf " real_dispatch_ns=%.0f real_body_ns=%.0f real_ns_per_io=%.0f", dreal / io, fsys > 0 ? body / io / fsys : 0, dreal / io + (fsys > 0 ? body / io / fsys : 0)
		printf " mean_us=%s base_mean_us=%s slowdown_pct=%.1f share_pct=%.2f", mean, base, base > 0 ? 100 * (mean - base) / base : 0, mean > 0 ? 100 * nsio / (mean * 1000) : 0
		printf " ntprof_e2e_us=%s e2e_over_load=%.3f recursion_misses=%d%s\n", e2e, mean > 0 ? e2e / mean : 0, miss, missed
	}' $TB_OUT/$name.stats)
	tb_figure $name transport=$t sampling=$s $fig
	tb_check $name "$(grep -c . $TB_OUT/$name.stats) > 0 && $TB_LOAD_IOS > 0" "-s $s: $fig"
}

# hc_observer NAME: what a sampled command pays, from the load's own means:
# at -s N the mean is base + du + (ds - du) / N, ds and du the extra latency
# of a sampled and an unsampled command; -s 1 gives ds, -s 1000 about du.
hc_observer() {
	local name=$1
	tb_figure $name $(awk -v b=$HC_MEAN -v m1=$HC_MEAN_s1 -v m100=$HC_MEAN_s100 -v m1000=$HC_MEAN_s1000 'BEGIN {
		ds = m1 - b; du = m1000 - b
		printf "base_us=%s s1000_us=%s s100_us=%s s1_us=%s", b, m1000, m100, m1
		printf " unsampled_extra_us=%.1f sampled_extra_us=%.1f sampled_vs_rest_pct=%.1f\n", du, ds, 100 * (ds - du) / (b + du) }')
}
