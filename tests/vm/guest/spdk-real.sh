# spdk-real.sh: real SPDK in the guest (scenarios spdk-tcp and spdk-rdma).
# spdk_real tcp|rdma: nvmf_tgt (malloc bdev) and spdk_nvme_perf, QD1 4 KiB
# random reads, recorded as target and as host (two files, -s 1) and joined.
# SPDK is not in the initramfs: NTP_VM_SHARE names a directory of the
# machine holding bin/ (nvmf_tgt, spdk_nvme_perf), lib/ (every library they
# load: SPDK's, DPDK's and the system's, as ldd lists them), ibv/ (libibverbs'
# rxe provider) and etc/openssl.cnf, shared over 9p (docs/spdk.md). Both run
# without hugepages (--no-huge); nvmf_tgt is configured from JSON (the guest
# has no Python for rpc.py). Over TCP the socket hooks must split the records
# of both sides.
# "K of N": of a side's records in a file, those the socket hooks split
# (flags bit 4, NTP_REC_F_SOCK_SPLIT)
spdk_split() {
	ntprof dump "$1" 2>/dev/null | awk -F, -v s="$2" 'NR > 1 && $1 == s { n++
		f = $15; sub(/^0x/, "", f); d = length(f) >= 2 ? substr(f, length(f) - 1, 1) : "0"
		if (index("13579bdf", d)) k++ } END { printf "%d of %d", k, n }'
}

spdk_real() {
	local stuck= T=$1 NQN A TR B tgt rt perf rh prc m avg mean split_host split_target hr tr sh nh st nt
	NQN=nqn.2016-06.io.spdk:cnode1
	mkdir -p /share
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro share /share 2>/dev/null ||
		{ tb_result spdk-$T FAIL "no 9p share: run with NTP_VM_SHARE=DIR (bin/, lib/, ibv/)"; return; }
	B=/share/bin
	export LD_LIBRARY_PATH=/share/lib
	# SPDK initializes OpenSSL, which wants its configuration file
	[ -f /share/etc/openssl.cnf ] && export OPENSSL_CONF=/share/etc/openssl.cnf
	# DPDK and SPDK keep run-time files here (the initramfs has neither)
	mkdir -p /var/run /var/tmp /dev/shm
	if [ $T = rdma ]; then
		# libibverbs finds its providers by the .driver files and its own directory
		mkdir -p /etc/libibverbs.d /usr/lib/x86_64-linux-gnu/libibverbs
		echo "driver rxe" > /etc/libibverbs.d/rxe.driver
		cp /share/ibv/*.so /usr/lib/x86_64-linux-gnu/libibverbs/
		tb_modules rdma
		$TB_IP link show dummy0 >/dev/null 2>&1 || $TB_IP link add dummy0 type dummy
		$TB_IP addr add "$TB_RDMA_ADDR/24" dev dummy0 2>/dev/null
		$TB_IP link set dummy0 up
		[ -d /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev dummy0 ||
			{ tb_result spdk-$T FAIL "rdma link add failed: $(dmesg | tail -3 | tr '\n' ' ')"; return; }
		A=$TB_RDMA_ADDR TR=RDMA
	else
		$TB_IP link set lo up
		A=127.0.0.1 TR=TCP
	fi
	cat > $TB_OUT/tgt.json <<-EOJ
	{ "subsystems": [
	  { "subsystem": "bdev", "config": [
	    { "method": "bdev_malloc_create", "params": { "name": "Malloc0", "num_blocks": 131072, "block_size": 512 } } ] },
	  { "subsystem": "nvmf", "config": [
	    { "method": "nvmf_create_transport", "params": { "trtype": "$TR", "num_shared_buffers": 511 } },
	    { "method": "nvmf_create_subsystem", "params": { "nqn": "$NQN", "allow_any_host": true, "serial_number": "SPDK00000000000001" } },
	    { "method": "nvmf_subsystem_add_ns", "params": { "nqn": "$NQN", "namespace": { "bdev_name": "Malloc0" } } },
	    { "method": "nvmf_subsystem_add_listener", "params": { "nqn": "$NQN", "listen_address":
	      { "trtype": "$TR", "adrfam": "IPv4", "traddr": "$A", "trsvcid": "4420" } } } ] } ] }
	EOJ
	$B/nvmf_tgt -m 0x1 --no-pci --no-huge -s 1024 --json $TB_OUT/tgt.json > $TB_OUT/tgt.log 2>&1 &
	tgt=$!
	for _ in $(seq 120); do grep -q "NVMe/$TR Target Listening" $TB_OUT/tgt.log && break; kill -0 $tgt 2>/dev/null || break; sleep 1; done
	if ! grep -q "NVMe/$TR Target Listening" $TB_OUT/tgt.log; then
		tb_result spdk-$T FAIL "nvmf_tgt did not listen: $(grep -m2 -iE 'error|fail' $TB_OUT/tgt.log | tr '\n' ' ')"
		kill $tgt 2>/dev/null
		return
	fi
	ntprof probe -r target -t $T --spdk-target $B/nvmf_tgt > $TB_OUT/probe-t.txt 2>&1
	cat $TB_OUT/probe-t.txt
	ntprof record -r target -t $T --spdk-target $B/nvmf_tgt -s 1 --offline -o $TB_OUT/target.ntp > $TB_OUT/t.txt 2>&1 &
	rt=$!
	# loading and verifying the programs takes seconds under TCG (more with
	# the socket hooks): perf starts once the target's recorder records
	if ! tb_wait_file $TB_OUT/t.txt 'profiling as target' 180 $rt; then
		tb_result spdk-$T FAIL "the target's recorder did not start: $(tr '\n' ' ' < $TB_OUT/t.txt)"
		kill -9 $rt $tgt 2>/dev/null
		wait
		return
	fi
	$B/spdk_nvme_perf -c 0x2 --no-huge -s 512 -q 1 -o 4096 -w randread -t 15 \
		-r "trtype:$TR adrfam:IPv4 traddr:$A trsvcid:4420 subnqn:$NQN" > $TB_OUT/perf.out 2>&1 &
	perf=$!
	# the host's recorder as soon as perf has mapped its libraries: retried
	# while it refuses (no process yet, or the probes' libraries not mapped).
	# A recorder that has not said "profiling as host" may still be loading
	# (seconds under TCG): it is waited for until it says so or exits, never
	# with a bare `wait`, which would wait for one that records until Ctrl-C
	# (the scenario then hung, silent, until the runner's watchdog).
	rh=
	for _ in $(seq 600); do
		ntprof record -r host -t $T --spdk-host $B/spdk_nvme_perf -s 1 --offline -o $TB_OUT/host.ntp > $TB_OUT/h.txt 2>&1 &
		rh=$!
		tb_wait_file $TB_OUT/h.txt 'profiling as host' 180 $rh && break
		if kill -0 $rh 2>/dev/null; then
			tb_log "host recorder $rh neither started nor refused in 180 s: $(cat /proc/$rh/wchan 2>/dev/null); $(tr '\n' ' ' < $TB_OUT/h.txt)"
			stuck="$stuck $rh"
			kill -9 $rh
		fi
		wait $rh
		rh=
		kill -0 $perf 2>/dev/null || break
	done
	wait $perf
	prc=$?
	sleep 1
	# Ctrl-C for both recorders; one that has not stopped 60 s later is
	# reported and killed (its file then lacks its last records)
	for r in $rh $rt; do
		kill -INT $r
		for _ in $(seq 60); do kill -0 $r 2>/dev/null || break; sleep 1; done
		if kill -0 $r 2>/dev/null; then
			tb_log "recorder $r did not stop on SIGINT: $(cat /proc/$r/wchan 2>/dev/null); $(cat /proc/$r/stack 2>/dev/null | head -8 | tr '\n' ' ')"
			stuck="$stuck $r"
			kill -9 $r
		fi
		wait $r
	done
	kill $tgt
	for _ in $(seq 30); do kill -0 $tgt 2>/dev/null || break; sleep 1; done
	kill -9 $tgt 2>/dev/null
	wait $tgt
	cat $TB_OUT/perf.out | tail -6
	ntprof report --detail $TB_OUT/host.ntp $TB_OUT/target.ntp > $TB_OUT/join.txt 2>&1
	cat $TB_OUT/join.txt
	m=$(grep -m1 '^records:' $TB_OUT/join.txt)
	avg=$(awk '/^Total/ { print $(NF-2) }' $TB_OUT/perf.out)
	mean=$(ntprof report $TB_OUT/host.ntp 2>/dev/null | awk '/^latency/ { print $4; exit }' | tr -d ,)
	if [ $T = tcp ]; then
		# the socket hooks on real SPDK: how many records of each side they split
		split_host=$(spdk_split $TB_OUT/host.ntp host)
		split_target=$(spdk_split $TB_OUT/target.ntp target)
		hr=$(awk 'index($0, "network: host receive path") == 1 { print $(NF-3); exit }' $TB_OUT/join.txt)
		tr=$(awk 'index($0, "network: target receive path") == 1 { print $(NF-3); exit }' $TB_OUT/join.txt)
		set -- $split_host
		sh=$1 nh=$3
		set -- $split_target
		st=$1 nt=$3
		tb_check spdk-$T "$prc == 0 && $(echo "$stuck" | wc -w) == 0 && $(echo "$m" | grep -c 'matched (100 % of the host')  == 1 && $sh * 100 >= $nh * 95 && $st * 100 >= $nt * 95 && ${hr:-0} > 0 && ${tr:-0} > 0" \
			"perf exit $prc, recorders stuck:${stuck:- none}, $m; split by the socket hooks: host $split_host, target $split_target; receive paths: host ${hr:-?} us, target ${tr:-?} us; ntprof host mean ${mean:-?} us, perf Average ${avg:-?} us"
	else
		tb_check spdk-$T "$prc == 0 && $(echo "$stuck" | wc -w) == 0 && $(echo "$m" | grep -c 'matched (100 % of the host')  == 1" \
			"perf exit $prc, recorders stuck:${stuck:- none}, $m; ntprof host mean ${mean:-?} us, perf Average ${avg:-?} us"
	fi
}
