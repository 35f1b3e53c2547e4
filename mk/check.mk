# check.mk - what `make check` builds beyond the Makefile's unit tests.
#
# test_kmod reads the module state code of the collector (the unit tests
# link only the pure core and the UI, plus UNIT_EXTRA).
$(O)/san/tests/test_kmod: $(call objs,san,src/collector/kmod.c)
