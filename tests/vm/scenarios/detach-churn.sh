# detach-churn: ntprof record (-r both -s 10, default flavour) attached and
# detached again and again (-d 1; up to 30 times, as long as the 200 s load
# runs: about 10 times under single-threaded TCG) while the load generator
# runs 4 KiB random reads at QD1: the setting of the soft lockup seen under multi-threaded TCG
# (tests/vm/README.md, "A vCPU stuck at a just-patched instruction"). In the default set since the bed runs
# single-threaded TCG: it checks that ntprof attaches and detaches under load
# without hanging a CPU. NTP_VM_TCG_OPTS="" reproduces the lockup (the guest
# panics: softlockup_panic=1; its stack is on the console).
#   detach-churn   every record run ends, the load completes I/Os, and dmesg
#                  has no soft lockup, hung task or RCU stall
# tb-timeout: 400
# tb-restart: no
. /tb/ntprof-checks.sh
tb_setup_tcp || { tb_result detach-churn FAIL "NVMe/TCP setup failed"; exit 0; }
tb_load_bg --rw randread --bs 4k --qd 1 --secs 200
bad=0 runs=0
while [ $runs -lt 30 ]; do
	timeout -k 5 60 ntprof record -r both -s 10 -d 1 --offline > /dev/null 2> "$TB_OUT/rec$runs.err"
	rc=$?
	runs=$((runs + 1))
	[ $rc -eq 0 ] || bad=$((bad + 1))
	tb_log "record run $runs exited $rc: $(grep 'hooks:' "$TB_OUT/rec$((runs - 1)).err")"
	kill -0 $TB_LOAD_PID 2>/dev/null || { tb_log "load ended before run $runs"; break; }
done
kill $TB_LOAD_PID 2>/dev/null
tb_load_wait
lockup=$(dmesg | grep -c -i 'soft lockup\|hung task\|rcu.*stall')
tb_figure detach-churn ios=$TB_LOAD_IOS soft_lockups=$lockup runs=$runs failed=$bad
tb_check detach-churn "$bad == 0 && $runs >= 5 && $TB_LOAD_IOS > 0 && $lockup == 0" \
	"$runs ntprof record runs attached and detached under load, $bad failed; load $TB_LOAD_IOS I/Os; $lockup soft lockup / hung task / RCU stall messages"
