# fuzz_report.mk - the libFuzzer target past the reader: recordings through
# report's loading (join, model, totals) into the text and JSON reports and a
# comparison (tests/fuzz/fuzz_report.c). `make fuzz` runs it after the
# reader's, for FUZZ_REPORT_SECONDS (default 30).

FUZZ_REPORT_SECONDS ?= 30
FUZZ_REPORT_SRCS := tests/fuzz/fuzz_report.c src/cli/load.c src/cli/err.c \
		    $(filter-out src/core/model/hist.c,$(CORE_SRCS))

# The histograms' quantile scans are most of an execution's time under
# coverage instrumentation and have no input-dependent branches worth
# guiding on: hist.c is built with the sanitizers but without coverage.
$(O)/fuzz/hist.o: src/core/model/hist.c src/core/model/hist.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(filter-out -fsanitize=fuzzer%,$(FUZZ_FLAGS)) -fsanitize=address,undefined -O2 -c $< -o $@

$(O)/fuzz/fuzz_report: $(FUZZ_REPORT_SRCS) $(O)/fuzz/hist.o $(wildcard src/core/*.h src/core/*/*.h src/cli/*.h bpf/*.h) \
		       tests/fuzz/repair.h
	$(MSG) CLANG $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_FLAGS) $(FUZZ_REPORT_SRCS) $(O)/fuzz/hist.o -o $@ $(LDLIBS_CORE)

# Seeds: one-file recordings of every shape (mode 0, 1 and 5: CRCs repaired,
# --detail), host/target pairs to join (mode 3: a length, then both files), a
# pair whose clocks are three days apart, files cut short, and two hosts with
# their target (mode 9: two lengths, then the three files).
$(O)/fuzz/report-seeds.stamp: $(O)/rel/ntprof
	$(Q)rm -rf $(O)/fuzz/report-seeds && mkdir -p $(O)/fuzz/report-seeds
	$(Q)set -e; d=$(O)/fuzz/report-seeds; g="$(O)/rel/ntprof generate -q"; n=0; \
	le32() { printf "\\$$(printf %o $$(($$1 & 255)))\\$$(printf %o $$(($$1 >> 8 & 255)))\\$$(printf %o $$(($$1 >> 16 & 255)))\\$$(printf %o $$(($$1 >> 24 & 255)))"; }; \
	for args in "-r both -n 6 -s 1" "-r host -n 4 -s 1 --sizes 4K,128K --read 50" \
		"-r target -t rdma -n 5 -s 1 --read 0 --sizes 64K" "-r both -n 8 -s 1 --exact-queues --queues 2"; do \
		n=$$((n + 1)); $$g -o $$d/f.ntp $$args --seed $$n; \
		for m in 0 1 5; do { printf "\\$$(printf %o $$m)"; cat $$d/f.ntp; } > $$d/one$$n-m$$m; done; \
		sz=$$(stat -c %s $$d/f.ntp); { printf '\001'; head -c $$((sz / 2)) $$d/f.ntp; } > $$d/one$$n-cut; \
	done; \
	for args in "-n 6 -s 1" "-n 8 -s 1 --target-clock-offset 259200000012345 -t rdma" \
		"-n 8 -s 1 --drop-target 30 --miss-rsp-sent 50 --exact-queues"; do \
		n=$$((n + 1)); $$g -o $$d/h.ntp --target-out $$d/t.ntp $$args --seed $$n; \
		hs=$$(stat -c %s $$d/h.ntp); \
		{ printf '\003'; le32 $$hs; cat $$d/h.ntp $$d/t.ntp; } > $$d/pair$$n; \
		{ printf '\007'; le32 $$hs; cat $$d/h.ntp; head -c 600 $$d/t.ntp; } > $$d/pair$$n-cut; \
	done; \
	for args in "-n 12 -s 1" "-n 12 -s 1 --drop-target 30 -t rdma"; do \
		n=$$((n + 1)); $$g -o $$d/h%d.ntp --target-out $$d/t.ntp --hosts 2 $$args --seed $$n; \
		h1=$$(stat -c %s $$d/h1.ntp); h2=$$(stat -c %s $$d/h2.ntp); \
		{ printf '\011'; le32 $$h1; le32 $$h2; cat $$d/h1.ntp $$d/h2.ntp $$d/t.ntp; } > $$d/three$$n; \
	done; rm -f $$d/f.ntp $$d/h.ntp $$d/t.ntp $$d/h1.ntp $$d/h2.ntp
	$(Q)touch $@

.PHONY: fuzz-report
fuzz-report: $(O)/fuzz/fuzz_report $(O)/fuzz/report-seeds.stamp
	$(Q)mkdir -p $(O)/fuzz/report-corpus
	@echo "  FUZZ     report for $(FUZZ_REPORT_SECONDS) s"
	$(Q)$(O)/fuzz/fuzz_report -max_total_time=$(FUZZ_REPORT_SECONDS) -max_len=131072 -timeout=10 \
		-close_fd_mask=1 -print_final_stats=1 -artifact_prefix=$(O)/fuzz/report- $(O)/fuzz/report-corpus $(O)/fuzz/report-seeds \
		> $(O)/fuzz/report-log 2>&1 || \
		{ tail -40 $(O)/fuzz/report-log; echo "fuzz: FAILED (log: $(O)/fuzz/report-log)"; exit 1; }
	$(Q)awk '/^Done [0-9]+ runs/ { print "fuzz: report: " $$2 " executions in " $$5 " s, no crash" }' \
		$(O)/fuzz/report-log
	$(Q)grep -E '^cov:|stat::number_of_executed_units|stat::peak_rss' $(O)/fuzz/report-log | \
		sed 's/^/fuzz:   report /' || true

fuzz: fuzz-report
