# record-exactq-rdma: --exact-queues over NVMe/RDMA (rxe): `ntprof record -r
# both -t rdma -s 10 --exact-queues` while the load generator keeps 8 4 KiB
# random reads in flight. The same sums as over TCP (bpf/ntprof_occ.h), fed by
# the RDMA hooks. Not in the default set (record-exactq covers the mechanism
# over TCP in CI); checks:
#   record-exactq-rdma   the kernel's command count equals the load's I/Os (counted in 4 KiB I/Os:
#                        the block layer may merge two), every counted command was summed or counted
#                        incomplete (at most 2 %: a skipped kprobe or nested
#                        completion), the counted total stays within the 8 the
#                        load keeps, agrees with 8 x ntprof's e2e / the load's
#                        mean within 10 %, and each stage's counted QD agrees
#                        with Little's law within 0.05 + 15 %
# tb-default: no
# tb-timeout: 300
. /tb/ntprof-checks.sh
name=record-exactq-rdma
tb_setup_rdma || { tb_result $name FAIL "NVMe/RDMA setup failed"; exit 0; }
ntp_rec_start $name -r both -t rdma -s 10 --exact-queues --offline -o $TB_OUT/$name.ntp -j $TB_OUT/$name.json ||
	{ tb_result $name FAIL "ntprof record did not start: $(tail -1 $TB_OUT/$name.err)"; exit 0; }
tb_load --rw randread --bs 4k --qd 8 --secs 8 > /dev/null
ntp_rec_stop INT
rc=$?
ntp_json_qd $TB_OUT/$name.json > $TB_OUT/$name.qd
ntp_json_groups $TB_OUT/$name.json > $TB_OUT/$name.groups
set -- $(head -1 $TB_OUT/$name.qd)
secs=${1:-0} cmds=${2:-0} qdc=${3:-0} qdi=${4:-0} counted=${5:-0} ios=$(( ${6:-0} / 4096 ))
lsecs=$(awk "BEGIN{printf \"%.3f\", $TB_LOAD_IOS / ($TB_LOAD_IOPS > 0 ? $TB_LOAD_IOPS : 1)}")
qd_c=$(awk 'NR > 1 { c += $2 } END { printf "%.4f", c }' $TB_OUT/$name.qd)
occ=$(awk "BEGIN{printf \"%.3f\", $qd_c * $secs / $lsecs}")
e2e=$(grep -v '^records ' $TB_OUT/$name.groups | head -1 | cut -d'|' -f3)
expect=$(awk "BEGIN{printf \"%.3f\", 8 * ${e2e:-0} / ($TB_LOAD_MEAN_US > 0 ? $TB_LOAD_MEAN_US : 1)}")
worst=$(awk 'NR > 1 { d = $2 - $3; if (d < 0) d = -d; b = 0.05 + 0.15 * ($2 > $3 ? $2 : $3); r = d / b; if (r > w) w = r } END { printf "%.2f", w }' $TB_OUT/$name.qd)
stages=$(awk 'NR > 1 { printf "%s%s %s/%s", s, $1, $2, $3; s = ", " }' $TB_OUT/$name.qd)
tb_figure $name ios=$TB_LOAD_IOS commands=$cmds qd_commands=$qdc qd_incomplete=$qdi occupancy_during_load=$occ \
	expect_8xe2e_over_load=$expect e2e_us=$e2e load_mean_us=$TB_LOAD_MEAN_US
tb_check $name "$rc == 0 && $counted == 1 && $ios >= $TB_LOAD_IOS && $ios <= $TB_LOAD_IOS + 8 && $qdc + $qdi == $cmds && $qdi <= 0.02 * $cmds && $occ > 0 && $occ <= 8.1 && ($occ - $expect) * ($occ - $expect) <= 0.01 * $expect * $expect && $worst <= 1" \
	"kernel counted $cmds 4 KiB commands, $ios 4 KiB I/Os in all groups' commands (load $TB_LOAD_IOS I/Os), $qdc summed + $qdi incomplete; counted occupancy $occ, 8 x e2e $e2e / load mean $TB_LOAD_MEAN_US us = $expect; counted/Little per stage: $stages (worst at $worst of the bound)"
