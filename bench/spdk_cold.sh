#!/usr/bin/env bash
# The observer effect on this machine's own CPU (no emulator), through the
# SPDK path: the stand-in (tests/tools/spdk-standin.c) as an SPDK target
# running one command at a time (40 us of storage), ntprof recording it.
# An unsampled command runs no probe (the sampling is the program's, a hash
# and a compare); a sampled one stamps its stages and fires the done probe,
# whose uprobe runs one BPF program (docs/performance.md, "A sampled
# command, cold").
#
# Two kinds of CPU, each a set of phases of one run:
#   sleep  the delays slept: the CPU idles between commands, as a host's
#          does between I/Os
#   spin   the delays spun, as SPDK's reactor polls: never idle
# Per kind:
#   latency   the commands' mean without ntprof (bare) and at -s 1000, 100
#             and 1, against bare; a sampled command's median against the
#             unsampled ones' of the same phase (the probe's whole cost: its
#             entry into the kernel and the program). Where the kernel
#             optimizes uprobes, twice: through the probes' 5-byte twins
#             (nop5, what ntprof attaches there) and through the 1-byte
#             probes (nop1, NTPROF_NO_NOP5=1: a trap, as on other kernels)
#   bpf time  the program's run time per sampled command at -s 1, 100 and
#             1000 (read around the probe: phases of their own), its
#             quartiles and median, and the median against -s 1's, where
#             every command is sampled and the program's code and data stay
#             in the caches
# Usage: bench/spdk_cold.sh [NTPROF] (make bench-spdk). Root and uprobes.
# Environment: N (commands of a -s 1000 phase, default 200000; the others
# run a quarter of it, -s 1 a tenth), KINDS (default "sleep spin").
set -eu
cd "$(dirname "$0")/.."
NTPROF=$(realpath "${1:-build/ntprof}")
SI=$(realpath build/standin/bin/spdk-standin)
export LD_LIBRARY_PATH=$(dirname "$(dirname "$SI")")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ "$(id -u)" != 0 ] || [ ! -d /sys/bus/event_source/devices/uprobe ] || [ ! -x "$SI" ]; then
	echo "spdk_cold: needs root, uprobes and $SI (make spdk-standin)"
	exit 1
fi
N=${N:-200000}
work=$(mktemp -d /tmp/ntprof-spdk-cold.XXXXXX)
export NTPROF_LOCK_DIR=$work/lock
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$stats_was" > /proc/sys/kernel/bpf_stats_enabled; rm -rf "$work"' EXIT
echo 1 > /proc/sys/kernel/bpf_stats_enabled

# phase NAME S COMMANDS ARGS...: the stand-in runs COMMANDS commands with
# ARGS and --log $work/NAME.log, recorded at -s S (none: not recorded)
phase() {
	local name=$1 s=$2 n=$3 si rec envs
	shift 3
	if [ "$s" = none ]; then
		"$SI" -r target -n "$n" --log "$work/$name.log" "$@" > /dev/null 2> "$work/$name.err" ||
			{ echo "spdk_cold: $name: the stand-in failed:"; cat "$work/$name.err"; exit 1; }
		return
	fi
	"$SI" -r target -n "$n" --wait-sampling --log "$work/$name.log" "$@" > /dev/null 2> "$work/$name.err" &
	si=$!
	envs=()
	[ "${way:-}" = nop1 ] && envs=(NTPROF_NO_NOP5=1)
	env "${envs[@]}" "$NTPROF" record -r target --spdk-target "$SI" -s "$s" --offline -o "$work/$name.ntp" \
		> /dev/null 2> "$work/$name.rec" &
	rec=$!
	if ! wait "$si"; then
		kill -INT "$rec" 2>/dev/null
		echo "spdk_cold: $name: the stand-in failed:"
		cat "$work/$name.err" "$work/$name.rec"
		exit 1
	fi
	kill -INT "$rec"
	wait "$rec" || { echo "spdk_cold: $name: ntprof record failed:"; cat "$work/$name.rec"; exit 1; }
	# the probes of the phase's way, as the recorder said
	if [ "${way:-}" = nop5 ] && ! grep -q "on 5-byte nops" "$work/$name.rec"; then
		echo "spdk_cold: $name: the recorder did not attach the 5-byte probes:"
		cat "$work/$name.rec"
		exit 1
	fi
	# a phase whose recorder attached late measures nothing sampled
	grep -q ", 0 sampled" "$work/$name.err" && { echo "spdk_cold: $name: no command sampled"; exit 1; }
	return 0
}

# cmds S: the commands of a phase at -s S (about 200 sampled at -s 1000)
cmds() { echo $(($1 == 1000 ? N : $1 == 100 ? N / 4 : N / 10)); }

# stats FILE COLUMN [SAMPLED]: "n mean p25 p50 p90" of COLUMN (ns) of the
# lines of FILE whose first field is SAMPLED (any when not given)
stats() {
	awk -v c="$2" -v want="${3:-}" 'want == "" || $1 == want { print $c }' "$1" | sort -n |
		awk '{ v[NR] = $1; s += $1 }
		function q(p) { return v[int((NR - 1) * p) + 1] }
		END { if (NR) printf "%d %.0f %d %d %d\n", NR, s / NR, q(0.25), q(0.5), q(0.9); else print "0 0 0 0 0" }'
}

# the ways a probe can enter the kernel here: its 5-byte twin where the
# kernel optimizes uprobes, then the 1-byte one (NTPROF_NO_NOP5=1)
ways=nop1
grep -q ' arch_uprobe_optimize$' /proc/kallsyms && ways="nop5 nop1"
echo "spdk_cold: $(nproc) CPUs, kernel $(uname -r); the SPDK stand-in as a target, one command at a time"
echo "  probes: $ways (nop5: on 5-byte nops, uprobes the kernel optimizes; nop1: on 1-byte nops, a trap)"
for kind in ${KINDS:-sleep spin}; do
	args=()
	[ "$kind" = spin ] && args=(--spin)
	way=
	phase "$kind-bare" none $((N / 4)) "${args[@]}"
	# the two ways side by side at each rate: the machine drifts over
	# minutes, more than the ways differ at -s 1000
	for s in 1000 100 1; do
		for way in $ways; do
			phase "$kind-$way-s$s" "$s" "$(cmds "$s")" "${args[@]}"
		done
	done
	way=${ways%% *}
	for s in 1 100 1000; do
		phase "$kind-b$s" "$s" "$(cmds "$s")" "${args[@]}" --bpf-time ntp_u_
	done

	read -r _ bare _ <<< "$(stats "$work/$kind-bare.log" 2)"
	echo "  $kind: latency (us): mean, against bare; sampled p50 against unsampled p50 in the phase"
	printf "    %-12s %9s %8s %8s %12s %14s %14s %10s %8s\n" "" commands sampled mean "vs bare" "sampled p50" \
		"unsampled p50" extra ratio
	for ph in bare $(for w in $ways; do printf '%s ' "$w-s1000" "$w-s100" "$w-s1"; done); do
		f=$work/$kind-$ph.log
		read -r n mean _ <<< "$(stats "$f" 2)"
		read -r ns _ _ sp50 _ <<< "$(stats "$f" 2 1)"
		read -r _ _ _ up50 _ <<< "$(stats "$f" 2 0)"
		awk -v ph="$ph" -v n="$n" -v ns="$ns" -v mean="$mean" -v bare="$bare" -v sp="$sp50" -v up="$up50" 'BEGIN {
			lbl = ph
			if (split(ph, w, "-s") == 2)
				lbl = "-s " w[2] " " w[1]
			if (ns && up)
				printf "    %-12s %9d %8d %8.2f %11.2f%% %14.2f %14.2f %10.2f %7.3fx\n", lbl, n, ns, mean / 1e3,
					(mean / bare - 1) * 100, sp / 1e3, up / 1e3, (sp - up) / 1e3, sp / up
			else	# none sampled (bare), or every one (-s 1)
				printf "    %-12s %9d %8d %8.2f %11.2f%% %14s %14s %10s %8s\n", lbl, n, ns, mean / 1e3,
					(mean / bare - 1) * 100, ns ? sprintf("%.2f", sp / 1e3) : "-",
					up ? sprintf("%.2f", up / 1e3) : "-", "-", "-"
		}'
	done
	echo "  $kind: BPF run time of a sampled command's done probe (ns, probes $way): p25 p50 p90, p50 against -s 1's"
	read -r _ _ _ warm _ <<< "$(stats "$work/$kind-b1.log" 3 1)"
	for s in 1 100 1000; do
		read -r n _ p25 p50 p90 <<< "$(stats "$work/$kind-b$s.log" 3 1)"
		awk -v s="$s" -v n="$n" -v p25="$p25" -v p50="$p50" -v p90="$p90" -v warm="$warm" 'BEGIN {
			printf "    -s %-5s %7d sampled %8d %8d %8d %7.2fx\n", s, n, p25, p50, p90, p50 / warm }'
	done
done
