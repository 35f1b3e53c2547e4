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

# ---- fuzzing: make fuzz [FUZZ_SECONDS=60] ----
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1 \
	      -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc -Ibpf
FUZZ_CORE := src/core/store/ntpfile.c src/core/store/ntpfile_ahead.c src/core/store/crc32c.c \
	     src/core/thread.c src/core/hugemem.c

$(O)/fuzz/fuzz_reader: tests/fuzz/fuzz_reader.c tests/fuzz/repair.h $(FUZZ_CORE) src/core/store/ntpfile.h bpf/ntprof_event.h
	$(MSG) CLANG $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_FLAGS) tests/fuzz/fuzz_reader.c $(FUZZ_CORE) -o $@ -lpthread

# Seed corpus: small recordings of every shape, each with a mode byte in front
# (see fuzz_reader.c); the fuzzer adds what it finds under corpus/.
$(O)/fuzz/seeds.stamp: $(O)/rel/ntprof
	$(Q)rm -rf $(O)/fuzz/seeds && mkdir -p $(O)/fuzz/seeds
	$(Q)set -e; n=0; for args in "-r both -n 6 -s 1" "-r host -n 4 -s 1 --sizes 4K,128K --read 50" \
		"-r target -t rdma -n 5 -s 1 --read 0 --sizes 64K" "-r both -d 2.5 --rate 3 -s 1" \
		"-r both -n 8 -s 1 --miss-rsp-sent 50 --drop-target 30 --queues 2" \
		"-r both -n 6 -s 2 --exact-queues --read 50 --sizes 4K,128K"; do \
		n=$$((n + 1)); $(O)/rel/ntprof generate -q -o $(O)/fuzz/f.ntp $$args --seed $$n; \
		for m in 0 1 2 3; do { printf "\\$$(printf %o $$m)"; cat $(O)/fuzz/f.ntp; } \
			> $(O)/fuzz/seeds/s$$n-m$$m; done; \
		sz=$$(stat -c %s $(O)/fuzz/f.ntp); { printf '\003'; head -c $$((sz / 2)) $(O)/fuzz/f.ntp; } \
			> $(O)/fuzz/seeds/s$$n-cut; \
	done; rm -f $(O)/fuzz/f.ntp
	$(Q)touch $@

.PHONY: fuzz
fuzz: $(O)/fuzz/fuzz_reader $(O)/fuzz/seeds.stamp
	$(Q)mkdir -p $(O)/fuzz/corpus
	@echo "  FUZZ     reader for $(FUZZ_SECONDS) s"
	$(Q)$(O)/fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
		-print_final_stats=1 $(O)/fuzz/corpus $(O)/fuzz/seeds > $(O)/fuzz/log 2>&1 || \
		{ tail -40 $(O)/fuzz/log; echo "fuzz: FAILED (log: $(O)/fuzz/log)"; exit 1; }
	$(Q)awk '/^Done [0-9]+ runs/ { print "fuzz: reader: " $$2 " executions in " $$5 " s, no crash" }' $(O)/fuzz/log
	$(Q)grep -E '^cov:|stat::number_of_executed_units|stat::peak_rss' $(O)/fuzz/log | sed 's/^/fuzz:   /' || true
