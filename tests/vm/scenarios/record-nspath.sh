# record-nspath: the target's device name follows its namespace when the
# namespace is disabled, given another device path and enabled again while
# ntprof records. The name is cached per CPU until a namespace is disabled
# (a hook on nvmet_ns_disable, docs/hooks.md "The target's device name"):
# the target records of reads before the change carry the first device, those
# after it the second, and no record of the second comes before the change.
# tb-timeout: 300
. /tb/ntprof-checks.sh
tb_modules tcp
TB_BACKDEV=$(tb_nullblk tb0) && back2=$(tb_nullblk tb1) ||
	{ tb_result record-nspath FAIL "null_blk setup failed"; exit 0; }
export TB_BACKDEV
tb_setup_tcp "$TB_BACKDEV" || { tb_result record-nspath FAIL "NVMe/TCP setup failed"; exit 0; }
ns=$NVMET/subsystems/$TB_NQN/namespaces/1
d1=${TB_BACKDEV#/dev/} d2=${back2#/dev/}
ntp_rec_start nspath -r target -s 1 --offline -o $TB_OUT/nspath.ntp ||
	{ tb_result record-nspath FAIL "did not start: $(tail -1 $TB_OUT/nspath.err)"; exit 0; }
tb_load --rw randread --bs 4k --qd 1 --secs 2
ios1=$TB_LOAD_IOS
echo 0 > $ns/enable && echo -n "$back2" > $ns/device_path && echo 1 > $ns/enable ||
	{ ntp_rec_stop INT; tb_result record-nspath FAIL "changing the namespace's path failed"; exit 0; }
# the host may drop the namespace's disk and make it again (the target's
# namespace-change event): read from whichever disk of the controller is back
dev= i=0
while [ -z "$dev" ] && [ $i -lt 60 ]; do
	for b in $(ls /sys/block | grep "^${TB_CTRL}n" | grep -v -E '^nvme[0-9]+c[0-9]+n'); do
		dd if=/dev/$b of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null && dev=/dev/$b && break
	done
	[ -n "$dev" ] || sleep 0.5
	i=$((i + 1))
done
[ -n "$dev" ] || { ntp_rec_stop INT; tb_result record-nspath FAIL "no disk of $TB_CTRL readable after the change"; exit 0; }
tb_load --rw randread --bs 4k --qd 1 --secs 2 "$dev"
ios2=$TB_LOAD_IOS
ntp_rec_stop INT
ntprof dump $TB_OUT/nspath.ntp > $TB_OUT/nspath.csv 2> $TB_OUT/nspath.dump.err
# reads only (the host's own commands at the change, identify and the like, are not reads)
awk -F, -v a=$d1 -v b=$d2 '$1 == "target" && $5 == "0x02" || $1 == "target" && $5 == "2" {
		if ($10 == a) { n1++; last1 = NR } else if ($10 == b) { n2++; if (!first2) first2 = NR } else other++ }
	END { printf "n1=%d n2=%d other=%d last1=%d first2=%d\n", n1, n2, other, last1, first2 }' $TB_OUT/nspath.csv > $TB_OUT/nspath.counts
eval "$(sed 's/ /;/g' $TB_OUT/nspath.counts)"
tb_check record-nspath "$n1 > 0 && $n2 > 0 && $other == 0 && $last1 < $first2" \
	"target reads on $d1: $n1 (load $ios1), then on $d2 after the path changed: $n2 (load $ios2, $dev), other names $other; last $d1 row $last1, first $d2 row $first2"
