# bench-hooks: what ntprof's hooks cost per I/O, from the kernel's own BPF
# statistics (kernel.bpf_stats_enabled: run_time_ns and run_cnt per program),
# at -s 1000, -s 1 and -s 1000 --exact-queues, QD1 4 KiB reads, host and target in one guest (-r both).
# Figures only (bench/hook_cost.sh): TCG emulates every instruction, so the
# absolute numbers are far above real hardware; the ratio to the I/O latency of
# the same run is the figure to read. Passes when the statistics were read.
# tb-timeout: 360
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result bench-hooks FAIL "NVMe/TCP setup failed"; exit 0; }
echo 1 > /proc/sys/kernel/bpf_stats_enabled || { tb_result bench-hooks SKIP "no kernel.bpf_stats_enabled"; exit 0; }
# "1000x": -s 1000 --exact-queues (every command tracked, its stage times summed)
for run in 1000 1 1000x; do
	s=${run%x}
	name=bench-hooks-s$s
	exact= eq=0
	[ "$run" != "$s" ] && { name=bench-hooks-s$s-exactq; exact=--exact-queues; eq=1; }
	ntp_rec_start $name -r both -s $s $exact --offline || { tb_result $name FAIL "ntprof record did not start"; continue; }
	tb_load --rw randread --bs 4k --qd 1 --secs 8
	bpftool prog show --json > $TB_OUT/$name.progs.json
	ntp_rec_stop INT
	# one object per program: sum run_time_ns and run_cnt over ntprof's (ntp_*)
	set -- $(sed 's/},{/}\n{/g' $TB_OUT/$name.progs.json | awk '
		/"name":"ntp_/ { t = $0; c = $0
			sub(/.*"run_time_ns":/, "", t); sub(/[^0-9].*/, "", t)
			sub(/.*"run_cnt":/, "", c); sub(/[^0-9].*/, "", c)
			ns += t; cnt += c; n++ }
		END { printf "%d %.0f %.0f\n", n, ns, cnt }')
	progs=$1; ns=$2; runs=$3
	per_io=$(awk "BEGIN{ printf \"%.0f\", $ns / ($TB_LOAD_IOS > 0 ? $TB_LOAD_IOS : 1) }")
	share=$(awk "BEGIN{ printf \"%.2f\", 100 * $per_io / ($TB_LOAD_MEAN_US * 1000) }")
	runs_io=$(awk "BEGIN{ printf \"%.1f\", $runs / ($TB_LOAD_IOS > 0 ? $TB_LOAD_IOS : 1) }")
	tb_figure $name sampling=$s exact_queues=$eq progs=$progs ios=$TB_LOAD_IOS hook_ns_per_io=$per_io runs_per_io=$runs_io mean_io_us=$TB_LOAD_MEAN_US share_pct=$share tcg=1
	tb_check $name "$progs > 0 && $runs > 0" \
		"-s $s $exact: $per_io ns of BPF per I/O ($runs_io program runs per I/O, $progs programs), $share % of the mean I/O latency $TB_LOAD_MEAN_US us (TCG)"
done
echo 0 > /proc/sys/kernel/bpf_stats_enabled
