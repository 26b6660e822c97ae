/* SPDX-License-Identifier: MIT */
/*
 * Inside the symbols session (attach_symbols.c, attach_names.c,
 * attach_dpdk.c): the libdwfl session, per-object name tables built on
 * first use, and the DPDK labels read from the process.
 */
#ifndef RXRAY_ATTACH_SYMS_INT_H
#define RXRAY_ATTACH_SYMS_INT_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "rxray/attach.h"

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into names */
};

struct unwind_sample; /* attach_symbols.c */

/* Function symbols of one ELF symbol table, sorted by start. */
struct name_table {
	size_t n;
	struct name_ent {
		uint64_t start, size; /* ELF vaddr */
		const char *name;     /* in the Elf's string table */
	} e[];
};

/* Per mapped object (the Dwfl_Module's user slot), built on first use. */
struct mod_names {
	struct name_table *symtab, *debug, *dynsym;
	struct fn_starts *fns;  /* .eh_frame_hdr function starts */
	Elf *debug_elf;         /* separate debug file, opened by us */
	int debug_fd;
	char debug_how[12];     /* "build-id" or "debuglink" */
};

struct rxb_syms {
	Dwfl *dwfl;
	Dwfl_Callbacks cb;
	char *debuginfo_path; /* libdwfl's search path (unwinding CFI) */
	char debug_dir[256];
	int pid;
	int attach_state; /* 0 not tried, 1 attached, -1 failed */
	struct unwind_sample *cur;
	bool kloaded;
	struct ksym *ks;
	size_t nks;
	char *knames;
	size_t ndpdk;
	struct rxb_dpdk_label dpdk[RXB_ATTACH_MAX_DPDK]; /* sorted by addr */
};

const char *rxb_syms_base_name(const char *path);
/*
 * The first symbol in mod's symbol table named name (or name@VERSION) that
 * keep accepts, into *sym and *addr (its address in the process): true, or
 * false when there is none.
 */
bool rxb_syms_module_find(Dwfl_Module *mod, const char *name, bool (*keep)(const GElf_Sym *sym),
		      GElf_Sym *sym, GElf_Addr *addr);

/* The module's tables (built on first call), or NULL when out of memory. */
struct mod_names *rxb_mod_names_get(struct rxb_syms *sy, Dwfl_Module *mod, Elf *elf);
void rxb_mod_names_free(struct mod_names *m);
/*
 * Name of the function holding ELF vaddr from the first source that has
 * one; *start receives its entry. RXB_NAME_NONE: none (then *start is the
 * .eh_frame_hdr function start, or vaddr).
 */
enum rxb_name_src rxb_mod_names_lookup(struct mod_names *m, uint64_t vaddr, const char **name,
				   uint64_t *start);

/* The DPDK label at entry addr (target address space), or NULL. */
const struct rxb_dpdk_label *rxb_syms_dpdk_find(const struct rxb_syms *sy, uint64_t addr);

#endif
