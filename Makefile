# ntprof - where does the time of an NVMe-oF I/O go?
#
#   make                 build ntprof and ntprof-top into build/ (static-pie: no
#                        shared library needed; SHARED=1 links the shared ones)
#   make check           unit tests (cmocka) and CLI golden tests, under ASan and UBSan
#   make install         PREFIX=/usr/local DESTDIR= (programs, ntprof-btf, man pages, bash completion)
#   make static          build/static/ntprof{,-top}, whatever SHARED says
#   make vm-test         the QEMU test bed (tests/vm): real NVMe/TCP and NVMe/RDMA
#   make bench           benchmarks (bench/)
#   V=1                  show the commands
#
# Fragments in mk/ add the BPF skeletons, the test bed, benchmarks, fuzzing and
# screenshots; each source directory is picked up by wildcard, so adding a file
# needs no edit here.

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR ?=
O       ?= build
SHARED  ?= 0
V       ?= 0
Q        = $(if $(filter 1,$(V)),,@)
MSG      = $(if $(filter 1,$(V)),@true,@printf '  %-8s %s\n')

CC      ?= cc
CLANG   ?= clang
BPFTOOL ?= bpftool
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.1.0)

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) $(WARN) -fPIE -std=gnu11 -D_GNU_SOURCE -DNTP_VERSION='"$(VERSION)"' \
	     -Isrc -Ibpf -I$(O)/bpf -MMD -MP
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDLIBS_CORE := -ljson-c -lm -lpthread
LDLIBS_BPF  := -lbpf -lelf -lz
LDLIBS_UI   := -lncursesw

CORE_SRCS      := $(wildcard src/core/*.c src/core/*/*.c)
UI_SRCS        := $(filter-out src/ui/theme_builtin.c,$(wildcard src/ui/*.c)) $(O)/gen/theme_builtin.c
CLI_SRCS       := $(wildcard src/cli/*.c)
COLLECTOR_SRCS := $(wildcard src/collector/*.c)
TOP_SRCS       := $(wildcard src/top/*.c)
# the option tables and their parser (src/cli/options.h) serve ntprof-top too;
# the unit tests parse ntprof-top's command line as well
OPT_SRCS       := $(wildcard src/cli/options*.c)
UNIT_EXTRA     := $(OPT_SRCS) src/top/opts.c src/collector/session.c src/collector/hostq.c src/top/source.c
UNIT_SRCS      := $(wildcard tests/unit/test_*.c)
# what each program is made of (the normal, sanitized and static builds
# alike), besides src/core's archive: from it the linker takes only the
# objects a program calls
NTPROF_SRCS     = $(CLI_SRCS) $(COLLECTOR_SRCS)
NTPROF_TOP_SRCS = $(TOP_SRCS) $(OPT_SRCS) $(UI_SRCS) $(COLLECTOR_SRCS)

objs = $(patsubst %.c,$(O)/$(1)/%.o,$(2))

.PHONY: all check install clean unit-tests static
.DELETE_ON_ERROR:
.SECONDARY:

all: $(O)/ntprof $(O)/ntprof-top

# ---- the two programs (normal and sanitized builds share the rules) ----
define PROGRAMS
$(O)/$(1)/%.o: %.c
	$$(MSG) CC$(if $(2), [san],) $$<
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $(2) -c $$< -o $$@

$(O)/$(1)/libntpcore.a: $(call objs,$(1),$(CORE_SRCS))
	$$(MSG) AR $$@
	$$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^

$(O)/$(1)/ntprof: $(call objs,$(1),$(NTPROF_SRCS)) $(O)/$(1)/libntpcore.a
	$$(MSG) LD $$@
	$$(Q)$$(CC) $(2) $$^ -o $$@ $$(LDFLAGS) $$(LDLIBS_BPF) $$(LDLIBS_CORE)

$(O)/$(1)/ntprof-top: $(call objs,$(1),$(NTPROF_TOP_SRCS)) $(O)/$(1)/libntpcore.a
	$$(MSG) LD $$@
	$$(Q)$$(CC) $(2) $$^ -o $$@ $$(LDFLAGS) $$(LDLIBS_UI) $$(LDLIBS_BPF) $$(LDLIBS_CORE)
endef
$(eval $(call PROGRAMS,rel,))
$(eval $(call PROGRAMS,san,$(SAN)))

# ---- make static: the same objects linked against Debian's static archives
# and glibc, as one position-independent executable (-static-pie: ASLR kept).
# The default build: such a program starts without the dynamic loader's work
# (mapping and relocating six libraries), which is most of what a short
# report costs beyond reading its file, and runs on a machine without build
# tools or these libraries (docs/building.md; the test bed's scenario
# static-binary runs them where none is). SHARED=1 installs the shared build
# instead, for a distribution whose libraries are updated apart from ntprof ----
LDLIBS_STATIC_BPF := -lbpf -lelf -lz -lzstd
LDLIBS_STATIC_UI  := -lncursesw -ltinfo
static: $(O)/static/ntprof $(O)/static/ntprof-top

$(O)/static/ntprof: $(call objs,rel,$(NTPROF_SRCS)) $(O)/rel/libntpcore.a
	$(MSG) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -static-pie $^ -o $@ $(LDFLAGS) $(LDLIBS_STATIC_BPF) $(LDLIBS_CORE)

$(O)/static/ntprof-top: $(call objs,rel,$(NTPROF_TOP_SRCS)) $(O)/rel/libntpcore.a
	$(MSG) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -static-pie $^ -o $@ $(LDFLAGS) $(LDLIBS_STATIC_UI) $(LDLIBS_STATIC_BPF) $(LDLIBS_CORE)

# the stamp names the choice, so that a build made the other way is copied anew
LINKED := $(if $(filter 1,$(SHARED)),rel,static)
$(O)/linked.%:
	$(Q)mkdir -p $(@D) && rm -f $(O)/linked.* && touch $@
$(O)/ntprof: $(O)/$(LINKED)/ntprof $(O)/linked.$(LINKED)
	$(Q)cp $< $@
$(O)/ntprof-top: $(O)/$(LINKED)/ntprof-top $(O)/linked.$(LINKED)
	$(Q)cp $< $@

# ---- tests: every tests/unit/test_*.c is one cmocka program, linked with the
# sanitized core and the pure UI code ----
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/san/tests/%,$(UNIT_SRCS))
$(O)/san/tests/%: $(O)/san/tests/unit/%.o $(call objs,san,$(CORE_SRCS) $(UI_SRCS) $(UNIT_EXTRA))
	$(MSG) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN) $^ -o $@ $(LDFLAGS) -lcmocka $(LDLIBS_UI) $(LDLIBS_CORE)

# test_source_record delays the source thread on its way into the wait (its comment)
$(O)/san/tests/test_source_record: LDFLAGS += -Wl,--wrap=ntp_writer_wait_room

unit-tests: $(UNIT_BINS)

check: $(UNIT_BINS) $(O)/san/ntprof $(O)/san/ntprof-top
	$(Q)NTPROF=$(O)/san/ntprof NTPROF_TOP=$(O)/san/ntprof-top O=$(O) tests/run-tests.sh $(UNIT_BINS)

# The programs, ntprof-btf (docs/kernel-btf.md), the man pages and the bash
# completion (mk/docs.mk).
install: all docs
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(O)/ntprof $(O)/ntprof-top $(DESTDIR)$(BINDIR)/
	install -m 0755 tools/ntprof-btf.sh $(DESTDIR)$(BINDIR)/ntprof-btf
	install -m 0644 $(O)/man/ntprof.8 $(O)/man/ntprof-top.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 $(O)/completion/ntprof $(O)/completion/ntprof-top $(DESTDIR)$(BASHCOMPDIR)/

clean:
	rm -rf $(O)

-include mk/*.mk
-include $(shell find $(O) -name '*.d' 2>/dev/null)
