# make bench: ntprof report, dump and joins against cat, many files and groups
# against few, as ratios of one run (bench/report_bench.sh), with the page
# cache's folios of the joins' files (bench/folios.c).
.PHONY: bench
bench: $(O)/ntprof $(O)/rel/ntprof $(O)/bench/folios
	$(Q)NTPROF=$(O)/ntprof FOLIOS=$(O)/bench/folios bench/report_bench.sh

$(O)/bench/folios: bench/folios.c
	$(MSG) CC $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@
