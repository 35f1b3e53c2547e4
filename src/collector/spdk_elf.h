/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spdk_elf.h - what ntprof reads from SPDK's ELF files: the USDT notes of
 * provider "ntprof" (with their site counts), a defined symbol's address,
 * and the shared libraries a binary loads (its USDT notes live in
 * build/lib/libspdk_*.so when SPDK is built with shared libraries).
 */
#ifndef NTP_SPDK_ELF_H
#define NTP_SPDK_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NTP_USDT_MAX 16
#define NTP_USDT_NAME 48

struct ntp_usdt_count {
	char name[NTP_USDT_NAME];	/* probe name, provider "ntprof" */
	int sites;
	int nop5;			/* of those, sites on x86-64's 5-byte nop (spdk/ntprof_usdt.h) */
};

/* Counts the .note.stapsdt notes of provider in path, per probe name, into
 * out (adding to counts already there). Returns probes in out, -1 when path
 * is not a readable ELF file. */
int ntp_elf_usdt(const char *path, const char *provider, struct ntp_usdt_count *out, int n, int max);

/* A defined symbol (st_shndx != SHN_UNDEF) of .symtab or .dynsym: its value
 * and the vaddr of the PT_LOAD segment with file offset 0 (the load base's
 * counterpart: address = mapping of offset 0 - base_vaddr + value). 0, or
 * -1 when absent. */
int ntp_elf_symbol(const char *path, const char *name, uint64_t *value, uint64_t *base_vaddr);
/* The same, with the symbol's size (st_size). */
int ntp_elf_symbol_sized(const char *path, const char *name, uint64_t *value, uint64_t *size,
			 uint64_t *base_vaddr);

/* The files a binary loads, itself first: DT_NEEDED resolved, recursively,
 * in its RPATH/RUNPATH ($ORIGIN), <dir of binary>/../lib (SPDK's build/bin
 * and build/lib), LD_LIBRARY_PATH and the system's library directories.
 * Returns how many paths were written to out (each malloc'ed). */
int ntp_elf_closure(const char *bin, char **out, int max);

#endif
