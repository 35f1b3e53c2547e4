# record-probe: `ntprof probe -r both -t tcp` on the guest's kernel: every
# required hook present in the flavour it picked, a real load and attach
# ("load: ok"), exit 0; and nothing of it left attached afterwards. Before the
# NVMe/TCP modules are loaded it must fail naming them, and still find fentry.
# tb-timeout: 150
. /tb/ntprof-checks.sh
if [ ! -d /sys/module/nvmet_tcp ]; then
	ntprof probe -r target -t tcp > $TB_OUT/probe-nomod.txt 2>&1
	rc=$?
	tb_check record-probe-missing "$rc != 0 && $(grep -c 'nvmet_tcp: not loaded' $TB_OUT/probe-nomod.txt) > 0" \
		"before nvmet-tcp is loaded: exit $rc, $(tail -1 $TB_OUT/probe-nomod.txt)"
	# whether fentry works is a fact of the kernel, not of the NVMe modules
	# (an SPDK-only machine loads none of them)
	tb_check record-probe-fentry-nomod "$(grep -c '^fentry: yes' $TB_OUT/probe-nomod.txt) == 1" \
		"before the modules: $(grep -m1 '^fentry' $TB_OUT/probe-nomod.txt)"
fi
tb_setup_tcp || { tb_result record-probe FAIL "NVMe/TCP setup failed"; exit 0; }
ntprof probe -r both -t tcp > $TB_OUT/probe.txt 2>&1
rc=$?
cat $TB_OUT/probe.txt
if [ ! -e /sys/kernel/btf/nvme_tcp ]; then
	# 5.10: no module BTF. Without a BTF file probe and record refuse, naming
	# the modules and how to make the file; with the file that the test bed
	# built from the -dbg package (tests/vm/btf.sh, in ntprof's default place)
	# the NVMe types come from it and the kprobe/raw_tp flavour loads.
	btf=/var/lib/ntprof/btf/$TB_KVER.btf
	mv $btf $btf.away 2>/dev/null
	ntprof probe -r both -t tcp > $TB_OUT/probe-nobtf.txt 2>&1
	rc1=$?
	ntprof record -r both -d 1 > $TB_OUT/record-nobtf.txt 2>&1
	rc2=$?
	mv $btf.away $btf 2>/dev/null
	tb_check record-probe-no-module-btf "$rc1 != 0 && $rc2 != 0 && $(grep -c 'no module BTF for nvme_core, nvme_tcp, nvmet, nvmet_tcp.*tools/ntprof-btf.sh' $TB_OUT/record-nobtf.txt) == 1" \
		"$TB_KVER without $btf: $(tail -1 $TB_OUT/record-nobtf.txt)"
	[ -f $btf ] || { tb_result record-probe FAIL "$btf missing from the initramfs (tests/vm/btf.sh)"; exit 0; }
	# a failed load: keep libbpf's and the verifier's words for the log
	[ $rc = 0 ] || NTPROF_DEBUG=1 ntprof probe -r both -t tcp > $TB_OUT/probe-debug.txt 2>&1
	tb_check record-probe-custom-btf "$rc == 0 && $(grep -c "nvme_tcp: loaded, no module BTF, types from $btf" $TB_OUT/probe.txt) == 1 && $(grep -c "nvmet_tcp: loaded, no module BTF, types from $btf" $TB_OUT/probe.txt) == 1 && $(grep -c 'using kprobes and raw_tp' $TB_OUT/probe.txt) == 1" \
		"$(grep -m1 '^linux_tcp_target' $TB_OUT/probe.txt | cut -c1-120); $(grep -m1 '^function hooks' $TB_OUT/probe.txt)"
	# what this kernel lacks, found in kallsyms: every missing row must be optional
	tb_log "missing hooks on $TB_KVER: $(grep '^missing' $TB_OUT/probe.txt | grep -c .) ($(grep '^missing.*kprobe' $TB_OUT/probe.txt | awk '{print $4}' | sort -u | tr '\n' ' '))"
fi
# the R2T is timed by exactly one hook in the flavour that loaded: its own
# where nvme_tcp_setup_h2c_data_pdu is a function, else the stand-in on
# blk_mq_tag_to_rq (its caller's lookup of the request, 5.10)
fl=$(grep -q '^function hooks: fentry' $TB_OUT/probe.txt && echo fentry || echo kprobe)
r2t_own=$(grep -c "^ok .* $fl  *nvme_tcp_setup_h2c_data_pdu " $TB_OUT/probe.txt)
r2t_sub=$(grep -c "^ok .* $fl  *blk_mq_tag_to_rq .*stands in for nvme_tcp_setup_h2c_data_pdu" $TB_OUT/probe.txt)
tb_check record-probe-r2t "$rc == 0 && $r2t_own + $r2t_sub == 1" \
	"$fl: nvme_tcp_setup_h2c_data_pdu ${r2t_own} row ok, blk_mq_tag_to_rq stand-in ${r2t_sub}: $(grep " $fl  *blk_mq_tag_to_rq " $TB_OUT/probe.txt | cut -c1-140)"
# where kallsyms shows the drivers' socket callbacks (root), both flavours
# do without the per-thread context hooks, and probe says so with the address
a_h=$(awk '$3 == "nvme_tcp_data_ready" { print $1; exit }' /proc/kallsyms)
a_t=$(awk '$3 == "nvmet_tcp_data_ready" { print $1; exit }' /proc/kallsyms)
if [ -n "$a_h" ] && [ -n "$a_t" ] && [ "$a_h" != 0000000000000000 ]; then
	un_h=$(grep -c " nvme_tcp_try_send .*(unused: .*nvme_tcp_data_ready at 0x${a_h#"${a_h%%[1-9a-f]*}"})" $TB_OUT/probe.txt)
	un_t=$(grep -c " nvmet_tcp_io_work .*(unused: .*nvmet_tcp_data_ready.* at 0x${a_t#"${a_t%%[1-9a-f]*}"})" $TB_OUT/probe.txt)
	tb_check record-probe-unneeded "$un_h + $un_t > 0 && $un_h == $(grep -c '^ok .* nvme_tcp_try_send ' $TB_OUT/probe.txt) && $un_t == $(grep -c '^ok .* nvmet_tcp_io_work ' $TB_OUT/probe.txt)" \
		"rows saying unused: nvme_tcp_try_send $un_h, nvmet_tcp_io_work $un_t (kallsyms: $a_h, $a_t)"
fi
# the packet arrivals take TCP's clock of the segment (docs/hooks.md): every
# kernel of the bed has tcp_sock.tcp_clock_cache (4.20 on)
tb_check record-probe-arrival-clock "$(grep -c "^packet arrival time: TCP's clock of the segment (tcp_sock.tcp_clock_cache)$" $TB_OUT/probe.txt) == 1" \
	"$(grep '^packet arrival time' $TB_OUT/probe.txt || echo 'no packet arrival time line')"
# what src/collector/kmod.c tells a loaded module from a built-in one by: a
# loaded module has /sys/module/<name>/initstate, a built-in one with
# parameters (printk, always built in) the directory without it
tb_check record-probe-kmod-sysfs "$([ -e /sys/module/nvme_tcp/initstate ] && [ -d /sys/module/printk/parameters ] &&
	[ ! -e /sys/module/printk/initstate ]; echo $?) == 0" \
	"nvme_tcp/initstate: $(cat /sys/module/nvme_tcp/initstate 2>&1); /sys/module/printk: $(ls /sys/module/printk 2>&1 | tr '\n' ' ')"
missing=$(grep -c '^missing' $TB_OUT/probe.txt)
ntp_no_progs && left=0 || left=1
tb_check record-probe "$rc == 0 && $(grep -c '^load: ok$' $TB_OUT/probe.txt) == 1 && $left == 0" \
	"$(grep '^function hooks' $TB_OUT/probe.txt); $missing hooks missing (optional ones included); exit $rc"
