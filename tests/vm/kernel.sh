#!/usr/bin/env bash
# Fetch (download, never install) one of Debian's kernels for the test bed and
# unpack it into the cache; the machine's own /boot stays untouched.
#
#   tests/vm/kernel.sh [6.1|5.10|6.12|7.2]  (default: $KERNEL or 6.1)
#
# 7.2 is Debian sid's kernel: sid moves, so the package is whatever sid's
# linux-image-amd64 names today (a newer 7.x point release is taken as it is;
# another major version is refused). From 7.x on, Debian splits the kernel:
# linux-image-<kver> is an empty package whose Depends name linux-binary-<kver>
# (the image, as usr/lib/modules/<kver>/vmlinuz), linux-modules-<kver> and
# linux-base-<kver>; all are unpacked.
#
# Cache layout ($NTP_VM_CACHE, default /var/cache/ntprof-vm):
#   apt/<K>/          private apt state (sources.list, lists/, status) for apt-get download
#   debs/             the downloaded linux-image-*.deb files
#   kernel-<K>/root/  the unpacked .deb (boot/vmlinuz-*, lib/modules/<kver>/ with modules.dep)
#   kernel-<K>/vmlinux  the uncompressed ELF kernel (with .BTF) taken out of the bzImage
#   kernel-<K>/env    shell-sourceable paths: NTP_VM_KVER NTP_VM_VMLINUX NTP_VM_VMLINUZ NTP_VM_MODDIR
# A second run reuses what is there (no apt-get update, no download) unless
# NTP_VM_REFRESH=1. Modules shipped compressed (.ko.xz/.ko.zst) get an
# uncompressed .ko beside them under drivers/nvme and drivers/infiniband, so BPF
# code can be built against their BTF on the host.
set -euo pipefail
KERNEL=${1:-${KERNEL:-6.1}}
CACHE=${NTP_VM_CACHE:-/var/cache/ntprof-vm}
KDIR=$CACHE/kernel-$KERNEL
APTDIR=$CACHE/apt/$KERNEL
log() { echo "vm-kernel: $*" >&2; }
die() { echo "vm-kernel: error: $*" >&2; exit 1; }

case $KERNEL in
6.1)  suites_main="bookworm bookworm-updates"; suites_sec="bookworm-security" ;;
5.10) suites_main="bullseye"; suites_sec="bullseye-security" ;;
6.12) suites_main="bookworm-backports"; suites_sec="" ;;
7.2)  suites_main="sid"; suites_sec="" ;;
*) die "KERNEL=$KERNEL: expected 6.1, 5.10, 6.12 or 7.2" ;;
esac

# The machine's own Debian mirror (deb822 *.sources or one-line *.list); the
# security archive comes from the entry whose suite ends in -security.
mirrors() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1=="deb" { i=2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } print $i, $(i+1) }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# one stanza per blank-line-separated block
		awk 'BEGIN{RS=""} { u=""; s=""; n=split($0, L, "\n");
			for (j=1;j<=n;j++) { if (L[j] ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", L[j]); u=L[j] }
			                     if (L[j] ~ /^Suites:/) { sub(/^Suites:[ \t]*/, "", L[j]); s=L[j] } }
			split(u, U, " "); m=split(s, S, " ");
			for (k=1;k<=m;k++) print U[1], S[k] }' "$f"
	done
}
mirror_for() { # suite-kind: main|security
	local uri suite
	while read -r uri suite; do
		case $1:$suite in
		main:bookworm|main:bookworm-updates|main:bullseye|main:trixie) echo "${uri%/}"; return ;;
		security:*-security|security:*/updates) echo "${uri%/}"; return ;;
		esac
	done < <(mirrors)
}

have_kernel() { [ -s "$KDIR/env" ] && . "$KDIR/env" && [ -f "$NTP_VM_VMLINUZ" ] && [ -s "$NTP_VM_VMLINUX" ]; }

if [ "${NTP_VM_REFRESH:-0}" != 1 ] && have_kernel; then
	log "cached $NTP_VM_KVER (NTP_VM_REFRESH=1 to look for a newer one)"
else
	MAIN=$(mirror_for main); SEC=$(mirror_for security)
	[ -n "$MAIN" ] || die "no Debian mirror found in /etc/apt/sources.list(.d)"
	[ -n "$SEC" ] || SEC=${MAIN%/debian}/debian-security
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$CACHE/debs"
	: > "$APTDIR/status"
	{
		for s in $suites_main; do echo "deb $MAIN $s main"; done
		for s in $suites_sec; do echo "deb $SEC $s main"; done
	} > "$APTDIR/sources.list"
	APT=(-o Dir::Etc::sourcelist="$APTDIR/sources.list" -o Dir::Etc::sourceparts=-
	     -o Dir::State::Lists="$APTDIR/lists" -o Dir::State::status="$APTDIR/status"
	     -o Dir::Cache="$APTDIR/cache" -o APT::Sandbox::User=root -o Debug::NoLocking=1)
	log "apt-get update ($(tr '\n' ';' < "$APTDIR/sources.list"))"
	apt-get "${APT[@]}" update -qq >"$APTDIR/update.log" 2>&1 || { cat "$APTDIR/update.log" >&2; die "apt-get update failed"; }
	# linux-image-amd64 is a metapackage: its Depends names the real image package.
	IMGPKG=$(apt-cache "${APT[@]}" depends linux-image-amd64 |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$IMGPKG" ] || die "cannot resolve linux-image-amd64 in $APTDIR/sources.list"
	# the signed image package has the short name; strip the -unsigned suffix if that is what we got
	KVER=${IMGPKG#linux-image-}; KVER=${KVER%-unsigned}
	case $KVER in
	"${KERNEL%%.*}".*) ;;
	*) die "KERNEL=$KERNEL: $suites_main's linux-image-amd64 is now $IMGPKG; tests/vm/kernel.sh needs an entry for it" ;;
	esac
	case $KVER in "$KERNEL".*|"$KERNEL"-*) ;; *) log "note: KERNEL=$KERNEL is $suites_main's kernel, now $KVER" ;; esac
	VERSION=$(apt-cache "${APT[@]}" show "$IMGPKG" | awk '/^Version:/ { print $2; exit }')
	# The packages to unpack: the image itself and, where the image is split
	# (7.x), the kernel binary and the modules it depends on.
	PKGS="$IMGPKG $(apt-cache "${APT[@]}" depends "$IMGPKG" |
		awk -v k="$KVER" '$1 ~ /Depends:/ && ($2 == "linux-binary-" k || $2 == "linux-modules-" k || $2 == "linux-base-" k) { print $2 }' |
		sort -u | tr '\n' ' ')"
	DEBS=()
	for p in $PKGS; do
		DEB=$(ls "$CACHE/debs/${p}_"*.deb 2>/dev/null | grep -F "_${VERSION//:/%3a}_" | head -1 || true)
		if [ -z "$DEB" ]; then
			log "apt-get download $p $VERSION"
			(cd "$CACHE/debs" && apt-get "${APT[@]}" download -q "$p" >/dev/null)
			DEB=$(ls -t "$CACHE/debs/${p}_"*.deb | head -1)
		fi
		DEBS+=("$DEB")
	done
	rm -rf "$KDIR"; mkdir -p "$KDIR"
	for DEB in "${DEBS[@]}"; do
		log "unpacking $(basename "$DEB")"
		dpkg -x "$DEB" "$KDIR/root"
	done
	# (usr-merged packages ship usr/lib/modules: the bed reads lib/modules)
	if [ ! -d "$KDIR/root/lib/modules/$KVER" ] && [ -d "$KDIR/root/usr/lib/modules/$KVER" ]; then
		mkdir -p "$KDIR/root/lib/modules"
		ln -s "../../usr/lib/modules/$KVER" "$KDIR/root/lib/modules/$KVER"
	fi
	MODDIR=$KDIR/root/lib/modules/$KVER
	[ -d "$MODDIR" ] || die "$PKGS: no lib/modules/$KVER"
	# The .deb ships no modules.dep (its postinst runs depmod): make one.
	depmod -b "$KDIR/root" "$KVER"
	# (7.x's linux-binary puts the image beside the modules, not in /boot)
	VMLINUZ=$KDIR/root/boot/vmlinuz-$KVER
	[ -f "$VMLINUZ" ] || [ ! -f "$MODDIR/vmlinuz" ] || VMLINUZ=$MODDIR/vmlinuz
	"$(dirname "$0")/extract-vmlinux.sh" "$VMLINUZ" > "$KDIR/vmlinux" || die "no ELF vmlinux inside $VMLINUZ"
	# Uncompressed copies of the NVMe/RDMA modules for host-side BTF work.
	find "$MODDIR/kernel/drivers/nvme" "$MODDIR/kernel/drivers/infiniband" \( -name '*.ko.xz' -o -name '*.ko.zst' \) 2>/dev/null |
	while read -r m; do
		case $m in *.xz) xz -dc "$m" > "${m%.xz}" ;; *.zst) zstd -qdc "$m" > "${m%.zst}" ;; esac
	done
	cat > "$KDIR/env" <<-EOF
	NTP_VM_KERNEL=$KERNEL
	NTP_VM_KVER=$KVER
	NTP_VM_DEB_VERSION=$VERSION
	NTP_VM_ROOT=$KDIR/root
	NTP_VM_VMLINUZ=$VMLINUZ
	NTP_VM_VMLINUX=$KDIR/vmlinux
	NTP_VM_MODDIR=$MODDIR
	EOF
	. "$KDIR/env"
fi

# (grep -c, not grep -q: with pipefail an early-exiting grep fails readelf by SIGPIPE)
has_btf() { [ "$(readelf -S "$1" 2>/dev/null | grep -c '\.BTF ')" -gt 0 ] && echo yes || echo no; }
btf=$(has_btf "$NTP_VM_VMLINUX")
ko=$NTP_VM_MODDIR/kernel/drivers/nvme/host/nvme-tcp.ko
modbtf=$(has_btf "$ko")
echo "vm-kernel: KERNEL=$NTP_VM_KERNEL KVER=$NTP_VM_KVER (package version $NTP_VM_DEB_VERSION)"
echo "vm-kernel: env=$KDIR/env"
echo "vm-kernel: vmlinuz=$NTP_VM_VMLINUZ"
echo "vm-kernel: vmlinux=$NTP_VM_VMLINUX (BTF: $btf)"
echo "vm-kernel: modules=$NTP_VM_MODDIR (nvme-tcp.ko: ${ko:-none}, module BTF: $modbtf)"
# The modules every bed run needs (a kernel flavour without them, e.g. one
# built without InfiniBand, is of no use here).
missing=
for m in nvme-tcp nvmet-tcp nvme-rdma nvmet-rdma rdma_rxe null_blk; do
	modprobe -d "$NTP_VM_ROOT" -S "$NTP_VM_KVER" --show-depends "$m" >/dev/null 2>&1 || missing="$missing $m"
done
[ -z "$missing" ] || die "$NTP_VM_KVER lacks the modules:$missing"
echo "vm-kernel: nvme-tcp nvmet-tcp nvme-rdma nvmet-rdma rdma_rxe null_blk: present"
