#!/usr/bin/env bash
# Build the test bed's initramfs for one cached kernel (tests/vm/kernel.sh first):
#   tests/vm/initramfs.sh KERNEL OUTPUT.cpio.gz
# Contents: busybox (static) and its applets; the kernel modules of each group
# in load order (resolved on the host with modprobe --show-depends, since the
# guest has no kmod); iproute2's ip, tc and rdma and bpftool with their shared
# libraries (copied through ldd); terminfo entries for ncurses; the project's
# freshly built binaries from $O (ntprof, ntprof-top, ntp-load, the hook-cost
# bench's ntp-hookcal and ntp-tcpstream, when built);
# tests/vm/guest (init, lib.sh) and tests/vm/scenarios.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KERNEL=$1 OUTPUT=$2
CACHE=${NTP_VM_CACHE:-/var/cache/ntprof-vm}
O=${O:-build}; case $O in /*) ;; *) O=$TOP/$O ;; esac
. "$CACHE/kernel-$KERNEL/env"
KP=$NTP_VM_ROOT KVER=$NTP_VM_KVER
R=$(mktemp -d "${TMPDIR:-/tmp}/ntprof-initramfs.XXXXXX")
trap 'rm -rf "$R"' EXIT
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,out,etc/tb,root,run,mnt,tb/scenarios}

# busybox; the kernel's request_module() (crypto algorithm lookups) runs /sbin/modprobe
cp /bin/busybox "$R/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"
done
ln -sf ../bin/busybox "$R/sbin/modprobe"

# Module groups, loaded by the guest with tb_modules GROUP. Names that a kernel
# lacks (or has built in) are skipped: 5.10, 6.1, 6.12 and 7.2 differ in helpers
# such as crc64-rocksoft and netfs. crc32_generic must precede rdma_rxe: rxe
# asks the crypto API for "crc32" and nothing in the guest can autoload it.
declare -A MODGROUPS=(
	[base]="configfs null_blk brd dummy virtio_pci 9pnet_virtio 9p"
	[tcp]="nvme-tcp nvmet-tcp"
	[rdma]="crc32_generic rdma_rxe nvme-rdma nvmet-rdma rdma_ucm"
	[netem]="sch_netem"
	[net]="virtio_net"
)
for g in "${!MODGROUPS[@]}"; do
	for m in ${MODGROUPS[$g]}; do
		if ! modprobe -d "$KP" -S "$KVER" --show-depends "$m" > "$R/tmp/deps" 2>/dev/null; then
			echo "initramfs: module $m not in $KVER, skipped" >&2
			continue
		fi
		awk '$1=="insmod" { print $2 }' "$R/tmp/deps"
	done | awk '!seen[$0]++' | while read -r ko; do
		rel=${ko#"$KP"}
		# busybox insmod takes plain ELF: decompress .ko.xz / .ko.zst (6.12, 7.2)
		case $rel in
		*.ko.xz) dst=${rel%.xz}; mkdir -p "$R$(dirname "$rel")"; xz -dc "$ko" > "$R$dst" ;;
		*.ko.zst) dst=${rel%.zst}; mkdir -p "$R$(dirname "$rel")"; zstd -qdc "$ko" > "$R$dst" ;;
		*) dst=$rel; mkdir -p "$R$(dirname "$rel")"; cp "$ko" "$R$dst" ;;
		esac
		echo "$dst"
	done > "$R/etc/tb/modules.$g"
done
rm -f "$R/tmp/deps"

# dynamically linked tools and the libraries they need
copy_with_libs() { # host-path guest-path
	cp -L "$1" "$R$2"
	# (a static binary makes ldd fail: not an error)
	{ ldd "$1" 2>/dev/null || true; } | awk '/=>/ { print $3 } /^[ \t]*\/.*ld-linux/ { print $1 }' | while read -r lib; do
		[ -f "$lib" ] || continue
		mkdir -p "$R$(dirname "$lib")"
		[ -e "$R$lib" ] || cp -L "$lib" "$R$lib"
	done
	return 0
}
for t in /usr/sbin/tc /usr/bin/rdma /usr/sbin/bpftool; do
	if [ -x "$t" ]; then copy_with_libs "$t" "$t"; fi
done
copy_with_libs /usr/bin/ip /usr/sbin/ip   # iproute2's ip before busybox's in PATH
mkdir -p "$R/lib64" && cp -L /lib64/ld-linux-x86-64.so.2 "$R/lib64/"

# the project's binaries, as built on the host
for b in ntprof ntprof-top ntp-load ntp-hookcal ntp-tcpstream; do
	if [ -x "$O/$b" ]; then copy_with_libs "$O/$b" "/usr/bin/$b"; fi
done
# the SPDK stand-in (mk/spdk.mk), laid out as SPDK's build is: bin/ and lib/
if [ -x "$O/standin/bin/spdk-standin" ]; then
	mkdir -p "$R/opt/standin/bin" "$R/opt/standin/lib"
	cp "$O/standin/lib/libntp_standin.so" "$R/opt/standin/lib/"
	LD_LIBRARY_PATH=$O/standin/lib copy_with_libs "$O/standin/bin/spdk-standin" /opt/standin/bin/spdk-standin
fi
# the static binaries (the default build's, docs/building.md), an example
# recording and the build linked with shared libraries (SHARED=1, its
# libraries copied too), for the scenario static-binary, which runs the
# static ones in a root holding nothing else
mkdir -p "$R/tb/static"
for b in ntprof ntprof-top; do
	if [ -x "$O/static/$b" ]; then cp "$O/static/$b" "$R/tb/static/$b"; fi
done
if [ -x "$O/rel/ntprof" ]; then copy_with_libs "$O/rel/ntprof" /tb/static/ntprof-shared; fi
cp "$HERE/../../examples/tb61-tcp-read-qd1-both.ntp" "$R/tb/static/example.ntp"

# ntprof's BTF file for a kernel without module BTF (tests/vm/btf.sh), where
# ntprof looks for it by default
if [ -s "$CACHE/kernel-$KERNEL/ntprof.btf" ]; then
	mkdir -p "$R/var/lib/ntprof/btf"
	cp "$CACHE/kernel-$KERNEL/ntprof.btf" "$R/var/lib/ntprof/btf/$KVER.btf"
fi

# terminfo for ncurses (ntprof-top on the serial console)
for t in linux vt100 vt102 vt220 xterm xterm-256color screen screen-256color tmux tmux-256color dumb; do
	for d in /lib/terminfo /usr/share/terminfo; do
		f=$d/${t:0:1}/$t
		if [ -e "$f" ]; then mkdir -p "$R/usr/share/terminfo/${t:0:1}"; cp -L "$f" "$R/usr/share/terminfo/${t:0:1}/"; break; fi
	done
done

cp "$HERE/guest/init" "$R/init"
cp "$HERE/guest/lib.sh" "$R/tb/lib.sh"
cp "$HERE/guest/ntprof-checks.sh" "$R/tb/ntprof-checks.sh"   # helpers of the record-* scenarios
cp "$HERE"/scenarios/*.sh "$R/tb/scenarios/"
chmod +x "$R/init"
echo "$KVER" > "$R/etc/tb/kver"
echo "root:x:0:0:root:/root:/bin/sh" > "$R/etc/passwd"
# every shared helper file of tests/vm/guest (lib.sh and any other *.sh) is in /tb
for f in "$HERE"/guest/*.sh; do cp "$f" "$R/tb/"; done

mkdir -p "$(dirname "$OUTPUT")"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUTPUT.tmp"
mv "$OUTPUT.tmp" "$OUTPUT"
echo "vm: initramfs $OUTPUT ($(du -h "$OUTPUT" | cut -f1) compressed, $(du -sh "$R" | cut -f1) unpacked; kernel $KVER)"
