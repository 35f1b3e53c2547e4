#!/usr/bin/env bash
# Make the BTF file that `ntprof record --btf` needs on a kernel whose NVMe
# modules carry no BTF of their own (module BTF came with Linux 5.11; Debian 11's
# 5.10 has vmlinux BTF only). BTFHub's way: the types come from the DWARF of
# the kernel's debug package, for exactly that kernel build.
#
#   tools/ntprof-btf.sh [-o OUT] DEB|DIR
#   tools/ntprof-btf.sh -l      the modules it takes, one a line
#
#   DEB  the kernel's debug package, e.g. linux-image-5.10.0-46-amd64-dbg_5.10.262-1_amd64.deb
#        (apt-get download linux-image-$(uname -r)-dbg; it must be the exact build)
#   DIR  a tree holding usr/lib/debug/ of that package (/ once the package is installed)
#   OUT  default /var/lib/ntprof/btf/<release>.btf, where ntprof looks by itself
#
# Steps: take vmlinux and the modules whose types ntprof's programs read from
# the package (only those: the .deb is ~800 MB of xz): nvme-core, nvme-tcp,
# nvmet, nvmet-tcp, and for NVMe/RDMA nvme-rdma, nvmet-rdma and ib_core (the
# work completion, its queue pair and cqe: include/rdma/ib_verbs.h); pahole
# encodes each module's DWARF as standalone BTF (btf__add_btf cannot take split
# BTF); `ntprof btf` appends them to vmlinux's own .BTF section and deduplicates
# (src/cli/cmd_btf.c). A kernel built without RDMA gives a file for NVMe/TCP.
# The list of types: src/collector/btf_need.c.
# Needs pahole (Debian package dwarves) and dpkg-deb for a .deb.
# Environment: NTPROF (the ntprof binary; default: the one in PATH, else build/ntprof).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
die() { echo "ntprof-btf: error: $*" >&2; exit 1; }
log() { echo "ntprof-btf: $*" >&2; }
usage() { sed -n '7,14p' "$0" | sed 's/^# \{0,1\}//'; }

# under kernel/drivers/; the RDMA ones are optional (CONFIG_INFINIBAND=n)
MODS="nvme/host/nvme-core nvme/host/nvme-tcp nvme/target/nvmet nvme/target/nvmet-tcp"
RDMA_MODS="nvme/host/nvme-rdma nvme/target/nvmet-rdma infiniband/core/ib_core"

OUT=
while getopts "o:lh" o; do
	case $o in
	o) OUT=$OPTARG ;;
	l) for m in $MODS $RDMA_MODS; do basename "$m"; done; exit 0 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { usage >&2; exit 2; }
SRC=$1
command -v pahole >/dev/null || die "pahole missing: apt-get install dwarves"
NTPROF=${NTPROF:-$(command -v ntprof || echo "$HERE/../build/ntprof")}
[ -x "$NTPROF" ] || die "ntprof not found (set NTPROF=/path/to/ntprof)"

W=$(mktemp -d "${TMPDIR:-/tmp}/ntprof-btf.XXXXXX")
trap 'rm -rf "$W"' EXIT

if [ -f "$SRC" ]; then
	command -v dpkg-deb >/dev/null || die "dpkg-deb missing: $SRC is a .deb"
	dpkg-deb -f "$SRC" Package >/dev/null 2>&1 || die "$SRC: not a Debian package"
	log "unpacking vmlinux and the NVMe modules from $(basename "$SRC") (decompresses the whole package: about a minute)"
	pats=("./usr/lib/debug/boot/vmlinux-*")
	for m in $MODS $RDMA_MODS; do pats+=("./usr/lib/debug/lib/modules/*/kernel/drivers/$m.ko*"); done
	# tar fails when a pattern matches nothing (the RDMA modules may be absent):
	# what is missing is told below, module by module
	dpkg-deb --fsys-tarfile "$SRC" | tar -x -C "$W" --wildcards "${pats[@]}" 2>/dev/null || true
	[ -d "$W/usr/lib/debug/boot" ] || [ -d "$W/usr/lib/debug/lib/modules" ] ||
		die "$SRC: no vmlinux or NVMe modules under usr/lib/debug (is it a linux-image-*-dbg package?)"
	ROOT=$W
elif [ -d "$SRC" ]; then
	ROOT=$SRC
else
	die "$SRC: no such file or directory"
fi
DBG=$ROOT/usr/lib/debug
kvers=$(cd "$DBG/lib/modules" 2>/dev/null && ls -d */ 2>/dev/null | tr -d / || true)
[ -n "$kvers" ] || die "$SRC: no usr/lib/debug/lib/modules/<release> (is it a linux-image-*-dbg package?)"
[ "$(echo "$kvers" | wc -w)" = 1 ] || die "$SRC: several kernels ($kvers): unpack one -dbg package per tree"
KVER=$kvers
VMLINUX=$DBG/boot/vmlinux-$KVER
[ -f "$VMLINUX" ] || VMLINUX=$DBG/lib/modules/$KVER/vmlinux
[ -f "$VMLINUX" ] || die "no vmlinux for $KVER under $DBG"
OUT=${OUT:-/var/lib/ntprof/btf/$KVER.btf}

inputs=("$VMLINUX")
# A module built into the kernel (CONFIG_INFINIBAND=y for ib_core) has no .ko:
# its types are in vmlinux's DWARF and BTF already. kbuild lists it in
# modules.builtin, which the kernel's image package (not the -dbg one)
# installs in /lib/modules/<release>/.
builtin_list=
for f in "$ROOT/lib/modules/$KVER/modules.builtin" "/lib/modules/$KVER/modules.builtin"; do
	[ -f "$f" ] && { builtin_list=$f; break; }
done
builtin() { [ -n "$builtin_list" ] && grep -q "^kernel/drivers/$1\.ko" "$builtin_list"; }
has_ko() { ls "$DBG/lib/modules/$KVER/kernel/drivers/$1".ko* >/dev/null 2>&1; }
take=
for m in $MODS $RDMA_MODS; do
	if ! has_ko "$m" && builtin "$m"; then
		log "$(basename "$m") is built into $KVER ($builtin_list): its types come with vmlinux"
	else
		take="$take $m"
	fi
done
rdma=$(for m in $RDMA_MODS; do has_ko "$m" || builtin "$m" || echo "$m"; done)
if [ -n "$rdma" ]; then
	kos="$(for m in $rdma; do printf '%s.ko ' "$(basename "$m")"; done)"
	if [ -n "$builtin_list" ]; then
		log "no ${kos}for $KVER under $DBG, nor built in ($builtin_list): the file serves NVMe/TCP only"
	else
		# a .deb's tree has no modules.builtin, and /lib/modules/ has one
		# only for the kernels installed here
		log "no ${kos}for $KVER under $DBG, and no modules.builtin for $KVER ($ROOT/lib/modules/$KVER/ nor /lib/modules/$KVER/, installed by the kernel's image package) to tell whether they are built in: if they are, their types are vmlinux's and the file serves NVMe/RDMA too; if not, it serves NVMe/TCP only"
	fi
	for m in $RDMA_MODS; do take=$(echo " $take " | sed "s| $m | |"); done
fi
for m in $take; do
	ko=$(ls "$DBG/lib/modules/$KVER/kernel/drivers/$m".ko* 2>/dev/null | head -1 || true)
	[ -n "$ko" ] || die "no $(basename "$m").ko for $KVER under $DBG"
	case $ko in
	*.xz) xz -dc "$ko" > "$W/$(basename "$m").ko"; ko=$W/$(basename "$m").ko ;;
	*.zst) zstd -qdc "$ko" > "$W/$(basename "$m").ko"; ko=$W/$(basename "$m").ko ;;
	esac
	# standalone (no --btf_base): the module's DWARF gives every type it uses
	pahole --btf_encode_detached="$W/$(basename "$m").btf" "$ko" > "$W/pahole.log" 2>&1 ||
		{ cat "$W/pahole.log" >&2; die "pahole failed on $ko"; }
	inputs+=("$W/$(basename "$m").btf")
done
mkdir -p "$(dirname "$OUT")"
"$NTPROF" btf -o "$OUT" "${inputs[@]}"
log "kernel $KVER: $OUT$([ "$OUT" = "/var/lib/ntprof/btf/$KVER.btf" ] && echo ", where ntprof record and probe find it on that kernel" || echo "; use it with --btf $OUT or copy it to /var/lib/ntprof/btf/$KVER.btf")"
