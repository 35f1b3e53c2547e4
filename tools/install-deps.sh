#!/usr/bin/env bash
# Installs everything ntprof needs to build, test and run its QEMU test bed on
# Debian 12 (bookworm), as root. Safe to run again.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(
	build-essential clang llvm pkg-config             # C and BPF compilers (clang -target bpf, libFuzzer)
	libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev  # libbpf CO-RE, skeletons
	libjson-c-dev libcmocka-dev libncurses-dev        # JSON, unit tests, the full-screen monitor
	liburing-dev                                       # the test bed's load generator (linked statically)
	qemu-system-x86 busybox-static kmod cpio xz-utils zstd iproute2 file  # the QEMU test bed (tests/vm)
	dwarves                                            # pahole: DWARF to BTF for kernels without module BTF (tools/ntprof-btf.sh)
	tmux imagemagick fonts-dejavu-core htop python3    # terminal tests, screenshots (python3: tools/ansi2png.py), the CPU bench
	libclang-rt-14-dev                                 # libFuzzer runtime (make fuzz)
	systemtap-sdt-dev                                  # <sys/sdt.h>: the USDT probes of the SPDK stand-in (tests/tools)
	ca-certificates
)
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
echo "install-deps: ${#pkgs[@]} packages present"
