# format.mk - the .ntp format's extras: the reader benchmark and the libFuzzer
# target of the reader (make fuzz FUZZ_SECONDS=60).

$(O)/bench/read_bench: bench/read_bench.c $(call objs,rel,$(CORE_SRCS))
	$(MSG) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDFLAGS) $(LDLIBS_CORE)

.PHONY: bench-reader
bench-reader: $(O)/bench/read_bench $(O)/rel/ntprof
	$(Q)O=$(O) NTPROF=$(O)/rel/ntprof bench/reader.sh

bench: bench-reader
