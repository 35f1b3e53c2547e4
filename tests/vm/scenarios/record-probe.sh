# record-probe: `ntprof probe -r both -t tcp` on the guest's kernel: every
# required hook present in the flavour it picked, a real load and attach
# ("load: ok"), exit 0; and nothing of it left attached afterwards. Before the
# NVMe/TCP modules are loaded it must fail naming them.
# tb-timeout: 150
. /tb/ntprof-checks.sh
if [ ! -d /sys/module/nvmet_tcp ]; then
	ntprof probe -r target -t tcp > $TB_OUT/probe-nomod.txt 2>&1
	rc=$?
	tb_check record-probe-missing "$rc != 0 && $(grep -c 'nvmet_tcp: not loaded' $TB_OUT/probe-nomod.txt) > 0" \
		"before nvmet-tcp is loaded: exit $rc, $(tail -1 $TB_OUT/probe-nomod.txt)"
fi
tb_setup_tcp || { tb_result record-probe FAIL "NVMe/TCP setup failed"; exit 0; }
ntprof probe -r both -t tcp > $TB_OUT/probe.txt 2>&1
rc=$?
cat $TB_OUT/probe.txt
if [ ! -e /sys/kernel/btf/nvme_tcp ]; then
	# 5.10: no module BTF, so the NVMe structures cannot be relocated; probe and
	# record must say exactly that (recording there is not supported)
	ntprof record -r both -d 1 > $TB_OUT/record-nobtf.txt 2>&1
	rc2=$?
	tb_check record-probe-no-module-btf "$rc != 0 && $rc2 != 0 && $(grep -c 'no module BTF for nvme_core, nvme_tcp, nvmet, nvmet_tcp' $TB_OUT/record-nobtf.txt) == 1" \
		"$TB_KVER: $(tail -1 $TB_OUT/record-nobtf.txt)"
	tb_result record-probe-${TB_KERNEL}-record SKIP "recording on a kernel without module BTF is not supported"
	exit 0
fi
missing=$(grep -c '^missing' $TB_OUT/probe.txt)
ntp_no_progs && left=0 || left=1
tb_check record-probe "$rc == 0 && $(grep -c '^load: ok$' $TB_OUT/probe.txt) == 1 && $left == 0" \
	"$(grep '^function hooks' $TB_OUT/probe.txt); $missing hooks missing (optional ones included); exit $rc"
