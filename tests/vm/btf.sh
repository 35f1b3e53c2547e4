#!/usr/bin/env bash
# For a test-bed kernel whose NVMe modules have no BTF (5.10): fetch Debian's
# debug package of exactly that kernel build and make ntprof's BTF file from it
# (tools/ntprof-btf.sh), once. initramfs.sh puts the file where ntprof looks,
# /var/lib/ntprof/btf/<release>.btf. A kernel with module BTF needs nothing.
#
#   tests/vm/btf.sh KERNEL      (after tests/vm/kernel.sh KERNEL; needs $O/ntprof)
#
# Cache ($NTP_VM_CACHE): dbg/<package>_<version>_amd64.deb (~800 MB for 5.10)
# and kernel-<K>/ntprof.btf (~3.6 MB) with ntprof.btf.mods, the modules it was
# made from: a file made before tools/ntprof-btf.sh took more modules is made
# again. NTP_VM_REFRESH=1 rebuilds the file.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KERNEL=$1
CACHE=${NTP_VM_CACHE:-/var/cache/ntprof-vm}
O=${O:-build}; case $O in /*) ;; *) O=$TOP/$O ;; esac
KDIR=$CACHE/kernel-$KERNEL
APTDIR=$CACHE/apt/$KERNEL
log() { echo "vm-btf: $*" >&2; }
die() { echo "vm-btf: error: $*" >&2; exit 1; }
. "$KDIR/env"

ko=$(ls "$NTP_VM_MODDIR/kernel/drivers/nvme/host/nvme-tcp.ko" 2>/dev/null || true)
[ -n "$ko" ] || die "no uncompressed nvme-tcp.ko in $NTP_VM_MODDIR (run tests/vm/kernel.sh $KERNEL)"
if [ "$(readelf -S "$ko" | grep -c '\.BTF ')" -gt 0 ]; then
	rm -f "$KDIR/ntprof.btf"
	log "$NTP_VM_KVER: the modules have BTF of their own; no file needed"
	exit 0
fi
MODS=$("$TOP/tools/ntprof-btf.sh" -l | tr '\n' ' ')
if [ -s "$KDIR/ntprof.btf" ] && [ "${NTP_VM_REFRESH:-0}" != 1 ] &&
   [ "$(cat "$KDIR/ntprof.btf.mods" 2>/dev/null)" = "$MODS" ]; then
	log "$NTP_VM_KVER: cached $KDIR/ntprof.btf"
	exit 0
fi

PKG=linux-image-$NTP_VM_KVER-dbg
DEB=$CACHE/dbg/${PKG}_${NTP_VM_DEB_VERSION//:/%3a}_amd64.deb
mkdir -p "$CACHE/dbg"
if [ ! -s "$DEB" ]; then
	# kernel.sh's private apt state knows this suite's packages
	[ -f "$APTDIR/sources.list" ] || die "no $APTDIR/sources.list (run tests/vm/kernel.sh $KERNEL)"
	APT=(-o Dir::Etc::sourcelist="$APTDIR/sources.list" -o Dir::Etc::sourceparts=-
	     -o Dir::State::Lists="$APTDIR/lists" -o Dir::State::status="$APTDIR/status"
	     -o Dir::Cache="$APTDIR/cache" -o APT::Sandbox::User=root -o Debug::NoLocking=1)
	t=$(date +%s)
	log "apt-get download $PKG=$NTP_VM_DEB_VERSION (about 800 MB)"
	(cd "$CACHE/dbg" && apt-get "${APT[@]}" download -q "$PKG=$NTP_VM_DEB_VERSION" > "$CACHE/dbg/dl.log" 2>&1) ||
		{ cat "$CACHE/dbg/dl.log" >&2; die "apt-get download $PKG=$NTP_VM_DEB_VERSION failed"; }
	[ -s "$DEB" ] || die "apt-get download left no $DEB"
	log "downloaded $(du -h "$DEB" | cut -f1) in $(( $(date +%s) - t )) s"
fi
t=$(date +%s)
NTPROF=$O/ntprof "$TOP/tools/ntprof-btf.sh" -o "$KDIR/ntprof.btf.new" "$DEB"
mv "$KDIR/ntprof.btf.new" "$KDIR/ntprof.btf"
echo "$MODS" > "$KDIR/ntprof.btf.mods"
log "$NTP_VM_KVER: built $KDIR/ntprof.btf ($(du -h "$KDIR/ntprof.btf" | cut -f1)) in $(( $(date +%s) - t )) s"
