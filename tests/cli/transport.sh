#!/usr/bin/env bash
# The transport check (docs/recording.md, "The transport check") on a fake
# sysfs/configfs tree (NTPROF_SYS_ROOT, for tests): `ntprof record` and
# ntprof-top warn in one line when no controller (nvmet port) of -t's
# transport exists but one of the other does, before whatever else stops them
# here (no NVMe modules, no root); with the right -t, or with nothing
# connected, or more controllers than it looks at, they say nothing of it. `ntprof probe` shows what it found (root
# only: it stops first without).
set -u
cd "$(dirname "$0")/../.."
NTPROF=${NTPROF:-build/ntprof}
TOP=${NTPROF_TOP:-build/ntprof-top}
fail=0
fake=$(mktemp -d /tmp/ntp-transport-XXXXXX)
trap 'rm -rf "$fake"' EXIT

# an NVMe/RDMA host (nvme0 over a multipath path to nvme0n1) and target
mkdir -p "$fake/rdma/sys/class/nvme/nvme0/nvme0c0n1" "$fake/rdma/sys/kernel/config/nvmet/ports/1"
echo rdma >"$fake/rdma/sys/class/nvme/nvme0/transport"
echo rdma >"$fake/rdma/sys/kernel/config/nvmet/ports/1/addr_trtype"
mkdir -p "$fake/none"
# more controllers than are looked at: any of the others could be NVMe/TCP
for i in $(seq 0 39); do
	mkdir -p "$fake/many/sys/class/nvme/nvme$i"
	echo rdma >"$fake/many/sys/class/nvme/nvme$i/transport"
done

# expect NAME PRESENT(1|0) LINE command...: LINE is (1) or is not (0) a line of the output
expect() {
	local name=$1 present=$2 line=$3 out
	shift 3
	out=$("$@" 2>&1)
	if grep -qxF -- "$line" <<<"$out"; then got=1; else got=0; fi
	if [ "$got" = "$present" ]; then
		echo "  ok   $name"
	else
		echo "  FAIL $name: $(head -3 <<<"$out")"
		fail=1
	fi
}

w_both="nvme0 (nvme0n1) and nvmet port 1 are NVMe/RDMA, not NVMe/TCP: use -t rdma"
expect record-wrong-t 1 "ntprof: $w_both" env NTPROF_SYS_ROOT="$fake/rdma" "$NTPROF" record -r both -d 1
expect record-wrong-t-host 1 "ntprof: nvme0 (nvme0n1) is NVMe/RDMA, not NVMe/TCP: use -t rdma" \
	env NTPROF_SYS_ROOT="$fake/rdma" "$NTPROF" record -r host -d 1
expect record-wrong-t-target 1 "ntprof: nvmet port 1 is NVMe/RDMA, not NVMe/TCP: use -t rdma" \
	env NTPROF_SYS_ROOT="$fake/rdma" "$NTPROF" record -r target -d 1
expect record-right-t 0 "ntprof: $w_both" env NTPROF_SYS_ROOT="$fake/rdma" "$NTPROF" record -r both -t rdma -d 1
expect record-nothing 0 "ntprof: $w_both" env NTPROF_SYS_ROOT="$fake/none" "$NTPROF" record -r both -d 1
out=$(NTPROF_SYS_ROOT="$fake/many" "$NTPROF" record -r host -d 1 2>&1)
if grep -q 'use -t rdma' <<<"$out"; then echo "  FAIL record-many-not-sure: $(head -3 <<<"$out")"; fail=1
else echo "  ok   record-many-not-sure"; fi
if [ -x "$TOP" ]; then
	out=$(NTPROF_SYS_ROOT="$fake/rdma" timeout 20 "$TOP" -b -n 1 -r both 2>&1)
	if grep -qF -- "$w_both" <<<"$out"; then echo "  ok   top-wrong-t"; else
		echo "  FAIL top-wrong-t: $(head -3 <<<"$out")"; fail=1; fi
fi
if [ "$(id -u)" = 0 ]; then
	expect probe-found 1 "nvme controllers: nvme0 rdma (nvme0n1); nvmet ports: 1 rdma" \
		env NTPROF_SYS_ROOT="$fake/rdma" "$NTPROF" probe -r both
	expect probe-wrong-t 1 "transport: $w_both" env NTPROF_SYS_ROOT="$fake/rdma" "$NTPROF" probe -r both
	expect probe-found-host 1 "nvme controllers: none" env NTPROF_SYS_ROOT="$fake/none" "$NTPROF" probe -r host
fi
exit $fail
