# record-threadctx: the per-thread-context mode of the NVMe/TCP hooks, in a
# real guest. Where /proc/kallsyms gives the addresses of nvme_tcp_data_ready
# and nvmet_tcp_data_ready (root, the default here), the socket send hooks
# tell the drivers' sockets by their sk_data_ready and the hooks on
# nvme_tcp_try_send and nvmet_tcp_io_work are not loaded
# (src/collector/hooks.c, ntp_hook_unneeded; docs/hooks.md). Where kallsyms
# hides the addresses, those hooks give the socket hooks the queue per
# thread instead. kernel.kptr_restrict=2 hides every address from every
# reader, root included (kallsyms_show_value): the condition itself, no
# switch of ours. The value is put back at the end, and by tb_teardown
# should the scenario not finish.
#   record-threadctx-probe   `ntprof probe -r both` now uses both context hooks (no
#                            row says unused) and still loads
#   record-threadctx-progs   the recorder loaded the nvme_tcp_try_send and
#                            nvmet_tcp_io_work programs of its flavour
#   then, per recording, the checks of record-tcp (ntp_tcp_record_check):
#   every host record joined, every timestamp of its flow, stage means
#   adding up to the end-to-end mean, that mean not above the load's.
#   Recordings: 4 KiB reads at QD8 and 128 KiB writes at QD4 (R2T: the
#   data PDU's send) with the default flavour, 4 KiB reads at QD1 with
#   --kprobes (its kretprobes take the queue from the same context).
# tb-timeout: 360
. /tb/ntprof-checks.sh
KPTR=/proc/sys/kernel/kptr_restrict
[ -e /tmp/tb-kptr-restrict ] || cat $KPTR > /tmp/tb-kptr-restrict
echo 2 > $KPTR
tb_setup_tcp || { tb_result record-threadctx FAIL "NVMe/TCP setup failed"; exit 0; }

a_h=$(awk '$3 == "nvme_tcp_data_ready" { print $1; exit }' /proc/kallsyms)
ntprof probe -r both -t tcp > $TB_OUT/probe.txt 2>&1
rc=$?
un=$(grep -c '(unused' $TB_OUT/probe.txt)
# the flavour probe loads (kprobes without module BTF, 5.10): its entry and
# exit on both functions
fl=$(grep -q '^function hooks: fentry' $TB_OUT/probe.txt && echo 'fentry|fexit' || echo 'kprobe|kretprobe')
ctx=$(grep -cE "^ok +ntp_[a-z_]+ +($fl) +(nvme_tcp_try_send|nvmet_tcp_io_work) " $TB_OUT/probe.txt)
tb_check record-threadctx-probe "$rc == 0 && $un == 0 && $ctx == 4 && $(grep -c '^load: ok$' $TB_OUT/probe.txt) == 1" \
	"kptr_restrict $(cat $KPTR), nvme_tcp_data_ready in kallsyms at $a_h; probe: $ctx rows ok for the context hooks of $fl (of 4), $un unused; exit $rc"

ctx_progs() { # NAME FLAVOUR-SUFFIXES: the context programs NAME's recorder loaded
	# (by name: a program of an earlier run the kernel has not freed yet
	# is listed beside the recorder's)
	grep -E "^ntp_(h_send|t_work)_$2\$" $TB_OUT/$1.progs | sort -u | wc -l
}
ntp_tcp_record_check record-threadctx-read-qd8 "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 8
# the default flavour: fentry/fexit, kprobes without module BTF (5.10)
n=$(ctx_progs record-threadctx-read-qd8 '(fe|fx|kp|kr)')
tb_check record-threadctx-progs "$n == 4" \
	"$(grep -m1 'hooks:' $TB_OUT/record-threadctx-read-qd8.err | sed 's/.*hooks: //'): $n context programs loaded: $(grep -E '^ntp_(h_send|t_work)_' $TB_OUT/record-threadctx-read-qd8.progs | tr '\n' ' ')"
ntp_tcp_record_check record-threadctx-write128k-qd4 "$NTP_R2T_TS" 131072 --rw randwrite --bs 128k --qd 4
NTP_REC_FLAVOUR=kprobes
ntp_tcp_record_check record-threadctx-kprobes-read-qd1 "$NTP_READ_TS" 4096 --rw randread --bs 4k --qd 1
unset NTP_REC_FLAVOUR
n=$(ctx_progs record-threadctx-kprobes-read-qd1 '(kp|kr)')
tb_check record-threadctx-progs-kprobes "$n == 4" \
	"kprobes: $n of ntp_h_send_kp/kr, ntp_t_work_kp/kr loaded: $(grep -E '^ntp_(h_send|t_work)_' $TB_OUT/record-threadctx-kprobes-read-qd1.progs | tr '\n' ' ')"
cat /tmp/tb-kptr-restrict > $KPTR && rm -f /tmp/tb-kptr-restrict
