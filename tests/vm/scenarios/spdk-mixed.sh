# spdk-mixed: a kernel NVMe/TCP host in the guest against an SPDK nvmf_tgt on
# the machine that runs the test bed, over QEMU's user networking (the
# machine's 127.0.0.1 is 10.0.2.2 here): two kernels, two clocks. The guest
# records -r host into host.ntp; the machine records its target with
# `ntprof record -r target --spdk-target .../nvmf_tgt -s 100 -o target.ntp`
# and joins the two files (docs/spdk.md). Needs NTP_VM_NIC=user,model=virtio-net-pci
# and nvmf_tgt listening on the machine's 127.0.0.1:4420, subsystem
# $SPDK_NQN (default nqn.2016-06.io.spdk:cnode1), started before or while
# this scenario waits for it (up to 120 s). Not in the default set.
# tb-default: no
# tb-timeout: 400
NQN=nqn.2016-06.io.spdk:cnode1
tb_modules base net tcp
ip link set eth0 up 2>/dev/null && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2
[ -d /sys/class/net/eth0 ] || { tb_result spdk-mixed FAIL "no eth0: run with NTP_VM_NIC=user,model=virtio-net-pci"; exit 0; }
before=$(ls /sys/block | grep '^nvme' | tr '\n' ' ')
i=0
until echo "nqn=$NQN,transport=tcp,traddr=10.0.2.2,trsvcid=4420" > /dev/nvme-fabrics 2>/dev/null; do
	i=$((i + 1))
	[ $i -ge 60 ] && { tb_result spdk-mixed FAIL "no NVMe/TCP target at 10.0.2.2:4420 ($NQN) after 120 s"; exit 0; }
	sleep 2
done
dev=
for _ in $(seq 100); do
	for b in $(ls /sys/block | grep '^nvme' | grep -v -E '^nvme[0-9]+c[0-9]+n'); do
		case " $before " in *" $b "*) ;; *) dev=/dev/$b ;; esac
	done
	[ -n "$dev" ] && break
	sleep 0.1
done
tb_log "connected to nvmf_tgt on the machine: $dev"
secs=${NTP_VM_MIXED_SECS:-30}
ntp-load --rw randread --bs 4k --qd 1 --secs $((secs + 20)) $dev > $TB_OUT/load.txt 2>&1 &
load=$!
# the hooks' load under TCG takes seconds: record once they are in
ntprof record -r host -t tcp -s 100 -d $secs -i 10 -o $TB_OUT/host.ntp > $TB_OUT/record.txt 2>&1
rc=$?
wait $load
cat $TB_OUT/record.txt $TB_OUT/load.txt
n=$(ntprof dump $TB_OUT/host.ntp 2>/dev/null | tail -n +2 | grep -c '^host,')
for c in /sys/class/nvme/*; do echo 1 > $c/delete_controller; done
tb_check spdk-mixed "$rc == 0 && $n > 50" "kernel host against SPDK nvmf_tgt on the machine: exit $rc, $n host records in host.ntp ($(tail -1 $TB_OUT/load.txt | cut -c1-100))"
