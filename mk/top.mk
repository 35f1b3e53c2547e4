# ntprof-top: built-in themes from themes/, screenshots, the CPU bench.

# The built-in themes are the documented files (a unit test checks it too).
# Generated into the build folder (UI_SRCS in the Makefile lists it).
$(O)/gen/theme_builtin.c: tools/gen-themes.sh $(wildcard themes/*.theme)
	$(MSG) GEN $@
	$(Q)mkdir -p $(@D)
	$(Q)tools/gen-themes.sh $@

.PHONY: screenshots bench-top
# PNGs of real tmux captures of a replay: main screen, detail, help.
screenshots: $(O)/ntprof $(O)/ntprof-top
	screenshots/make-screenshots.sh $(O)/ntprof $(O)/ntprof-top

# CPU of ntprof-top beside htop over the same 60 s (bench/top_cpu.sh).
bench-top: $(O)/ntprof $(O)/ntprof-top
	bench/top_cpu.sh $(O)/ntprof $(O)/ntprof-top
bench: bench-top
