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
missing=$(grep -c '^missing' $TB_OUT/probe.txt)
ntp_no_progs && left=0 || left=1
tb_check record-probe "$rc == 0 && $(grep -c '^load: ok$' $TB_OUT/probe.txt) == 1 && $left == 0" \
	"$(grep '^function hooks' $TB_OUT/probe.txt); $missing hooks missing (optional ones included); exit $rc"
