# ntprof - where does the time of an NVMe-oF I/O go?
#
#   make                 build ntprof and ntprof-top into build/
#   make check           unit tests (cmocka) and CLI golden tests, under ASan and UBSan
#   make install         PREFIX=/usr/local DESTDIR=
#   make vm-test         the QEMU test bed (tests/vm): real NVMe/TCP and NVMe/RDMA
#   make bench           benchmarks (bench/)
#   V=1                  show the commands
#
# Fragments in mk/ add the BPF skeletons, the test bed, benchmarks, fuzzing and
# screenshots; each source directory is picked up by wildcard, so adding a file
# needs no edit here.

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DESTDIR ?=
O       ?= build
V       ?= 0
Q        = $(if $(filter 1,$(V)),,@)
MSG      = $(if $(filter 1,$(V)),@true,@printf '  %-8s %s\n')

CC      ?= cc
CLANG   ?= clang
BPFTOOL ?= bpftool
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.1.0)

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -DNTP_VERSION='"$(VERSION)"' \
	     -Isrc -Ibpf -I$(O)/bpf -MMD -MP
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDLIBS_CORE := -ljson-c -lm -lpthread
LDLIBS_BPF  := -lbpf -lelf -lz
LDLIBS_UI   := -lncursesw

CORE_SRCS      := $(wildcard src/core/*.c)
UI_SRCS        := $(wildcard src/ui/*.c)
CLI_SRCS       := $(wildcard src/cli/*.c)
COLLECTOR_SRCS := $(wildcard src/collector/*.c)
TOP_SRCS       := $(wildcard src/top/*.c)
# the option tables and their parser (src/cli/options.h) serve ntprof-top too;
# the unit tests parse ntprof-top's command line as well
OPT_SRCS       := $(wildcard src/cli/options*.c)
UNIT_EXTRA     := $(OPT_SRCS) src/top/opts.c
UNIT_SRCS      := $(wildcard tests/unit/test_*.c)

objs = $(patsubst %.c,$(O)/$(1)/%.o,$(2))

.PHONY: all check install clean unit-tests
.DELETE_ON_ERROR:
.SECONDARY:

all: $(O)/ntprof $(O)/ntprof-top

# ---- the two programs (normal and sanitized builds share the rules) ----
define PROGRAMS
$(O)/$(1)/%.o: %.c
	$$(MSG) CC$(if $(2), [san],) $$<
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $(2) -c $$< -o $$@

$(O)/$(1)/ntprof: $(call objs,$(1),$(CLI_SRCS) $(COLLECTOR_SRCS) $(CORE_SRCS))
	$$(MSG) LD $$@
	$$(Q)$$(CC) $(2) $$^ -o $$@ $$(LDFLAGS) $$(LDLIBS_BPF) $$(LDLIBS_CORE)

$(O)/$(1)/ntprof-top: $(call objs,$(1),$(TOP_SRCS) $(OPT_SRCS) $(UI_SRCS) $(COLLECTOR_SRCS) $(CORE_SRCS))
	$$(MSG) LD $$@
	$$(Q)$$(CC) $(2) $$^ -o $$@ $$(LDFLAGS) $$(LDLIBS_UI) $$(LDLIBS_BPF) $$(LDLIBS_CORE)
endef
$(eval $(call PROGRAMS,rel,))
$(eval $(call PROGRAMS,san,$(SAN)))

$(O)/ntprof: $(O)/rel/ntprof
	$(Q)cp $< $@
$(O)/ntprof-top: $(O)/rel/ntprof-top
	$(Q)cp $< $@

# ---- tests: every tests/unit/test_*.c is one cmocka program, linked with the
# sanitized core and the pure UI code ----
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/san/tests/%,$(UNIT_SRCS))
$(O)/san/tests/%: $(O)/san/tests/unit/%.o $(call objs,san,$(CORE_SRCS) $(UI_SRCS) $(UNIT_EXTRA))
	$(MSG) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN) $^ -o $@ $(LDFLAGS) -lcmocka $(LDLIBS_UI) $(LDLIBS_CORE)

unit-tests: $(UNIT_BINS)

check: $(UNIT_BINS) $(O)/san/ntprof $(O)/san/ntprof-top
	$(Q)NTPROF=$(O)/san/ntprof NTPROF_TOP=$(O)/san/ntprof-top O=$(O) tests/run-tests.sh $(UNIT_BINS)

install: all
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(O)/ntprof $(O)/ntprof-top $(DESTDIR)$(BINDIR)/

clean:
	rm -rf $(O)

-include mk/*.mk
-include $(shell find $(O) -name '*.d' 2>/dev/null)
