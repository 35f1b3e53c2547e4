// SPDX-License-Identifier: GPL-2.0
/*
 * spdk_elf.c - USDT notes, symbols and DT_NEEDED of SPDK's binaries, with
 * libelf. The note layout is systemtap's (<sys/sdt.h>, also what libbpf's
 * usdt.c parses): type 3, owner "stapsdt", descriptor = pc, base, semaphore
 * (three addresses), then provider, name and argument spec, NUL-terminated.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "spdk_elf.h"

#define SDT_NOTE_TYPE 3

static Elf *elf_open(const char *path, int *fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		return NULL;
	}
	return e;
}

static void elf_close(Elf *e, int fd)
{
	elf_end(e);
	close(fd);
}

/* Is the instruction at vaddr pc x86-64's 5-byte nop, nopl 0x0(%rax,%rax,1)
 * (0f 1f 44 00 00)? A kernel that optimizes uprobes (arch_uprobe_optimize)
 * turns a probe there into a call after its first hit, where a 1-byte nop
 * traps at every hit (docs/performance.md, "A sampled command, cold"). */
static bool site_is_nop5(Elf *e, uint64_t pc)
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_size < sizeof(nop5) || pc < sh.sh_addr || pc - sh.sh_addr > sh.sh_size - sizeof(nop5))
			continue;
		d = elf_getdata(scn, NULL);
		return d && d->d_buf && d->d_size == sh.sh_size &&
		       !memcmp((const unsigned char *)d->d_buf + (pc - sh.sh_addr), nop5, sizeof(nop5));
	}
	return false;
}

int ntp_elf_usdt(const char *path, const char *provider, struct ntp_usdt_count *out, int n, int max)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	bool x86_64;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -1;
	if (elf_getshdrstrndx(e, &shstrndx)) {
		elf_close(e, fd);
		return -1;
	}
	x86_64 = gelf_getehdr(e, &eh) && eh.e_machine == EM_X86_64;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *d;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)d->d_buf + desc_off, *prov, *name;
			size_t addr = gelf_getclass(e) == ELFCLASS32 ? 4 : 8, l;
			int i;

			if (nh.n_type != SDT_NOTE_TYPE || nh.n_namesz != 8 ||
			    memcmp((const char *)d->d_buf + name_off, "stapsdt", 8) || nh.n_descsz < 3 * addr + 2)
				continue;
			prov = desc + 3 * addr;
			l = strnlen(prov, nh.n_descsz - 3 * addr);
			if (3 * addr + l + 1 >= nh.n_descsz)
				continue;
			name = prov + l + 1;
			if (strcmp(prov, provider) || strnlen(name, nh.n_descsz - 3 * addr - l - 1) >= NTP_USDT_NAME)
				continue;
			for (i = 0; i < n && strcmp(out[i].name, name); i++)
				;
			if (i == n) {
				if (n == max)
					continue;
				snprintf(out[n].name, NTP_USDT_NAME, "%s", name);
				out[n].sites = 0;
				out[n++].nop5 = 0;
			}
			out[i].sites++;
			if (x86_64) {
				uint64_t pc;

				memcpy(&pc, desc, sizeof(pc));	/* the note's first word */
				out[i].nop5 += site_is_nop5(e, pc);
			}
		}
	}
	elf_close(e, fd);
	return n;
}

static int base_vaddr_of(Elf *e, uint64_t *base)
{
	size_t n;

	*base = 0;
	if (elf_getphdrnum(e, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			/* the first PT_LOAD maps file offset 0 (page-aligned) */
			*base = ph.p_vaddr - ph.p_offset;
			return 0;
		}
	}
	return -1;
}

int ntp_elf_symbol(const char *path, const char *name, uint64_t *value, uint64_t *base_vaddr)
{
	uint64_t size;

	return ntp_elf_symbol_sized(path, name, value, &size, base_vaddr);
}

int ntp_elf_symbol_sized(const char *path, const char *name, uint64_t *value, uint64_t *size,
			 uint64_t *base_vaddr)
{
	Elf_Scn *scn = NULL;
	int fd, found = -1;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -1;
	while (found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *sn;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(s.st_info) != STT_OBJECT)
				continue;
			sn = elf_strptr(e, sh.sh_link, s.st_name);
			if (sn && !strcmp(sn, name)) {
				*value = s.st_value;
				*size = s.st_size;
				found = 0;
				break;
			}
		}
	}
	if (!found && base_vaddr_of(e, base_vaddr))
		found = -1;
	elf_close(e, fd);
	return found;
}

/* DT_NEEDED names and the RPATH/RUNPATH string of one file. */
static int dyn_info(const char *path, char names[][NAME_MAX + 1], int max, char *rpath, size_t rlen)
{
	Elf_Scn *scn = NULL;
	int fd, n = 0;
	Elf *e = elf_open(path, &fd);

	rpath[0] = 0;
	if (!e)
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dy;
			const char *s;

			if (!gelf_getdyn(d, (int)i, &dy))
				continue;
			if (dy.d_tag != DT_NEEDED && dy.d_tag != DT_RPATH && dy.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(e, sh.sh_link, dy.d_un.d_val);
			if (!s)
				continue;
			if (dy.d_tag == DT_NEEDED && n < max)
				snprintf(names[n++], NAME_MAX + 1, "%s", s);
			else if (dy.d_tag != DT_NEEDED)
				snprintf(rpath, rlen, "%s", s);
		}
	}
	elf_close(e, fd);
	return n;
}

static bool have(char **out, int n, const char *p)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(out[i], p))
			return true;
	return false;
}

/* Finds lib in a ':'-separated list of directories ($ORIGIN = origin). */
static bool find_in(const char *list, const char *origin, const char *lib, char *res, size_t len)
{
	char buf[4096], *save = NULL, *dir;

	if (!list || !list[0])
		return false;
	snprintf(buf, sizeof(buf), "%s", list);
	for (dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char d[PATH_MAX];

		if (!strncmp(dir, "$ORIGIN", 7))
			snprintf(d, sizeof(d), "%s%s", origin, dir + 7);
		else
			snprintf(d, sizeof(d), "%s", dir);
		if ((size_t)snprintf(res, len, "%s/%s", d, lib) < len && !access(res, R_OK))
			return true;
	}
	return false;
}

int ntp_elf_closure(const char *bin, char **out, int max)
{
	static const char sysdirs[] = "/usr/local/lib:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:"
				      "/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";
	int n = 0;

	if (max < 1 || !(out[n] = realpath(bin, NULL)))
		return 0;
	n++;
	for (int i = 0; i < n; i++) {
		static char names[256][NAME_MAX + 1];
		char rpath[2048], origin[PATH_MAX], tmp[PATH_MAX], bindir_lib[PATH_MAX + 8];
		int k;

		snprintf(tmp, sizeof(tmp), "%s", out[i]);
		snprintf(origin, sizeof(origin), "%s", dirname(tmp));
		snprintf(bindir_lib, sizeof(bindir_lib), "%s/../lib", origin);
		k = dyn_info(out[i], names, 256, rpath, sizeof(rpath));
		for (int j = 0; j < k && n < max; j++) {
			char res[PATH_MAX], *real;

			if (!find_in(rpath, origin, names[j], res, sizeof(res)) &&
			    !find_in(bindir_lib, origin, names[j], res, sizeof(res)) &&
			    !find_in(getenv("LD_LIBRARY_PATH"), origin, names[j], res, sizeof(res)) &&
			    !find_in(sysdirs, origin, names[j], res, sizeof(res)))
				continue;
			real = realpath(res, NULL);
			if (!real)
				continue;
			if (have(out, n, real))
				free(real);
			else
				out[n++] = real;
		}
	}
	return n;
}
