# Man pages and bash completion, generated from the programs' --help (which
# their option tables print) by tools/gen-docs.sh; tests/cli/docs.sh checks
# the three against each other. Installed by `make install`.

DOC_FILES := $(O)/man/ntprof.8 $(O)/man/ntprof-top.8 $(O)/completion/ntprof $(O)/completion/ntprof-top
.PHONY: docs
docs: $(O)/docs.stamp
all: docs

$(O)/docs.stamp: tools/gen-docs.sh VERSION $(O)/rel/ntprof $(O)/rel/ntprof-top
	$(MSG) GEN "man pages, completion"
	$(Q)tools/gen-docs.sh $(O)/rel/ntprof $(O)/rel/ntprof-top $(O)
	$(Q)touch $@
$(DOC_FILES): $(O)/docs.stamp
