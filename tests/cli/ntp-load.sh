#!/usr/bin/env bash
# ntp-load (the test bed's load generator) on a scratch file: counts, the
# machine-readable line, writes landing in the file, and one-line errors.
set -u
O=${O:-build}
L=$O/ntp-load
f=$O/ntp-load-test.img
trap 'rm -f "$f" "$f.out"' EXIT
fail() { echo "ntp-load.sh: $*" >&2; exit 1; }
[ -x "$L" ] || fail "$L not built"
dd if=/dev/zero of="$f" bs=1M count=8 status=none
if ! "$L" --count 1 --quiet "$f" > /dev/null 2>&1; then
	echo "ntp-load.sh: O_DIRECT not supported on $(dirname "$f"): skipped"; exit 0
fi

# reads: exact count, QD1 and QD8, figures present and consistent
for qd in 1 8; do
	"$L" --rw randread --bs 4k --qd $qd --count 500 "$f" > "$f.out" || fail "randread qd$qd failed"
	line=$(grep '^ntp-load: rw=' "$f.out") || fail "no machine-readable line"
	for k in iops mbps mean_us p50_us p99_us min_us max_us; do
		echo "$line" | grep -qE " $k=[0-9.]+( |$)" || fail "qd$qd: no $k= in: $line"
	done
	echo "$line" | grep -q " ios=500 errors=0 " || fail "qd$qd: expected ios=500 errors=0: $line"
	echo "$line" | awk -v qd=$qd '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		exit !(v["min_us"] <= v["p50_us"] && v["p50_us"] <= v["p99_us"] && v["p99_us"] <= v["max_us"] &&
		       v["min_us"] <= v["mean_us"] && v["mean_us"] <= v["max_us"] && v["qd"] == qd) }' ||
		fail "qd$qd: order min <= p50 <= p99 <= max violated: $line"
done

# sequential 64 KiB writes of the first 1 MiB: the file is no longer zero
# there, and untouched beyond
"$L" --rw write --bs 64k --qd 4 --count 16 --quiet "$f" > "$f.out" || fail "write failed"
grep -q ' ios=16 errors=0 ' "$f.out" || fail "write: $(cat "$f.out")"
[ -n "$(head -c 1048576 "$f" | tr -d '\0' | head -c 1)" ] || fail "write: first MiB still zero"
[ -z "$(tail -c +1048577 "$f" | tr -d '\0' | head -c 1)" ] || fail "write: wrote beyond the first MiB"

# a time limit ends the run
"$L" --secs 0.3 --quiet "$f" | grep -q 'secs=0\.[3-9]' || fail "--secs 0.3 did not stop near 0.3 s"

# bad input: one line naming the option, exit 2
for bad in "--bs 1000" "--bs 2m" "--qd 0" "--qd 129" "--rw sideways" "--secs -1" "--count 0"; do
	out=$("$L" $bad "$f" 2>&1); rc=$?
	[ $rc = 2 ] || fail "$bad: exit $rc, expected 2"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "$bad: more than one line: $out"
	echo "$out" | grep -q -- "${bad%% *}" || fail "$bad: message does not name the option: $out"
done
# --bpf-time: only with --log at QD1, and only with programs to read
for bad in "--bpf-time ntp_" "--bpf-time ntp_ --log $f.log --qd 4" \
	   "--bpf-time no-such-program-prefix --log $f.log --count 1"; do
	out=$("$L" $bad "$f" 2>&1); rc=$?
	[ $rc = 2 ] || fail "$bad: exit $rc, expected 2"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "$bad: more than one line: $out"
	echo "$out" | grep -q -- "--bpf-time" || fail "$bad: message does not name the option: $out"
done
rm -f "$f.log"
out=$("$L" /nonexistent/dev 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q /nonexistent/dev || fail "missing device: exit $rc: $out"
echo "ntp-load.sh: ok"
