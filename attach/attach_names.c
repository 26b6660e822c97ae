/* SPDX-License-Identifier: MIT */
/*
 * Names for user code, from every source a host may have, in order: the
 * object's .symtab; the .symtab of a separate debug file found by build-id
 * in the distribution's debug directory or by .gnu_debuglink; the nearest
 * .dynsym symbol when the address lies within its size. (The DPDK labels
 * read from the process come last, in attach_symbols.c.) Code none of
 * them names is shown by the start of its function, taken from
 * .eh_frame_hdr, so every sample of one function gets one name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach_syms_int.h"

const char *rxb_syms_base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

bool rxb_syms_module_find(Dwfl_Module *mod, const char *name, bool (*keep)(const GElf_Sym *sym),
		      GElf_Sym *sym, GElf_Addr *addr)
{
	size_t l = strlen(name);
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		const char *s = dwfl_module_getsym_info(mod, i, sym, addr, NULL, NULL, NULL);
		/* name itself or a versioned name@VERSION / name@@VERSION */
		if (s && keep(sym) && !strncmp(s, name, l) && (!s[l] || s[l] == '@'))
			return true;
	}
	return false;
}

/*
 * Function starts from .eh_frame_hdr's sorted search table (present in
 * stripped objects; unwinders use it). Only the common encoding is read:
 * table entries as signed 4-byte offsets from the header (0x3b).
 */
struct fn_starts {
	size_t n;
	uint64_t start[]; /* ELF vaddrs, sorted */
};

static struct fn_starts *fn_starts_build(Elf *elf)
{
	struct fn_starts *t = NULL;
	size_t nph = 0;

	if (!elf || elf_getphdrnum(elf, &nph))
		return NULL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const uint8_t *b;
		uint32_t count;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || d->d_size < 12)
			return NULL;
		b = d->d_buf;
		/* version 1, eh_frame_ptr sdata4 (any base), fde_count udata4, table datarel sdata4 */
		if (b[0] != 1 || (b[1] & 0x0f) != 0x0b || b[2] != 0x03 || b[3] != 0x3b)
			return NULL;
		memcpy(&count, b + 8, 4);
		if (12 + (size_t)count * 8 > d->d_size)
			return NULL;
		t = malloc(sizeof(*t) + count * sizeof(uint64_t));
		if (!t)
			return NULL;
		t->n = count;
		for (uint32_t k = 0; k < count; k++) {
			int32_t rel;
			memcpy(&rel, b + 12 + (size_t)k * 8, 4);
			t->start[k] = ph.p_vaddr + (uint64_t)(int64_t)rel;
		}
		return t;
	}
	return NULL;
}

static uint64_t fn_start(const struct fn_starts *t, uint64_t off)
{
	size_t lo = 0, hi = t ? t->n : 0;

	if (!hi || off < t->start[0])
		return off;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (t->start[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return t->start[lo];
}

static int ent_cmp(const void *a, const void *b)
{
	const struct name_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size; /* widest alias first */
}

/*
 * The function symbols of elf's first section of type (SHT_SYMTAB or
 * SHT_DYNSYM) that has any; NULL when none. Names point into elf.
 */
static struct name_table *name_table_build(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		size_t nsym = sh.sh_size / sh.sh_entsize;
		struct name_table *t = d ? malloc(sizeof(*t) + nsym * sizeof(t->e[0])) : NULL;
		if (!t)
			return NULL;
		t->n = 0;
		for (size_t i = 1; i < nsym; i++) {
			GElf_Sym sym;
			const char *nm;
			int st;
			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			st = GELF_ST_TYPE(sym.st_info);
			if ((st != STT_FUNC && st != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			nm = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!nm || !*nm)
				continue;
			t->e[t->n++] = (struct name_ent){sym.st_value, sym.st_size, nm};
		}
		if (!t->n) {
			free(t);
			continue;
		}
		qsort(t->e, t->n, sizeof(t->e[0]), ent_cmp);
		return t;
	}
	return NULL;
}

/* The symbol whose [start, start + size) holds vaddr (zero size: exactly start). */
static const struct name_ent *name_table_find(const struct name_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t ? t->n : 0;

	if (!hi || vaddr < t->e[0].start)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (t->e[mid].start <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	/* lo is the last entry starting at or below vaddr; an earlier, wider
	 * symbol may still cover it (a few steps back is enough in practice) */
	for (size_t k = 0; k < 8 && k <= lo; k++) {
		const struct name_ent *e = &t->e[lo - k];
		if (vaddr < e->start + (e->size ? e->size : 1))
			return e;
	}
	return NULL;
}

/* Open path as an ELF file holding a .symtab; 0 or -errno. */
static int debug_open(struct mod_names *m, const char *path, const char *how)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;

	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		close(fd);
		return -ENOEXEC;
	}
	m->debug = name_table_build(e, SHT_SYMTAB);
	if (!m->debug) {
		elf_end(e);
		close(fd);
		return -ENOENT;
	}
	m->debug_elf = e;
	m->debug_fd = fd;
	snprintf(m->debug_how, sizeof(m->debug_how), "%s", how);
	return 0;
}

/* .gnu_debuglink's file name, or NULL. */
static const char *debuglink_name(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!nm || strcmp(nm, ".gnu_debuglink"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_size || !memchr(d->d_buf, '\0', d->d_size))
			return NULL;
		return d->d_buf;
	}
	return NULL;
}

/* A separate debug file: by build-id first, then by .gnu_debuglink. */
static void debug_find(struct rxb_syms *sy, struct mod_names *m, Dwfl_Module *mod, Elf *elf)
{
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	const char *mainfile = NULL, *link;
	char path[4096], dir[2048];
	int n = dwfl_module_build_id(mod, &bits, &vaddr);

	if (n > 1) {
		size_t o = (size_t)snprintf(path, sizeof(path), "%s/.build-id/%02x/", sy->debug_dir,
					    bits[0]);
		for (int i = 1; i < n && o + 3 < sizeof(path); i++)
			o += (size_t)snprintf(path + o, sizeof(path) - o, "%02x", bits[i]);
		snprintf(path + o, sizeof(path) - o, ".debug");
		if (!debug_open(m, path, "build-id"))
			return;
	}
	link = debuglink_name(elf);
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
	if (!link || !mainfile || !strchr(mainfile, '/'))
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(mainfile, '/') - mainfile), mainfile);
	const char *const fmt[] = {"%s/%s", "%s/.debug/%s", NULL};
	for (int i = 0; fmt[i]; i++) {
		snprintf(path, sizeof(path), fmt[i], dir, link);
		if (strcmp(path, mainfile) && !debug_open(m, path, "debuglink"))
			return;
	}
	snprintf(path, sizeof(path), "%s%s/%s", sy->debug_dir, dir, link);
	debug_open(m, path, "debuglink");
}

struct mod_names *rxb_mod_names_get(struct rxb_syms *sy, Dwfl_Module *mod, Elf *elf)
{
	void **slot = NULL;
	struct mod_names *m;

	dwfl_module_info(mod, &slot, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!slot)
		return NULL;
	m = *slot;
	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->debug_fd = -1;
	m->fns = fn_starts_build(elf);
	m->symtab = name_table_build(elf, SHT_SYMTAB);
	if (!m->symtab)
		debug_find(sy, m, mod, elf);
	m->dynsym = name_table_build(elf, SHT_DYNSYM);
	*slot = m;
	return m;
}

void rxb_mod_names_free(struct mod_names *m)
{
	if (!m)
		return;
	free(m->symtab);
	free(m->debug);
	free(m->dynsym);
	free(m->fns);
	if (m->debug_elf)
		elf_end(m->debug_elf);
	if (m->debug_fd >= 0)
		close(m->debug_fd);
	free(m);
}

enum rxb_name_src rxb_mod_names_lookup(struct mod_names *m, uint64_t vaddr, const char **name,
				   uint64_t *start)
{
	const struct name_table *tabs[3] = {m->symtab, m->debug, m->dynsym};
	const enum rxb_name_src src[3] = {RXB_NAME_SYMTAB, RXB_NAME_DEBUGINFO, RXB_NAME_DYNSYM};

	for (int i = 0; i < 3; i++) {
		const struct name_ent *e = name_table_find(tabs[i], vaddr);
		/* .dynsym only within a sized symbol: a stripped object's
		 * static functions lie between exported ones */
		if (!e || (src[i] == RXB_NAME_DYNSYM && !e->size))
			continue;
		*name = e->name;
		*start = e->start;
		return src[i];
	}
	*name = NULL;
	*start = fn_start(m->fns, vaddr);
	return RXB_NAME_NONE;
}
