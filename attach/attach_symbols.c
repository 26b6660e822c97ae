/* SPDX-License-Identifier: MIT */
/*
 * Symbolisation: elfutils libdwfl over the target's /proc/<pid>/maps (it
 * handles PIE and shared objects, and unwinds with the objects' CFI);
 * names from the sources in attach_names.c, then the DPDK labels
 * (attach_dpdk.c); code without a name comes out as dso+0xoffset in the
 * object's ELF address space, the form addr2line and objdump take.
 * Kernel addresses through /proc/kallsyms.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach_syms_int.h"

/* The dwarf-mode sample being unwound (registers + a copy of its stack). */
struct unwind_sample {
	const uint64_t *regs;
	const uint8_t *stack;
	size_t len;
	uint64_t *ips;
	size_t max, n;
	bool cut; /* a read past the copy ended the walk */
};

const char *rxb_name_src_str(enum rxb_name_src src)
{
	static const char *const names[] = {"none", "symtab", "debuginfo", "dynsym", "dpdk",
					    "kallsyms"};
	return (unsigned)src < sizeof(names) / sizeof(names[0]) ? names[src] : "none";
}

int rxb_syms_open(int pid, const char *debug_dir, struct rxb_syms **out, char *err,
		  size_t errlen)
{
	struct rxb_syms *sy = calloc(1, sizeof(*sy));
	int rc;

	*out = NULL;
	if (!sy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(sy->debug_dir, sizeof(sy->debug_dir), "%s", debug_dir ? debug_dir : "/usr/lib/debug");
	/* libdwfl looks for the CFI of separate debug files (unwinding) in the
	 * same places: next to the object, its .debug/, then the debug dir */
	if (asprintf(&sy->debuginfo_path, ":.debug:%s", sy->debug_dir) < 0) {
		sy->debuginfo_path = NULL;
		snprintf(err, errlen, "out of memory");
		rc = ENOMEM;
		goto fail;
	}
	sy->cb.find_elf = dwfl_linux_proc_find_elf;
	sy->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	sy->cb.debuginfo_path = &sy->debuginfo_path;
	sy->dwfl = dwfl_begin(&sy->cb);
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
	*out = sy;
	return 0;
fail:
	rxb_syms_close(sy);
	return -rc; /* rc is a positive errno here, as libdwfl reports it */
}

static int mod_free(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	rxb_mod_names_free(*ud);
	*ud = NULL;
	return DWARF_CB_OK;
}

void rxb_syms_close(struct rxb_syms *sy)
{
	if (!sy)
		return;
	if (sy->dwfl) {
		dwfl_getmodules(sy->dwfl, mod_free, NULL, 0);
		dwfl_end(sy->dwfl);
	}
	free(sy->debuginfo_path);
	free(sy->ks);
	free(sy->knames);
	free(sy);
}

int rxb_syms_user(struct rxb_syms *sy, uint64_t addr, struct rxb_frame *f)
{
	Dwfl_Module *mod = dwfl_addrmodule(sy->dwfl, addr);
	const struct rxb_dpdk_label *dl;
	struct mod_names *m;
	Dwarf_Addr bias = 0;
	uint64_t start;
	const char *name;
	Elf *elf;

	memset(f, 0, sizeof(*f));
	if (!mod)
		return -ENOENT;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf) /* a mapping that is no ELF object (memfd, deleted file) */
		return -ENOENT;
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	f->dso = rxb_syms_base_name(name);
	f->off = addr - bias;
	m = rxb_mod_names_get(sy, mod, elf);
	if (!m)
		return 0; /* out of memory: dso+0xaddress */
	f->src = rxb_mod_names_lookup(m, f->off, &f->sym, &start);
	/* the DPDK tables hold entries: the role holds whoever named it */
	dl = rxb_syms_dpdk_find(sy, start + bias);
	if (dl)
		f->role = dl->role;
	if (f->src == RXB_NAME_NONE) {
		f->off = start;
		if (dl) {
			f->sym = dl->label;
			f->src = RXB_NAME_DPDK;
		}
	}
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void kallsyms_load(struct rxb_syms *sy)
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

int rxb_syms_kernel(struct rxb_syms *sy, uint64_t addr, struct rxb_frame *f)
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
	f->src = RXB_NAME_KALLSYMS;
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
	struct unwind_sample *u = ((struct rxb_syms *)arg)->cur;
	uint64_t sp = u->regs[7];

	if (addr < sp)
		return false;
	if (addr - sp + sizeof(*result) > u->len) {
		u->cut = true; /* the frame's caller lies beyond --stack-bytes */
		return false;
	}
	memcpy(result, u->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_sample *u = ((struct rxb_syms *)arg)->cur;
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

size_t rxb_syms_unwind(void *ctx, uint32_t tid, const uint64_t *regs, const uint8_t *stack,
		       size_t len, uint64_t *ips, size_t max, bool *cut)
{
	struct rxb_syms *sy = ctx;
	struct unwind_sample u = {.regs = regs, .stack = stack, .len = len, .ips = ips, .max = max};

	*cut = false;

	if (!sy->attach_state)
		sy->attach_state = dwfl_attach_state(sy->dwfl, NULL, sy->pid, &uw_callbacks, sy) ? 1
												   : -1;
	if (sy->attach_state < 0 || !max)
		return 0;
	sy->cur = &u;
	/* an error ends the walk: what was unwound until then stands */
	dwfl_getthread_frames(sy->dwfl, (pid_t)tid, uw_frame, &u);
	sy->cur = NULL;
	*cut = u.cut;
	return u.n;
}

struct locate {
	const char *dso; /* basename prefix or NULL */
	const char *sym; /* symbol or NULL (then off) */
	uint64_t off;
	Dwfl_Module *found;
	uint64_t vaddr;
};

static bool is_func(const GElf_Sym *sym)
{
	return GELF_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_value;
}

static int locate_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start,
			 void *arg)
{
	struct locate *lc = arg;
	const char *base = rxb_syms_base_name(name);
	Dwarf_Addr bias = 0;
	GElf_Sym sym;
	GElf_Addr addr;

	if (lc->dso && strncmp(base, lc->dso, strlen(lc->dso)))
		return DWARF_CB_OK;
	if (!lc->sym) {
		lc->found = mod;
		lc->vaddr = lc->off;
		return DWARF_CB_ABORT;
	}
	if (!dwfl_module_getelf(mod, &bias))
		return DWARF_CB_OK;
	if (!rxb_syms_module_find(mod, lc->sym, is_func, &sym, &addr))
		return DWARF_CB_OK;
	lc->found = mod;
	lc->vaddr = addr - bias;
	return DWARF_CB_ABORT;
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

int rxb_syms_locate(struct rxb_syms *sy, const char *spec, char *path, size_t pathlen,
		    uint64_t *file_off, char *err, size_t errlen)
{
	struct locate lc = {0};
	char buf[256];
	char *plus, *colon;
	const char *mainfile = NULL, *name;
	Dwarf_Addr bias;
	Elf *elf;

	/* a DPDK label ("net_null rx_pkt_burst (port 0)") names its entry */
	for (size_t i = 0; i < sy->ndpdk; i++) {
		if (strcmp(spec, sy->dpdk[i].label))
			continue;
		lc.found = dwfl_addrmodule(sy->dwfl, sy->dpdk[i].addr);
		if (lc.found && dwfl_module_getelf(lc.found, &bias)) {
			lc.vaddr = sy->dpdk[i].addr - bias;
			goto found;
		}
	}
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
found:
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
