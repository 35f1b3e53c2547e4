# mk/spdk.mk - the SPDK stand-in of the tests (tests/tools/spdk-standin*.c).
#
# Laid out as SPDK's build is: the program in standin/bin, the library that
# holds the probes and the sampling variable in standin/lib (found at run
# time through LD_LIBRARY_PATH, as SPDK's build/lib is), so ntprof finds the
# probes the way it finds SPDK's (docs/spdk.md). Needs <sys/sdt.h>
# (systemtap-sdt-dev).

STANDIN_DIR := $(O)/standin
STANDIN_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -pthread -I. -Ibpf

$(STANDIN_DIR)/lib/libntp_standin.so: tests/tools/spdk-standin-lib.c tests/tools/spdk-standin.h \
		spdk/ntprof_usdt.h bpf/ntprof_spdk.h bpf/ntprof_hash.h
	$(MSG) CC $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STANDIN_CFLAGS) -fPIC -shared $< -o $@

$(STANDIN_DIR)/bin/spdk-standin: tests/tools/spdk-standin.c tests/tools/spdk-standin.h \
		tests/tools/bpf-runtime.c tests/tools/bpf-runtime.h $(STANDIN_DIR)/lib/libntp_standin.so
	$(MSG) CC $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STANDIN_CFLAGS) $(filter %.c,$^) -o $@ -L$(STANDIN_DIR)/lib -lntp_standin

spdk-standin: $(STANDIN_DIR)/bin/spdk-standin
.PHONY: spdk-standin

# make bench-spdk: a sampled command's cost on this machine's own CPU, through
# the SPDK path (bench/spdk_cold.sh; root and uprobes)
bench-spdk: $(O)/ntprof $(STANDIN_DIR)/bin/spdk-standin
	$(Q)bench/spdk_cold.sh $(O)/ntprof
.PHONY: bench-spdk

# without <sys/sdt.h> the stand-in is not built and tests/cli/spdk.sh skips;
# asked of the compiler, since Debian keeps the header under its multiarch
# include directory (/usr/include/x86_64-linux-gnu/sys/sdt.h)
HAVE_SDT_H := $(shell printf '\043include <sys/sdt.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo y)
ifeq ($(HAVE_SDT_H),y)
check: $(STANDIN_DIR)/bin/spdk-standin
endif
