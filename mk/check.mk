# check.mk - what `make check` builds beyond the Makefile's unit tests.
#
# test_kmod reads the module state code of the collector (the unit tests
# link only the pure core and the UI, plus UNIT_EXTRA).
$(O)/san/tests/test_kmod: $(call objs,san,src/collector/kmod.c)

# test_dumprow again with the SIMD paths of digits.h and dumprow.c compiled
# out (NTP_NO_SIMD), as on a CPU without SSE2: the scalar branches are built
# and checked against snprintf() too. Only those three files differ from the
# other unit tests' objects, which it takes from the normal build: UBSan
# without ASan, so that this second run of its millions of rows costs a
# fraction of the first.
SCALAR_SRCS := src/core/render/dumprow.c src/core/render/digits.c
SCALAR_TEST := $(O)/scalar/tests/test_dumprow
$(O)/scalar/%.o: %.c
	$(MSG) "CC [ubsan, no SIMD]" $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=undefined -fno-sanitize-recover=all -DNTP_NO_SIMD -c $< -o $@
$(SCALAR_TEST): $(O)/scalar/tests/unit/test_dumprow.o $(patsubst %.c,$(O)/scalar/%.o,$(SCALAR_SRCS)) \
		$(call objs,rel,$(filter-out $(SCALAR_SRCS),$(CORE_SRCS)) $(UI_SRCS) $(UNIT_EXTRA))
	$(MSG) LD $@
	$(Q)$(CC) -fsanitize=undefined $^ -o $@ $(LDFLAGS) -lcmocka $(LDLIBS_UI) $(LDLIBS_CORE)
# check's recipe expands UNIT_BINS when it runs, after this file is read:
# the scalar test is run and counted with the others
check: $(SCALAR_TEST)
UNIT_BINS += $(SCALAR_TEST)
