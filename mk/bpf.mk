# mk/bpf.mk - ntprof's BPF object and its libbpf skeleton.
#
#   VMLINUX_H=path   use this vmlinux.h instead of generating one from the
#                    running kernel's /sys/kernel/btf/vmlinux
#   VMLINUX_BTF=path generate vmlinux.h from this BTF (or vmlinux ELF) instead
#
# The NVMe types are not in vmlinux BTF (they live in module BTF); the program
# declares the few it reads itself (bpf/nvme_types.bpf.h), so building needs
# no NVMe module. CO-RE relocates everything at load time.

BPF_ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX_BTF  ?= /sys/kernel/btf/vmlinux
BPF_CFLAGS   := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
		-I$(O)/bpf -Ibpf
# libbpf's usdt.bpf.h includes <linux/errno.h>, which wants the multiarch
# <asm/...> headers (libbpf-bootstrap adds clang's system dirs the same way).
BPF_CFLAGS   += -idirafter /usr/include/$(shell $(CC) -dumpmachine)
BPF_HDRS     := $(wildcard bpf/*.h)

ifdef VMLINUX_H
$(O)/bpf/vmlinux.h: $(VMLINUX_H)
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@
else
$(O)/bpf/vmlinux.h:
	$(MSG) BTF $@
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@
endif

# The compiler's object (%.bpf.debug.o) keeps the DWARF of -g, for reading
# the programs against their source (llvm-objdump -S). The object the
# skeleton embeds is that one linked by libbpf's static linker (bpftool gen
# object, as libbpf-bootstrap builds): the BTF and .BTF.ext that CO-RE and
# the verifier's line info need, without the DWARF, which nothing reads at
# load time and which every ntprof binary carried otherwise.
$(O)/bpf/%.bpf.debug.o: bpf/%.bpf.c $(BPF_HDRS) $(O)/bpf/vmlinux.h
	$(MSG) BPF $<
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/bpf/%.bpf.o: $(O)/bpf/%.bpf.debug.o
	$(MSG) BPFLINK $@
	$(Q)$(BPFTOOL) gen object $@.tmp $^ && mv $@.tmp $@

# A file linked into another's object, not a skeleton of its own: the
# NVMe/RDMA hooks into ntprof.bpf.o (one object, one BTF load).
BPF_PARTS := ntprof_rdma
$(O)/bpf/ntprof.bpf.o: $(O)/bpf/ntprof_rdma.bpf.debug.o

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	$(MSG) SKEL $@
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@.tmp && mv $@.tmp $@

BPF_OBJS  := $(filter-out $(BPF_PARTS),$(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c)))
BPF_SKELS := $(BPF_OBJS:%=$(O)/bpf/%.skel.h)
# both objects stay for bpftool and the tests (tests/cli/btf.sh), not only the skeletons
.SECONDARY: $(patsubst bpf/%.bpf.c,$(O)/bpf/%.bpf.debug.o,$(wildcard bpf/*.bpf.c)) $(BPF_OBJS:%=$(O)/bpf/%.bpf.o)

# Every collector object (both builds) includes the skeletons.
$(call objs,rel,$(COLLECTOR_SRCS)) $(call objs,san,$(COLLECTOR_SRCS)): $(BPF_SKELS)

bpf: $(BPF_SKELS)
.PHONY: bpf

# The hooks' cost per I/O in the QEMU test bed (bench/hook_cost.sh).
.PHONY: bench-hooks
bench-hooks: $(O)/ntprof
	bench/hook_cost.sh
