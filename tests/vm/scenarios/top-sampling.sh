# top-sampling: ntprof-top live (-b -r both -s 10, default flavour) started
# and ended four times while the load generator runs 4 KiB random reads at
# QD1: the setting of the one soft lockup of both guest CPUs seen (ntp-load
# and the nvme-tcp io_work kworker stuck for minutes, starting the moment
# ntprof-top -b -n 4 ended, i.e. detached its fentry/fexit programs, while the
# load ran, under multi-threaded TCG). In the default set since the bed runs
# single-threaded TCG.
#   top-sampling   every ntprof-top run and the load end, the load completes
#                  I/Os, and dmesg has no soft lockup, hung task or RCU stall
# tb-timeout: 400
# tb-restart: no
tb_setup_tcp || { tb_result top-sampling FAIL "NVMe/TCP setup failed"; exit 0; }
tb_load_bg --rw randread --bs 4k --qd 1 --secs 90
bad=0 runs=0
for k in 1 2 3 4; do
	LANG=C timeout -k 5 120 ntprof-top -b -n 2 -r both -s 10 -i 2 --width 100 \
		> "$TB_OUT/top$k.txt" 2> "$TB_OUT/top$k.err"
	rc=$?
	runs=$((runs + 1))
	[ $rc -eq 0 ] || bad=$((bad + 1))
	tb_log "ntprof-top run $k exited $rc (hooks detached under load): $(head -c 200 "$TB_OUT/top$k.err")"
	kill -0 $TB_LOAD_PID 2>/dev/null || { tb_log "load ended before run $k finished"; break; }
done
tb_load_wait
lockup=$(dmesg | grep -c -i 'soft lockup\|hung task\|rcu.*stall')
tb_figure top-sampling ios=$TB_LOAD_IOS soft_lockups=$lockup top_runs=$runs top_failed=$bad
tb_check top-sampling "$bad == 0 && $TB_LOAD_IOS > 0 && $lockup == 0" \
	"$runs ntprof-top runs attached and detached under load, $bad failed; load $TB_LOAD_IOS I/Os; $lockup soft lockup / hung task / RCU stall messages"
