/* SPDX-License-Identifier: MIT */
/*
 * Symbolisation: elfutils libdwfl over the target's /proc/<pid>/maps (it
 * handles PIE and shared objects, and finds separate debug info through
 * .gnu_debuglink / build-id when installed); code without symbols comes
 * out as dso+0xoffset in the object's ELF address space, the form
 * addr2line and objdump take. Kernel addresses through /proc/kallsyms.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxray/attach.h"

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into names */
};

/* The dwarf-mode sample being unwound (registers + a copy of its stack). */
struct unwind_sample {
	const uint64_t *regs;
	const uint8_t *stack;
	size_t len;
	uint64_t *ips;
	size_t max, n;
};

struct rxr_syms {
	Dwfl *dwfl;
	int pid;
	int attach_state; /* 0 not tried, 1 attached, -1 failed */
	struct unwind_sample *cur;
	bool kloaded;
	struct ksym *ks;
	size_t nks;
	char *knames;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct rxr_syms *rxr_syms_open(int pid, char *err, size_t errlen)
{
	struct rxr_syms *sy = calloc(1, sizeof(*sy));
	int rc;

	if (!sy) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	sy->dwfl = dwfl_begin(&proc_callbacks);
	if (!sy->dwfl) {
		snprintf(err, errlen, "failed to start libdwfl: %s", dwfl_errmsg(-1));
		rc = ENOMEM;
		goto fail;
	}
	sy->pid = pid;
	dwfl_report_begin(sy->dwfl);
	rc = dwfl_linux_proc_report(sy->dwfl, pid);
	dwfl_report_end(sy->dwfl, NULL, NULL);
	if (rc) {
		snprintf(err, errlen, "failed to read /proc/%d/maps: %s", pid,
			 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
		rc = rc > 0 ? rc : EIO;
		goto fail;
	}
	return sy;
fail:
	rxr_syms_close(sy);
	errno = rc;
	return NULL;
}

static int fn_table_free(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start,
			 void *arg)
{
	free(*ud);
	*ud = NULL;
	return DWARF_CB_OK;
}

void rxr_syms_close(struct rxr_syms *sy)
{
	if (!sy)
		return;
	if (sy->dwfl) {
		dwfl_getmodules(sy->dwfl, fn_table_free, NULL, 0);
		dwfl_end(sy->dwfl);
	}
	free(sy->ks);
	free(sy->knames);
	free(sy);
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

/*
 * Stripped code: name a sample by the start of the function holding it,
 * so every sample in one function gets one dso+0xSTART name. The starts
 * come from .eh_frame_hdr's sorted search table (present in stripped
 * objects; the unwinder uses it). Only the common encoding is read:
 * table entries as signed 4-byte offsets from the header (0x3b).
 */
struct fn_table {
	size_t n;
	uint64_t start[]; /* ELF vaddrs, sorted */
};

static struct fn_table *fn_table_build(Elf *elf)
{
	struct fn_table *t = NULL;
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

static uint64_t func_start(Dwfl_Module *mod, void **slot, Elf *elf, uint64_t off)
{
	struct fn_table *t = *slot;
	size_t lo = 0, hi;

	if (!t) {
		t = fn_table_build(elf);
		if (!t)
			t = calloc(1, sizeof(*t)); /* remember "no table" */
		if (!t)
			return off;
		*slot = t;
	}
	hi = t->n;
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


int rxr_syms_user(struct rxr_syms *sy, uint64_t addr, struct rxr_frame *f)
{
	Dwfl_Module *mod = dwfl_addrmodule(sy->dwfl, addr);
	const char *name;
	Dwarf_Addr start = 0, bias = 0;
	GElf_Off symoff = 0;
	GElf_Sym sym;
	void **slot = NULL;
	Elf *elf;

	memset(f, 0, sizeof(*f));
	if (!mod)
		return -ENOENT;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf) /* a mapping that is no ELF object (memfd, deleted file) */
		return -ENOENT;
	name = dwfl_module_info(mod, &slot, &start, NULL, NULL, NULL, NULL, NULL);
	f->dso = base_name(name);
	f->off = addr - bias;
	f->sym = dwfl_module_addrinfo(mod, addr, &symoff, &sym, NULL, NULL, NULL);
	if (!f->sym && slot)
		f->off = func_start(mod, slot, elf, f->off);
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void kallsyms_load(struct rxr_syms *sy)
{
	size_t cap = 0, ncap = 0, nlen = 0;
	char line[512], name[256], type;
	uint64_t addr;
	FILE *f;

	sy->kloaded = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr || (type != 't' && type != 'T'))
			continue;
		size_t l = strlen(name) + 1;
		if (sy->nks == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *k = realloc(sy->ks, cap * sizeof(*k));
			if (!k)
				break;
			sy->ks = k;
		}
		if (nlen + l > ncap) {
			ncap = ncap ? ncap * 2 : (1u << 21);
			char *n = realloc(sy->knames, ncap);
			if (!n)
				break;
			sy->knames = n;
		}
		memcpy(sy->knames + nlen, name, l);
		sy->ks[sy->nks].addr = addr;
		sy->ks[sy->nks].name = (uint32_t)nlen;
		sy->nks++;
		nlen += l;
	}
	fclose(f);
	if (sy->nks)
		qsort(sy->ks, sy->nks, sizeof(*sy->ks), ksym_cmp);
}

int rxr_syms_kernel(struct rxr_syms *sy, uint64_t addr, struct rxr_frame *f)
{
	size_t lo = 0, hi;

	memset(f, 0, sizeof(*f));
	if (!sy->kloaded)
		kallsyms_load(sy);
	hi = sy->nks;
	if (!hi || addr < sy->ks[0].addr)
		return -ENOENT;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (sy->ks[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	f->sym = sy->knames + sy->ks[lo].name;
	f->dso = "[kernel]";
	f->off = addr;
	return 0;
}

/* ------------------------------------------------- dwarf-mode unwinding */

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	return 0; /* only get_thread is used */
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Only the copied stack is readable: the live process is never touched. */
static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct unwind_sample *u = ((struct rxr_syms *)arg)->cur;
	uint64_t sp = u->regs[7];

	if (addr < sp || addr - sp + sizeof(*result) > u->len)
		return false;
	memcpy(result, u->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_sample *u = ((struct rxr_syms *)arg)->cur;
	Dwarf_Word regs[17];

	for (int i = 0; i < 17; i++)
		regs[i] = u->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, 17, regs))
		return false;
	dwfl_thread_state_register_pc(thread, u->regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks uw_callbacks = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct unwind_sample *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL) || !pc)
		return DWARF_CB_ABORT;
	u->ips[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

size_t rxr_syms_unwind(void *ctx, uint32_t tid, const uint64_t *regs, const uint8_t *stack,
		       size_t len, uint64_t *ips, size_t max)
{
	struct rxr_syms *sy = ctx;
	struct unwind_sample u = {.regs = regs, .stack = stack, .len = len, .ips = ips, .max = max};

	if (!sy->attach_state)
		sy->attach_state = dwfl_attach_state(sy->dwfl, NULL, sy->pid, &uw_callbacks, sy) ? 1
												   : -1;
	if (sy->attach_state < 0 || !max)
		return 0;
	sy->cur = &u;
	/* an error ends the walk: what was unwound until then stands */
	dwfl_getthread_frames(sy->dwfl, (pid_t)tid, uw_frame, &u);
	sy->cur = NULL;
	return u.n;
}

struct locate {
	const char *dso; /* basename prefix or NULL */
	const char *sym; /* symbol or NULL (then off) */
	uint64_t off;
	Dwfl_Module *found;
	uint64_t vaddr;
};

static int locate_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start,
			 void *arg)
{
	struct locate *lc = arg;
	const char *base = base_name(name);
	Dwarf_Addr bias = 0;
	int n;

	if (lc->dso && strncmp(base, lc->dso, strlen(lc->dso)))
		return DWARF_CB_OK;
	if (!lc->sym) {
		lc->found = mod;
		lc->vaddr = lc->off;
		return DWARF_CB_ABORT;
	}
	if (!dwfl_module_getelf(mod, &bias))
		return DWARF_CB_OK;
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *sname = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		size_t l = strlen(lc->sym);
		if (!sname || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
			continue;
		if (strncmp(sname, lc->sym, l) || (sname[l] && sname[l] != '@'))
			continue;
		lc->found = mod;
		lc->vaddr = addr - bias;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* ELF vaddr -> file offset through the PT_LOAD that holds it. */
static int vaddr_to_file_off(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n = 0;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int rxr_syms_locate(struct rxr_syms *sy, const char *spec, char *path, size_t pathlen,
		    uint64_t *file_off, char *err, size_t errlen)
{
	struct locate lc = {0};
	char buf[256];
	char *plus, *colon;
	const char *mainfile = NULL, *name;
	Dwarf_Addr bias;
	Elf *elf;

	snprintf(buf, sizeof(buf), "%s", spec);
	plus = strstr(buf, "+0x");
	colon = strchr(buf, ':');
	if (plus) {
		char *end;
		*plus = '\0';
		lc.dso = buf;
		lc.off = strtoull(plus + 3, &end, 16);
		if (*end || !*buf) {
			snprintf(err, errlen, "--uprobes %s: expected dso+0xOFFSET", spec);
			return -EINVAL;
		}
	} else if (colon) {
		*colon = '\0';
		lc.dso = buf;
		lc.sym = colon + 1;
	} else {
		lc.sym = buf;
	}
	if (lc.sym && !*lc.sym) {
		snprintf(err, errlen, "--uprobes %s: empty symbol", spec);
		return -EINVAL;
	}
	dwfl_getmodules(sy->dwfl, locate_module, &lc, 0);
	if (!lc.found) {
		snprintf(err, errlen, "--uprobes %s: no %s in the target's mapped objects", spec,
			 lc.sym ? "function symbol of that name" : "object of that name");
		return -ENOENT;
	}
	elf = dwfl_module_getelf(lc.found, &bias); /* before info: sets mainfile */
	name = dwfl_module_info(lc.found, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
	if (!elf || vaddr_to_file_off(elf, lc.vaddr, file_off)) {
		snprintf(err, errlen, "--uprobes %s: address 0x%" PRIx64 " is not in a loaded "
			 "segment of %s", spec, lc.vaddr, name);
		return -ENOENT;
	}
	snprintf(path, pathlen, "%s", mainfile ? mainfile : name);
	return 0;
}
