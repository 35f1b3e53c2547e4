# The QEMU test bed (tests/vm, README in tests/vm/README.md).
#
#   make vm-kernel  [KERNEL=6.1|5.10|6.12|7.2] download+unpack Debian's kernel into the cache, print its paths
#   make vm-test    [KERNEL=..] [SCENARIOS="tcp-read rdma-read"]   boot, run scenarios, one verdict line each
#   make vm-top     [KERNEL=..]              ntprof-top -r both live on the guest console
#   make vm-shell   [KERNEL=..]              a shell in the guest (NVMe/TCP loop-back set up)
#   make vm-runner-check                     the runner's own checks (a guest that panics or hangs)
#   make ntp-load                            the load generator, build/ntp-load (static)
# Cache: $(NTP_VM_CACHE) (default /var/cache/ntprof-vm).

KERNEL      ?= 6.1
SCENARIOS   ?=
NTP_VM_CACHE ?= /var/cache/ntprof-vm
export NTP_VM_CACHE

.PHONY: vm-kernel vm-test vm-top vm-shell vm-runner-check ntp-load

vm-kernel:
	$(Q)tests/vm/kernel.sh $(KERNEL)

# The load generator is linked statically (liburing.a) so the guest needs no
# libraries for it.
ntp-load: $(O)/ntp-load
$(O)/ntp-load: tests/tools/ntp-load.c tests/tools/bpf-runtime.c tests/tools/bpf-runtime.h
	$(MSG) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $(filter %.c,$^) -o $@ -static -luring -lm

# The hook-cost bench's tools (bench/hook_cost.sh): the calibration programs'
# loader, on ntprof's own hook table (src/collector/hooks.c), and a plain TCP
# stream over loopback.
$(O)/ntp-hookcal: tests/tools/ntp-hookcal.c src/collector/hooks.c src/collector/hooks.h src/collector/kmod.c \
		 $(O)/bpf/ntprof_calib.skel.h $(O)/bpf/ntprof.skel.h
	$(MSG) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Isrc -Ibpf -I$(O)/bpf $< src/collector/hooks.c \
		src/collector/kmod.c -o $@ \
		$(LDLIBS_BPF)
$(O)/ntp-tcpstream: tests/tools/ntp-tcpstream.c
	$(MSG) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@ -static

# ntprof-top is built once its sources exist (src/top); build/static/ and the
# shared build (rel/ntprof) are for the scenario static-binary; the SPDK
# stand-in where <sys/sdt.h> is (HAVE_SDT_H, mk/spdk.mk: asked of the
# compiler, for Debian's multiarch path)
VM_BINS = $(O)/ntprof $(O)/ntp-load $(O)/ntp-hookcal $(O)/ntp-tcpstream $(if $(TOP_SRCS),$(O)/ntprof-top) $(O)/static/ntprof $(O)/static/ntprof-top $(O)/rel/ntprof \
	   $(if $(filter y,$(HAVE_SDT_H)),$(O)/standin/bin/spdk-standin)

# Each target first makes sure the packages are installed (tests/vm/deps.sh),
# then builds the binaries the guest runs, then boots.
vm-test:
	$(Q)tests/vm/deps.sh
	$(Q)$(MAKE) --no-print-directory $(VM_BINS)
	$(Q)O=$(O) KERNEL=$(KERNEL) SCENARIOS="$(SCENARIOS)" tests/vm/run.sh test

vm-top:
	$(Q)tests/vm/deps.sh
	$(Q)$(MAKE) --no-print-directory $(VM_BINS)
	$(Q)O=$(O) KERNEL=$(KERNEL) tests/vm/run.sh top

vm-shell:
	$(Q)tests/vm/deps.sh
	$(Q)$(MAKE) --no-print-directory $(VM_BINS)
	$(Q)O=$(O) KERNEL=$(KERNEL) tests/vm/run.sh shell

# make check also runs tests/cli/ntp-load.sh against the load generator
check: $(O)/ntp-load

# tests/vm/run.sh's own checks: a guest that panics or hangs mid-scenario
vm-runner-check:
	$(Q)tests/vm/deps.sh
	$(Q)$(MAKE) --no-print-directory $(VM_BINS)
	$(Q)O=$(O) tests/vm/runner-check.sh
