# static-binary: the static ntprof and ntprof-top (the default build,
# docs/building.md) run where none of the libraries they were linked with
# exist: in a chroot holding only the two binaries, an example recording and
# the kernel's pseudo file systems. The build linked with shared libraries
# (SHARED=1) copied into the same root must fail there (so the root really
# lacks them). Checked: --version of both; `report` of the example equal to
# the shared build's outside; ntprof-top's batch replay;
# and a real recording of NVMe/TCP reads (probe, record -r both -s 1, report
# in the root), every host record joined.
# tb-timeout: 300
. /tb/ntprof-checks.sh
S=/tb/static
[ -x $S/ntprof ] && [ -x $S/ntprof-top ] && [ -x $S/ntprof-shared ] ||
	{ tb_result static-binary FAIL "no static binaries or no shared build in the initramfs (make static, build/rel/ntprof)"; exit 0; }
root=/tmp/static-root
rm -rf $root
mkdir -p $root/proc $root/sys $root/tmp $root/dev
cp $S/ntprof $S/ntprof-top $S/example.ntp $root/
cp $S/ntprof-shared $root/ntprof-shared
sroot() { chroot $root "$@"; }

sroot /ntprof-shared --version > $TB_OUT/shared.txt 2>&1
drc=$?
v1=$(sroot /ntprof --version 2>&1); r1=$?
v2=$(sroot /ntprof-top --version 2>&1); r2=$?
tb_check static-binary-version "$r1 == 0 && $r2 == 0 && $drc != 0 && \"$v1\" == \"$($S/ntprof-shared --version)\"" \
	"in a root of $(ls $root | tr '\n' ' '): '$v1', '$v2'; the shared build there: exit $drc ($(head -1 $TB_OUT/shared.txt | cut -c1-80))"

sroot /ntprof report --detail /example.ntp > $TB_OUT/static-report.txt 2>&1; r1=$?
$S/ntprof-shared report --detail $S/example.ntp > $TB_OUT/shared-report.txt 2>&1
sroot /ntprof-top -b --speed 0 --replay /example.ntp > $TB_OUT/static-top.txt 2>&1; r2=$?
same=0; cmp -s $TB_OUT/static-report.txt $TB_OUT/shared-report.txt && same=1
rows=$(grep -Ec '^  (host block|network|storage) .* [0-9]+%' $TB_OUT/static-top.txt)
tb_check static-binary-report "$r1 == 0 && $same == 1 && $r2 == 0 && $rows > 0" \
	"report of the example: exit $r1, identical to the shared build's: $same ($(grep -m1 '^latency' $TB_OUT/static-report.txt)); ntprof-top -b replay: exit $r2, $rows stage rows"

# A real recording from inside the root: it needs only the kernel's interfaces.
mount -t proc proc $root/proc
mount -t sysfs sysfs $root/sys
mount -t debugfs debugfs $root/sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs $root/sys/kernel/tracing 2>/dev/null
mount -t devtmpfs devtmpfs $root/dev
btf=/var/lib/ntprof/btf/$TB_KVER.btf
[ -f $btf ] && { mkdir -p $root/var/lib/ntprof/btf; cp $btf $root$btf; }
cleanup() {
	umount $root/sys/kernel/tracing $root/sys/kernel/debug $root/sys $root/proc $root/dev 2>/dev/null
}
tb_setup_tcp || { cleanup; tb_result static-binary-record FAIL "NVMe/TCP setup failed"; exit 0; }
sroot /ntprof probe -r both -t tcp > $TB_OUT/static-probe.txt 2>&1; prc=$?
# chroot itself, not the function: $! must be ntprof (chroot execs it) for kill -INT
chroot $root /ntprof record -r both -s 1 --offline -o /tmp/rec.ntp > $TB_OUT/static-record.out 2> $TB_OUT/static-record.err &
rec=$!
tb_wait_file $TB_OUT/static-record.err 'profiling as' 200 $rec ||
	{ cleanup; tb_result static-binary-record FAIL "recorder not ready: $(tail -1 $TB_OUT/static-record.err)"; exit 0; }
tb_load --rw randread --bs 4k --qd 4 --secs 4
kill -INT $rec; wait $rec; rrc=$?
sroot /ntprof report -j - /tmp/rec.ntp > $TB_OUT/static-rec.json 2>/dev/null
cp $root/tmp/rec.ntp $TB_OUT/static-rec.ntp 2>/dev/null
cleanup
set -- $(ntp_json_groups $TB_OUT/static-rec.json | awk '$1 == "records" { print $2, $3, $4 }')
rh=${1:-0} rt=${2:-0} rm=${3:-0}
tb_check static-binary-record "$prc == 0 && $rrc == 0 && $rh > 0 && $rm == $rh" \
	"probe exit $prc ($(grep '^function hooks' $TB_OUT/static-probe.txt)); record exit $rrc: $rh host records, $rt target, $rm joined; load $TB_LOAD_IOS I/Os"
