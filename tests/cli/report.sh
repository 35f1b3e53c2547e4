#!/usr/bin/env bash
# Golden outputs of `ntprof report`, `report --detail`, `compare` and their
# JSON, on recordings from `ntprof generate` with fixed seeds; and the
# refusals (different -s, same role and machine, wrong roles) with their
# one-line reasons. UPDATE=1 rewrites the golden files; otherwise any
# difference fails.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
NTPROF=${NTPROF:-$root/build/ntprof}
case $NTPROF in /*) ;; *) NTPROF=$root/$NTPROF ;; esac
golden=$root/tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0

gen() { "$NTPROF" generate -q "$@" || { echo "generate $* failed"; exit 1; }; }

# name, then the command; stdout (and the exit code when non-zero) is compared
check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || out+=$'\n'"exit $rc"
	if [ "${UPDATE:-0}" = 1 ]; then
		printf '%s\n' "$out" >"$golden/$name"
		echo "  updated $name"
	elif ! diff -u "$golden/$name" <(printf '%s\n' "$out") >diff.txt; then
		echo "  FAIL $name:"; head -40 diff.txt; fail=1
	else
		echo "  ok   $name"
	fi
}

# one machine, both sides in one file: NVMe/TCP reads and writes, R2T for 128K writes
gen -o both.ntp -d 1 --seed 11 --read 60 --sizes 4K,128K --rate 20000
check report-both.txt "$NTPROF" report both.ntp
check report-both-detail.txt "$NTPROF" report --detail both.ntp
check report-both.json "$NTPROF" report -j - both.ntp

# two machines over RDMA (writes fetched with RDMA READ), the target's clock 3 days ahead,
# files given target first; and the host's file alone
gen -t rdma -o h.ntp --target-out t.ntp -d 1 --seed 12 --read 50 --sizes 4K,64K \
	--target-clock-offset 259200000012345
check report-join-rdma-detail.txt "$NTPROF" report --detail t.ntp h.ntp
check report-host-only.txt "$NTPROF" report h.ntp
check report-target-only.txt "$NTPROF" report t.ntp

# one target serving two hosts, some target records lost, some response posts missed (fallback)
gen -o host%d.ntp --target-out tgt.ntp -d 1 --seed 13 --hosts 2 --drop-target 5 --miss-rsp-sent 10
check report-two-hosts.txt "$NTPROF" report host1.ntp host2.ntp tgt.ntp

# the same reports read in one thread: with read() (the default there for up
# to four files, ntp_reader_read_alone) and through mapped windows
for src in read mapped; do
	if [ $src = read ]; then set -- NTPROF_THREADS=0; else set -- NTPROF_THREADS=0 NTPROF_AHEAD_MMAP=1; fi
	check report-both-detail.txt env "$@" "$NTPROF" report --detail both.ntp
	check report-join-rdma-detail.txt env "$@" "$NTPROF" report --detail t.ntp h.ntp
	check report-two-hosts.txt env "$@" "$NTPROF" report host1.ntp host2.ntp tgt.ntp
done

# compare: the same path, then a drive four times slower under more load
gen -o a.ntp -d 1 --seed 14 --rate 20000
gen -o b.ntp -d 1 --seed 15 --rate 40000 --delay storage=lognormal:320us:0.4
check compare.txt "$NTPROF" compare a.ntp b.ntp
check compare.json "$NTPROF" compare -j - a.ntp b.ntp

# --exact-queues: the totals carry every command's stage sums; the reports show
# counted QDs (two files joined, each side alone), and the JSON marks them
gen -o eqh.ntp --target-out eqt.ntp -d 1 --seed 19 --exact-queues -s 10 --qd 8 --rate 20000 \
	--read 60 --sizes 4K,128K --delay storage=exp:300us
check report-exactq.txt "$NTPROF" report eqh.ntp eqt.ntp
check report-exactq-host.txt "$NTPROF" report eqh.ntp
check report-exactq-target.txt "$NTPROF" report eqt.ntp
check report-exactq.json "$NTPROF" report -j - eqh.ntp eqt.ntp

# --what-if-qd: the stages of one run predicted at other queue depths. From
# one load level every stage is a delay (and the report says so); with a
# second recording at twice the rate and a drive twice as slow, the storage's
# parallelism is fitted; given servers and host tags: the tags' wait
gen -o wa.ntp -d 1 --seed 21 --rate 5000 -s 1 --delay storage=lognormal:200us:0.3
gen -o wb.ntp -d 1 --seed 22 --rate 10000 -s 1 --delay storage=lognormal:400us:0.3
check report-whatif-one.txt "$NTPROF" report --what-if-qd 1,2,8 wa.ntp
check report-whatif-fit.txt "$NTPROF" report --what-if-qd 4,8,16,32 --what-if-fit wa.ntp wb.ntp
# the QDs the runs had, given: Little's law would read them lower (open-loop recordings)
check report-whatif-given.txt "$NTPROF" report --what-if-qd 8,32 --what-if-qd-was 8 --what-if-fit wa.ntp@2 wb.ntp
check refuse-whatif-fitqd.txt "$NTPROF" report --what-if-qd 8 --what-if-fit wa.ntp@0 wb.ntp
check report-whatif.json "$NTPROF" report -j - --what-if-qd 4,64 --what-if-servers storage=4 \
	--what-if-tags 16 wa.ntp
check refuse-whatif-qd.txt "$NTPROF" report --what-if-qd 4,0 wa.ntp
check refuse-whatif-servers.txt "$NTPROF" report --what-if-qd 4 --what-if-servers disk=2 wa.ntp
check refuse-whatif-alone.txt "$NTPROF" report --what-if-tags 8 wa.ntp
check refuse-whatif-fit.txt "$NTPROF" report --what-if-qd 4 --what-if-fit nothere.ntp wa.ntp
# the host's queues in the recording's header (generate --host-queues writes
# --queues of --qd tags, as ntprof record reads them in sysfs): dump --header
# shows them, the what-if takes its tags "from" the recording, --what-if-tags
# still overrides; a target file and an older-format file carry none
gen -o wq.ntp --target-out wqt.ntp -d 1 --seed 21 --rate 5000 -s 1 --qd 8 --queues 2 --host-queues \
	--delay storage=lognormal:200us:0.3
check dump-header.txt "$NTPROF" dump --header wq.ntp
check dump-header-target.txt "$NTPROF" dump --header wqt.ntp
check report-whatif-recorded.txt "$NTPROF" report --what-if-qd 4,16 --what-if-servers storage=4 wq.ntp wqt.ntp
check report-whatif-recorded.json "$NTPROF" report -j - --what-if-qd 4,16 --what-if-servers storage=4 wq.ntp wqt.ntp
check report-whatif-tags-given.txt "$NTPROF" report --what-if-qd 16 --what-if-servers storage=4 --what-if-tags 4 \
	wq.ntp wqt.ntp

# joined runs on either side of a compare: HOST.ntp,TARGET.ntp
gen -o a2h.ntp --target-out a2t.ntp -d 1 --seed 18 --rate 20000
check compare-joined.txt "$NTPROF" compare a2h.ntp,a2t.ntp b.ntp

# a file cut short: the report is of what was read, and says so
gen -o long.ntp -d 3 --seed 17 --rate 20000
head -c $(( $(stat -c %s long.ntp) * 2 / 3 )) long.ntp >cut.ntp
check report-cut.txt "$NTPROF" report cut.ntp
check compare-cut.txt "$NTPROF" compare cut.ntp long.ntp

# regular files are mapped window by window; read() (NTPROF_NO_MMAP=1, and
# for pipes) must give the very same reports, whole or cut
check report-both-detail.txt env NTPROF_NO_MMAP=1 "$NTPROF" report --detail both.ntp
check report-cut.txt env NTPROF_NO_MMAP=1 "$NTPROF" report cut.ntp
check report-both-detail.txt "$NTPROF" report --detail <(cat both.ntp)

# refusals, each one line naming the files
gen -o s1000.ntp -r target -d 0.1 --seed 16 -s 1000
check refuse-sampling.txt "$NTPROF" report h.ntp s1000.ntp
check refuse-same-machine.txt "$NTPROF" report host1.ntp host1.ntp
check refuse-no-target.txt "$NTPROF" report host1.ntp host2.ntp
check refuse-missing.txt "$NTPROF" report nothere.ntp
check refuse-json.txt "$NTPROF" report -j - h.ntp s1000.ntp
check refuse-option.txt "$NTPROF" report --bogus h.ntp
check refuse-compare-one.txt "$NTPROF" compare a.ntp
# more files in a run than compare holds: refused, not compared on the first 16
check refuse-compare-many.txt "$NTPROF" compare "$(printf 'a.ntp,%.0s' {1..16})a.ntp" b.ntp
printf 'not a recording\n' >text.ntp
check refuse-not-ntp.txt "$NTPROF" report text.ntp

# A join counts the host's commands over the host's recording: a target that
# recorded longer (its totals dated later) must not thin the host's rate.
# The test-bed pair: the target ran 43 s, the host 11.2 s.
rate() { "$NTPROF" report "$@" | sed -n 's/^throughput (commands counted in the kernel): read \([0-9.]*\) IOPS.*/\1/p'; }
h=$(rate "$root/examples/tb61-tcp-read-host.ntp")
j=$(rate "$root/examples/tb61-tcp-read-host.ntp" "$root/examples/tb61-tcp-read-target.ntp")
if [ -n "$h" ] && [ "$h" = "$j" ]; then
	echo "  ok   join-rate the join counts $j IOPS, as the host's file alone"
else
	echo "  FAIL join-rate host alone '$h' IOPS, joined with its target '$j'"; fail=1
fi

# --help: usage on stdout, exit 0
for c in report compare; do
	if ! "$NTPROF" $c --help | grep -q "^usage: ntprof $c"; then echo "  FAIL $c --help"; fail=1; fi
done

[ $fail -eq 0 ] && echo "report.sh: all golden outputs match"
exit $fail
