#!/usr/bin/env bash
# What ntprof's BPF hooks cost, measured in ONE test-bed run (docs/performance.md
# says how to read it): the scenarios bench-hooks (NVMe/TCP), bench-hooks-rdma
# (NVMe/RDMA) and bench-tcpstream (a plain TCP stream, not NVMe-oF), QD1 4 KiB
# random reads, host and target in one guest. Every figure is a ratio to
# something measured in the same guest and run: TCG (software emulation)
# makes absolute times many times those of real hardware.
#   calibration   ns per run of an empty program of each kind and of one that
#                 does one hash lookup, on the functions ntprof hooks; the
#                 dispatch of an empty fentry/kprobe per getpgid() against the
#                 kernel's published figures: TCG's slowdown
#   per -s N      programs run per I/O; BPF ns per I/O (bpf_stats, TCG), in
#                 empty-program runs and in lookups beyond them; the estimate
#                 for a real CPU; the load's mean latency against its bare mean
#   observer      the extra latency of a sampled and of an unsampled command,
#                 and a sampled command's extra split into BPF run time and
#                 the rest (ntp-load --bpf-time)
#   stream        CPU ns per send of a plain TCP stream, bare, with empty
#                 calibration programs, with ntprof recording
# Usage: bench/hook_cost.sh [KERNEL]   (make bench-hooks; as root)
#        SCENARIOS="bench-hooks" bench/hook_cost.sh   (a subset)
#        RUN=build/vm/runs/<run> bench/hook_cost.sh   (print a finished run again)
set -eu
cd "$(dirname "$0")/.."
kernel=${1:-6.1}
scen=${SCENARIOS:-bench-hooks bench-hooks-rdma bench-tcpstream}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ -n "${RUN:-}" ]; then
	run=$RUN	# print a finished run's figures again
else
	make --no-print-directory vm-test KERNEL="$kernel" SCENARIOS="$scen" >"$log" 2>&1 || {
		tail -20 "$log"; exit 1; }
	run=$(ls -td build/vm/runs/*/ | head -1)
fi
echo "hook cost, kernel $kernel under TCG, one run ($run)"
grep -h 'bench-' "$run/results.txt" | grep -v PASS | sed 's/^/  /' || true
awk '
function kv(line, key,   r) { r = ""; if (match(line, " " key "=[^ ]*")) { r = substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2) } return r }
function cell(key, rate) { return ((key, rate) in units) ? sprintf("%.1f", units[key, rate]) : "-" }
$2 == "hc-syscall" { sys = $0 }
$2 ~ /-s[0-9]+$/ && $2 !~ /-lat-/ { s[++ns] = $0 }
$2 ~ /-s[0-9]+-progs$/ { pp[++np] = $0 }
$2 ~ /-observer$/ { obs[++no] = $0 }
$2 ~ /-lat-s[0-9]+$/ { lat[++nl] = $0 }
$1 == "bench-tcpstream" { st[$2] = $0 }
END {
	if (sys != "") {
		printf "\ncalibration: dispatch per call of an empty program (getpgid, ntp-hookcal syscall)\n"
		printf "  getpgid %s ns (real CPU 55.0 ns): TCG x%s; empty fentry %s ns (real 6.1 ns): TCG x%s; empty kprobe %s ns; fentry + 1 lookup %s ns\n",
			kv(sys, "syscall_ns"), kv(sys, "tcg_factor_syscall"), kv(sys, "fentry_ns"), kv(sys, "tcg_factor_fentry"), kv(sys, "kprobe_ns"), kv(sys, "fentry_lookup_ns")
	}
	if (ns) {
		printf "\nntprof per I/O (record -r both, fentry flavour)\n"
		printf "  %-22s %5s %5s %5s %6s %9s %8s %8s %9s %8s %9s\n", "run", "entry", "exit", "tp", "runs", "BPF ns", "x empty", "lookups", "real ns", "share%", "rec.miss"
		for (i = 1; i <= ns; i++) {
			l = s[i]; split(l, f, " ")
			printf "  %-22s %5s %5s %5s %6s %9s %8s %8s %9s %8s %9s\n", f[2], kv(l, "entry_per_io"), kv(l, "exit_per_io"), kv(l, "tp_per_io"), kv(l, "runs_per_io"),
				kv(l, "bpf_ns_per_io"), kv(l, "empty_units"), kv(l, "body_lookups"), kv(l, "real_ns_per_io"), kv(l, "share_pct"), kv(l, "recursion_misses")
		}
		printf "  calibration beside each, bpf_stats ns per run (TCG): empty fentry, fexit, tp_btf; one lookup (fentry)\n"
		for (i = 1; i <= ns; i++) {
			l = s[i]; split(l, f, " ")
			printf "  %-22s %8s %8s %8s %8s\n", f[2], kv(l, "fe_empty_ns"), kv(l, "fx_empty_ns"), kv(l, "tp_empty_ns"), kv(l, "fe_lookup_ns")
		}
		printf "  (x empty: BPF ns / an empty fentry'"'"'s; lookups: ns beyond empty programs / one lookup'"'"'s; real ns: published dispatch per kind + lookups x a published lookup; share: BPF ns of the load'"'"'s mean)\n"
		# a sampled command beyond an unsampled one: at -s N the BPF time
		# per I/O is u + (d - u) / N, so d - u = (x1 - x1000) * 1000 / 999
		for (i = 1; i <= ns; i++) {
			l = s[i]; split(l, f, " "); nm = f[2]
			if (nm !~ /-s1$/) continue
			base = substr(nm, 1, length(nm) - 3)
			for (j = 1; j <= ns; j++) {
				m = s[j]; split(m, g, " ")
				if (g[2] != base "-s1000") continue
				if (!hdr++) printf "  BPF per sampled command beyond an unsampled one (-s 1 against -s 1000): TCG ns, x empty fentry, lookups, real ns\n"
				printf "  %-22s %9.0f %8.1f %8.1f %9.0f\n", base, (kv(l, "bpf_ns_per_io") - kv(m, "bpf_ns_per_io")) * 1000 / 999,
					(kv(l, "empty_units") - kv(m, "empty_units")) * 1000 / 999, (kv(l, "body_lookups") - kv(m, "body_lookups")) * 1000 / 999,
					(kv(l, "real_ns_per_io") - kv(m, "real_ns_per_io")) * 1000 / 999
			}
		}
		# each program: runs per I/O and its BPF time per I/O in runs of an
		# empty fentry of the same phase, at each rate
		for (i = 1; i <= np; i++) {
			l = pp[i]; split(l, f, " "); ph = f[2]; sub(/-progs$/, "", ph)
			efe = 0
			for (j = 1; j <= ns; j++) { m = s[j]; split(m, g, " "); if (g[2] == ph) efe = kv(m, "fe_empty_ns") }
			if (efe <= 0) continue
			tr = ph; sub(/-s[0-9]+$/, "", tr); rate = substr(ph, length(tr) + 3)
			if (!(tr in seen)) { seen[tr] = 1; trs[++ntr] = tr }
			for (k = 3; k <= length(f); k++) {
				split(f[k], a, "="); split(a[2], b, "/")
				if (b[1] == 0) continue
				key = tr SUBSEP a[1]
				if (!(key in pr)) { pr[key] = 1; prl[tr] = prl[tr] " " a[1] }
				runs[key] = b[1]; units[key, rate] = b[1] * b[2] / efe
			}
		}
		for (t = 1; t <= ntr; t++) {
			tr = trs[t]
			printf "  %s, per program: runs per I/O; BPF time per I/O in empty-fentry runs at -s 1000, -s 100, -s 1;\n", tr
			printf "    a sampled command'"'"'s beyond an unsampled one'"'"'s (as above, per program), and its share of that\n"
			n = split(prl[tr], names, " ")
			# shares of the positive parts only: a program whose
			# difference is noise below 0 takes no share; a program
			# that did not run at one of the two rates has no difference
			tot = 0
			for (k = 1; k <= n; k++) {
				key = tr SUBSEP names[k]
				if (!((key, 1) in units) || !((key, 1000) in units)) continue
				beyond[key] = (units[key, 1] - units[key, 1000]) * 1000 / 999
				if (beyond[key] > 0) tot += beyond[key]
			}
			for (k = 1; k <= n; k++) {
				key = tr SUBSEP names[k]
				printf "    %-20s %5.2f %7s %7s %7s", names[k], runs[key], cell(key, 1000), cell(key, 100), cell(key, 1)
				if (key in beyond)
					printf " %7.1f %6.1f%%\n", beyond[key], (tot > 0 && beyond[key] > 0 ? 100 * beyond[key] / tot : 0)
				else
					printf " %7s %7s\n", "-", "-"
			}
		}
	}
	if (nl) {
		printf "\nobserver: the load'"'"'s mean over the commands ntprof sampled against the rest, same run\n"
		printf "  %-28s %8s %8s %9s %8s %9s %8s %8s %8s %9s %9s\n", "run", "mean us", "sampled", "mean us", "rest", "mean us", "sampled%", "p50 s", "p50 r", "p50 s/r%", "e2e/load"
		for (i = 1; i <= nl; i++) {
			l = lat[i]; split(l, f, " ")
			printf "  %-28s %8s %8s %9s %8s %9s %8s %8s %8s %9s %9s\n", f[2], kv(l, "mean_us"), kv(l, "sampled_ios"), kv(l, "sampled_mean_us"), kv(l, "rest_ios"), kv(l, "rest_mean_us"), kv(l, "sampled_vs_rest_pct"),
				kv(l, "sampled_p50_us"), kv(l, "rest_p50_us"), kv(l, "sampled_vs_rest_p50_pct"), kv(l, "e2e_over_load")
		}
	}
	# a sampled command'"'"'s p50 against the rest'"'"'s at -s 100, median over
	# the phases (each rests on some tens of sampled commands)
	for (i = 1; i <= nl; i++) {
		l = lat[i]; split(l, f, " ")
		if (f[2] !~ /-s100$/ || kv(l, "sampled_ios") + 0 == 0) continue
		tr = f[2]; sub(/-(obs[0-9]+-)?lat-s100$/, "", tr)
		if (!(tr in nobs)) otr[++notr] = tr
		op[tr, ++nobs[tr]] = kv(l, "sampled_vs_rest_p50_pct") + 0; om[tr, nobs[tr]] = kv(l, "sampled_vs_rest_pct") + 0
	}
	for (t = 1; t <= notr; t++) {
		tr = otr[t]; n = nobs[tr]
		for (i = 1; i <= n; i++) { a[i] = op[tr, i]; b[i] = om[tr, i] }
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
		for (i = 2; i <= n; i++) for (j = i; j > 1 && b[j - 1] > b[j]; j--) { x = b[j]; b[j] = b[j - 1]; b[j - 1] = x }
		list = ""; for (i = 1; i <= n; i++) list = list sprintf(" %.1f", a[i])
		printf "  %s at -s 100, %d phases: sampled p50 vs the rest'"'"'s, median %.1f %% (sorted:%s); means, median %.1f %%\n",
			tr, n, (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, list, (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
	}
	for (i = 1; i <= no; i++) {
		l = obs[i]; split(l, f, " ")
		printf "\n%s: load mean bare %s us (before and after each); -s 1000 %s, -s 100 %s, -s 1 %s us\n", f[1], kv(l, "bare_us"), kv(l, "s1000_us"), kv(l, "s100_us"), kv(l, "s1_us")
		printf "  slowdown against the bare runs around it: -s 1000 %s %%, -s 100 %s %%, -s 1 %s %%; hence a sampled command %s %% slower than the rest\n",
			kv(l, "slowdown_s1000_pct"), kv(l, "slowdown_s100_pct"), kv(l, "slowdown_s1_pct"), kv(l, "sampled_vs_rest_pct")
	}
	if ("bench-tcpstream-base" in st) {
		b0 = kv(st["bench-tcpstream-base"], "cpu_ns_per_send"); b1 = b0
		if ("bench-tcpstream-base-end" in st) b1 = kv(st["bench-tcpstream-base-end"], "cpu_ns_per_send")
		bare = (b0 + b1) / 2
		printf "\nplain TCP stream over loopback (1 KiB sends, NVMe/TCP idle), CPU ns per send (TCG)\n"
		printf "  bare %.0f (first %s, last %s; %s sends/s)\n", bare, b0, b1, kv(st["bench-tcpstream-base"], "sends_per_s")
		c = kv(st["bench-tcpstream-cal"], "cpu_ns_per_send"); n = kv(st["bench-tcpstream-ntprof"], "cpu_ns_per_send")
		printf "  calibration programs (empty fentry + one-lookup fentry + empty fexit on tcp_sendmsg): +%.0f ns (%.1f %%); their empty pair %s runs, %s BPF ns per send\n",
			c - bare, 100 * (c - bare) / bare, kv(st["bench-tcpstream-cal"], "sock_runs_per_send"), kv(st["bench-tcpstream-cal"], "sock_bpf_ns_per_send")
		l = st["bench-tcpstream-ntprof"]
		if (kv(l, "cal_sock_bpf_ns_per_send") != "")
			printf "  ntprof record -r both -s 1000 beside them: +%s ns more; its socket programs %s runs, %s BPF ns per send = %.2f x the empty pair'"'"'s in the same phase (%s)\n",
				kv(l, "extra_ns_per_send"), kv(l, "sock_runs_per_send"), kv(l, "sock_bpf_ns_per_send"), kv(l, "sock_bpf_ns_per_send") / kv(l, "cal_sock_bpf_ns_per_send"), kv(l, "cal_sock_bpf_ns_per_send")
		else
			printf "  ntprof record -r both -s 1000: +%.0f ns (%.1f %%); its socket programs %s runs, %s BPF ns per send\n",
				n - bare, 100 * (n - bare) / bare, kv(l, "sock_runs_per_send"), kv(l, "sock_bpf_ns_per_send")
	}
}' "$run/figures.txt"

# A sampled command's own end to end (ntprof's records, block layer to
# block layer) against the time since the previous sampled command of the
# same phase: whatever only the sampled path runs or touches has had that
# long to go cold (docs/performance.md, "The observer effect"). Each -s 100
# phase's end to end is taken over that phase's median (phases run at
# different speeds); the phases are pooled and cut into fifths by the gap.
# srt(a, k): a[1..k] sorted in place, a heapsort (a phase's tens of
# thousands of I/Os: an insertion sort took minutes); qt(a, k, p): the p
# quantile of a sorted a[1..k] (awk, prepended to the programs below)
awk_sort='function sift(a, i, n,   c, t) {
	while ((c = 2 * i) <= n) {
		if (c < n && a[c + 1] > a[c]) c++
		if (a[i] >= a[c]) return
		t = a[i]; a[i] = a[c]; a[c] = t; i = c
	} }
function srt(a, k,   i, t) {
	for (i = int(k / 2); i >= 1; i--) sift(a, i, k)
	for (i = k; i > 1; i--) { t = a[1]; a[1] = a[i]; a[i] = t; sift(a, 1, i - 1) } }
function qt(a, k, p) { return a[int((k - 1) * p) + 1] }
'
# q(lo, hi, p): the p quantile of r[lo..hi], r sorted by the cut's key, not
# by its own value (awk, prepended to the two tables' programs below)
awk_q="$awk_sort"'function q(lo, hi, p,   n, i, x) {
	n = 0; for (i = lo; i <= hi; i++) x[++n] = r[i]
	srt(x, n)
	return qt(x, n, p) }
'
# sampled_offsets FILE: "S offset" for each host record of the recording,
# its byte offset slba times the block size (len / (nlb + 1)): the I/Os of
# the load's log that ntprof sampled (as tests/vm/guest/hookcost.sh finds
# them)
sampled_offsets() {
	"$ntprof" dump "$1" 2>/dev/null | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == "host" { printf "S %.0f\n", $(c["slba"]) * ($(c["len"]) / ($(c["nlb"]) + 1)) }'
}
by_gap() { # DIR: one transport's phases
set -- "$1"/*-lat-s100.ntp
if [ -e "$1" ] && [ -x "$ntprof" ]; then
	for f in "$@"; do
		"$ntprof" dump "$f" 2>/dev/null | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 == "host" && $(c["h_blk_submit"]) != "" && $(c["h_blk_complete"]) != "" {
				print $(c["h_blk_submit"]), ($(c["h_blk_complete"]) - $(c["h_blk_submit"])) / 1000 }' |
			sort -n | awk 'NR > 1 { print ($1 - p) / 1e6, $2 } { p = $1 }' > "$log"
		med=$(sort -n -k2 "$log" | awk '{ v[NR] = $2 } END { if (NR) print v[int((NR + 1) / 2)] }')
		[ -n "$med" ] && awk -v m="$med" '{ print $1, $2 / m }' "$log"
	done | sort -n | awk -v tr="$tr" "$awk_q"'{ g[NR] = $1; r[NR] = $2 }
	END {
		if (NR < 10) exit
		printf "\n%s: sampled commands at -s 100 by the time since the previous sampled one (%d commands, every -s 100 phase):\n", tr, NR
		printf "  their end to end (ntprof'"'"'s records) over their phase'"'"'s median: p25, p50, p75\n"
		for (k = 0; k < 5; k++) {
			lo = int(k * NR / 5) + 1; hi = int((k + 1) * NR / 5)
			printf "  gap %7.1f - %7.1f ms  %5.3f %5.3f %5.3f\n", g[lo], g[hi], q(lo, hi, 0.25), q(lo, hi, 0.5), q(lo, hi, 0.75)
		}
	}'
fi
}

# Each sampled I/O against its unsampled neighbours in the load's own order
# (ntp-load --log: "offset latency_ns" per I/O, completion order, which is
# submission order at QD1): the ratio of an I/O's latency to the median of
# the unsampled ones within NB places either side. A drift of the guest's
# speed over seconds cancels; what is left is the sampled command's own
# cost, and (the I/O just after a sampled one) what it leaves behind. A
# sampled I/O is one at an offset of a host record, as in
# tests/vm/guest/hookcost.sh (an unsampled I/O at the same offset counts too:
# a few in a 1 GiB device).
by_neighbours() { # DIR: one transport's phases
local nbr= f nm
: > "$log.pool"
for f in "$1"/*-lat-s*.ntp; do
	[ -e "$f" ] && [ -e "${f%.ntp}.iolog" ] && [ -x "$ntprof" ] || continue
	nm=$(basename "$f" .ntp)
	[ -n "$nbr" ] || { nbr=1; printf '\n%s: each I/O over the median of the unsampled I/Os within %d places either side (the load'"'"'s log, same phase):\n' "$tr" ${NB:-15}
		printf '  %-28s %-10s %6s %6s %6s %6s %6s %8s\n' run I/Os n p25 p50 p75 p90 "> 3x"; }
	{ sampled_offsets "$f"
	  cat "${f%.ntp}.iolog"; } | awk -v nb=${NB:-15} -v nm="$nm" -v pool="$log.pool" "$awk_sort"'
	$1 == "S" { s[$2] = 1; next }
	{ n++; lat[n] = $2; smp[n] = ($1 in s) }
	END {
		for (i = 1; i <= n; i++) {
			if (smp[i]) { since = last ? i - last : 0; last = i }
			g = smp[i] ? "sampled" : (i > 1 && smp[i - 1]) ? "next" : "rest"
			if (g == "rest" && i % 10) continue	# every 10th of the rest is enough
			k = 0
			for (j = i - nb; j <= i + nb; j++) if (j >= 1 && j <= n && j != i && !smp[j]) w[++k] = lat[j]
			if (k < nb) continue
			srt(w, k)
			r = lat[i] / qt(w, k, 0.5)
			m[g]++; v[g, m[g]] = r; if (r > 3) big[g]++
			if (g == "sampled" && since && nm ~ /-s100$/) printf "%d %s\n", since, r >> pool
		}
		split("sampled next rest", gs, " ")
		for (x = 1; x <= 3; x++) {
			g = gs[x]; k = m[g]
			if (!k) continue
			for (i = 1; i <= k; i++) a[i] = v[g, i]
			srt(a, k)
			printf "  %-28s %-10s %6d %6.3f %6.3f %6.3f %6.3f %7.1f%%\n", nm, g, k, qt(a, k, 0.25), qt(a, k, 0.5), qt(a, k, 0.75), qt(a, k, 0.9), 100 * big[g] / k
			delete a
		}
	}'
done
# the sampled I/Os of every -s 100 phase by how many I/Os ran since the
# previous sampled one (the phase's first sampled I/O left out): the same
# ratio to their neighbours, in fifths of that count
sort -n "$log.pool" | awk "$awk_q"'{ g[NR] = $1; r[NR] = $2 }
END {
	if (NR < 10) exit
	printf "  sampled I/Os of every -s 100 phase by the I/Os since the previous sampled one (%d): p25, p50, p75 of the same ratio\n", NR
	for (k = 0; k < 5; k++) {
		lo = int(k * NR / 5) + 1; hi = int((k + 1) * NR / 5)
		printf "    %5d - %5d I/Os  %6.3f %6.3f %6.3f\n", g[lo], g[hi], q(lo, hi, 0.25), q(lo, hi, 0.5), q(lo, hi, 0.75)
	}
}'
}

# Where a sampled I/O's extra latency goes (the -bpftime phases: ntp-load
# --bpf-time, each log line "offset latency_ns bpf_in_ns bpf_before_ns
# id:ns...", the ids named by bpftool's list beside it): the BPF run time
# of every ntprof program while the I/O was in flight, at -s 100 for the
# unsampled and the sampled I/Os, and at -s 1, where every I/O takes the
# sampled path and keeps it warm. Then each sampled I/O at -s 100 over the
# medians of its unsampled neighbours (NB places either side): its extra
# latency, its extra BPF run time, and the difference, what the sampled
# path costs around the programs (dispatch, the ring buffer's reader, the
# caches and TLB the programs leave to the kernel around them); in halves
# by the I/Os since the previous sampled one.
by_bpf_time() { # DIR: one transport's phases
local f
for f in "$1"/*-bpftime.ntp; do
	[ -e "$f" ] && [ -e "${f%.ntp}.iolog" ] && [ -x "$ntprof" ] || continue
	echo "F $(basename "$f" .ntp)"
	sampled_offsets "$f"
	sed 's/},{/}\n{/g' "${f%.ntp}.progs.json" 2>/dev/null | sed -n 's/.*"id":\([0-9]*\),.*"name":"\([^"]*\)".*/N \1 \2/p'
	cat "${f%.ntp}.iolog"
done | awk -v nb=${NB:-15} -v tr="$tr" "$awk_sort"'
function med(a, k) { srt(a, k); return k ? a[int((k + 1) / 2)] : 0 }
function us(v) { return v < 0 ? "-" : sprintf("%.1f", v) }
function row(label, a, k) { srt(a, k); printf "    %-34s %8.1f %8.1f %8.1f\n", label, qt(a, k, 0.25), qt(a, k, 0.5), qt(a, k, 0.75) }
$1 == "F" { ph = $2; phases[++nph] = ph; if (ph ~ /-s1-/) warm = ph; else if (ph ~ /-s100-/) cold = ph; next }
$1 == "S" { s[ph, $2] = 1; next }
$1 == "N" { pname[ph, $2] = $3; next }
NF >= 4 {
	i = ++n[ph]; lat[ph, i] = $2 / 1000; bin[ph, i] = $3 / 1000; smp[ph, i] = ((ph, $1) in s)
	for (k = 5; k <= NF; k++) {
		split($k, pv, ":"); id = ((ph, pv[1]) in pname) ? pname[ph, pv[1]] : "id" pv[1]
		P[ph, i, id] = pv[2] / 1000; if (!(id in seen)) { seen[id] = 1; names[++np] = id }
	}
}
# the p50 of program id (or "" for all of them) over the I/Os of phase p
# that are sampled (want 1) or not (0), past the first 100 (TCG translates
# the programs then)
function p50(p, want, id,   i, k, a) {
	k = 0
	for (i = 101; i <= n[p]; i++) if (smp[p, i] == want) a[++k] = id == "" ? bin[p, i] : P[p, i, id] + 0
	return k ? med(a, k) : -1
}
END {
	if (cold == "") exit
	printf "\n%s: BPF run time while an I/O was in flight (ntp-load --bpf-time, every ntprof program), us (TCG), p50:\n", tr
	printf "    %-22s %10s %10s %10s\n", "program", "-s 100 no", "-s 100 yes", "-s 1 (warm)"
	printf "    %-22s %10s %10s %10s\n", "all", us(p50(cold, 0, "")), us(p50(cold, 1, "")), us(warm == "" ? -1 : p50(warm, 1, ""))
	for (x = 1; x <= np; x++) {
		u = p50(cold, 0, names[x]); v = p50(cold, 1, names[x]); wm = warm == "" ? -1 : p50(warm, 1, names[x])
		if (v - u >= 0.5 || wm - u >= 0.5)
			printf "    %-22s %10s %10s %10s\n", names[x], us(u), us(v), us(wm)
	}
	ph = cold
	for (i = 1; i <= n[ph]; i++) {
		if (!smp[ph, i]) continue
		since = last ? i - last : 0; last = i
		if (!since) continue	# the first: the sampled branches run for the first time
		k = 0
		for (j = i - nb; j <= i + nb; j++) if (j >= 1 && j <= n[ph] && j != i && !smp[ph, j]) idx[++k] = j
		if (k < nb) continue
		for (x = 1; x <= k; x++) w[x] = lat[ph, idx[x]]
		dl = lat[ph, i] - med(w, k)
		for (x = 1; x <= k; x++) w[x] = bin[ph, idx[x]]
		db = bin[ph, i] - med(w, k)
		m++; sn[m] = since; DL[m] = dl; DB[m] = db; DO[m] = dl - db
	}
	if (m < 4) exit
	printf "  a sampled I/O at -s 100 over the medians of its unsampled neighbours (%d places either side), us (TCG):\n", nb
	printf "    %-34s %8s %8s %8s\n", "(" m " sampled I/Os)", "p25", "p50", "p75"
	for (x = 1; x <= m; x++) a[x] = DL[x]
	row("extra latency", a, m)
	for (x = 1; x <= m; x++) a[x] = DB[x]
	row("extra BPF run time in flight", a, m)
	for (x = 1; x <= m; x++) a[x] = DO[x]
	row("the rest (latency - BPF)", a, m)
	for (x = 1; x <= m; x++) a[x] = sn[x]
	cut = med(a, m)
	for (h = 0; h < 2; h++) {
		k = 0
		for (x = 1; x <= m; x++) if ((h == 0) == (sn[x] <= cut)) { k++; b1[k] = DL[x]; b2[k] = DB[x]; b3[k] = DO[x] }
		if (k)
			printf "    %s (%d, %s %d I/Os since the previous sampled): p50 latency %+.1f, BPF %+.1f, rest %+.1f\n",
				h ? "far" : "near", k, h ? "more than" : "at most", cut, med(b1, k), med(b2, k), med(b3, k)
	}
}'
}

ntprof=${NTPROF:-${O:-build}/ntprof}
trap 'rm -f "$log" "$log.pool"' EXIT
for d in "$run"/bench-hooks*/; do
	tr=$(basename "$d")
	by_gap "$d"
	by_neighbours "$d"
	by_bpf_time "$d"
done
