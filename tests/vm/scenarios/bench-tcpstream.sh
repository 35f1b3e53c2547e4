# bench-tcpstream: what ntprof costs traffic that is not NVMe-oF. A plain TCP
# stream over loopback (ntp-tcpstream: 1 KiB writes, one tcp_sendmsg each)
# with NVMe/TCP connected but idle, in one run:
#   bench-tcpstream-base   without BPF: CPU ns per send (sender + receiver)
#   bench-tcpstream-cal    the calibration programs on ntprof's hooks
#                          (ntp-hookcal hooks): an empty fentry/fexit pair on
#                          tcp_sendmsg is the least any socket hook costs
#   bench-tcpstream-ntprof ntprof record -r both -s 1000 beside the calibration
#                          programs: its extra CPU per send over the phase
#                          above, its socket programs' runs and BPF ns per send
#                          against the empty pair's in the same phase
# bench/hook_cost.sh prints them.
# Passes when the stream ran in each phase.
# tb-timeout: 300
# tb-default: no
. /tb/ntprof-checks.sh
. /tb/hookcost.sh
tb_setup_tcp || { tb_result bench-tcpstream FAIL "NVMe/TCP setup failed"; exit 0; }
echo 1 > /proc/sys/kernel/bpf_stats_enabled || { tb_result bench-tcpstream SKIP "no kernel.bpf_stats_enabled"; exit 0; }
SECS=${HC_STREAM_SECS:-5}

stream() { # NAME: run the stream, set ST_* from its last line
	ntp-tcpstream -s $SECS > $TB_OUT/$1.stream 2>&1
	ST_LINE=$(grep '^ntp-tcpstream:' $TB_OUT/$1.stream | tail -1)
	ST_sends=0 ST_cpu_ns_per_send=0
	for kv in ${ST_LINE#ntp-tcpstream: }; do eval "ST_${kv%%=*}=${kv#*=}"; done
}

# socket programs' runs and ns per send (names ntp_s_* or cal_* on tcp_send*)
sock_fig() { # STATS-FILE PATTERN
	awk -v sends=$ST_sends -v pat="$2" '$1 ~ pat { c += $2; t += $3 }
		END { s = sends > 0 ? sends : 1; printf "sock_runs_per_send=%.2f sock_bpf_ns_per_send=%.0f", c / s, t / s }' "$1"
}

stream bench-tcpstream-base
base=$ST_cpu_ns_per_send
tb_figure bench-tcpstream-base $ST_LINE
ntp-hookcal hooks -t tcp -r both > $TB_OUT/cal.out 2> $TB_OUT/cal.err &
pid=$! i=0
while ! grep -q '^ntp-hookcal: attached' $TB_OUT/cal.out 2>/dev/null && kill -0 $pid 2>/dev/null && [ $i -lt 900 ]; do
	sleep 0.2; i=$((i + 1))
done
stream bench-tcpstream-cal
bpftool prog show --json > $TB_OUT/cal.progs.json
hc_progstats $TB_OUT/cal.progs.json cal_ > $TB_OUT/cal.stats
# the calibration attaches an empty program and a lookup at each entry: the
# stream's figure is the extra of both, the per-program ns tell them apart
tb_figure bench-tcpstream-cal $ST_LINE extra_ns_per_send=$(awk "BEGIN{ printf \"%.0f\", $ST_cpu_ns_per_send - $base }") \
	$(sock_fig $TB_OUT/cal.stats '^cal_(fe|fx)_empty$')
tb_check bench-tcpstream-cal "$ST_sends > 0" "$ST_LINE"
# ntprof with the calibration programs still attached beside it: its socket
# programs' BPF time against the empty pair's of the same phase (the
# machine's load cancels), and its extra CPU per send against the phase above
ntp_rec_start bench-tcpstream-ntprof -r both -s 1000 --offline -o $TB_OUT/ntprof.ntp ||
	{ kill -INT $pid; tb_result bench-tcpstream-ntprof FAIL "ntprof record did not start"; exit 0; }
cal_cpu=$ST_cpu_ns_per_send
stream bench-tcpstream-ntprof
bpftool prog show --json > $TB_OUT/ntprof.progs.json
ntp_rec_stop INT
kill -INT $pid; wait $pid
hc_progstats $TB_OUT/ntprof.progs.json ntp_ > $TB_OUT/ntprof.stats
# the calibration's counters run since its own phase: this phase's share
hc_progstats $TB_OUT/ntprof.progs.json cal_ |
	awk 'NR == FNR { c[$1] = $2; t[$1] = $3; next } { print $1, $2 - c[$1], $3 - t[$1], $4 }' $TB_OUT/cal.stats - \
	> $TB_OUT/ntprof.cal.stats
fig="extra_ns_per_send=$(awk "BEGIN{ printf \"%.0f\", $ST_cpu_ns_per_send - $cal_cpu }") $(sock_fig $TB_OUT/ntprof.stats '^ntp_s_')"
fig="$fig cal_$(sock_fig $TB_OUT/ntprof.cal.stats '^cal_(fe|fx)_empty$' | sed 's/ / cal_/')"
tb_figure bench-tcpstream-ntprof $ST_LINE $fig
tb_check bench-tcpstream-ntprof "$ST_sends > 0" "$ST_LINE $fig"
stream bench-tcpstream-base-end
tb_figure bench-tcpstream-base-end $ST_LINE
echo 0 > /proc/sys/kernel/bpf_stats_enabled
