/* SPDX-License-Identifier: MIT */
/*
 * DPDK-aware names, read from the target itself. A PMD's burst functions
 * and a mempool driver's callbacks are static functions, so a stripped
 * DPDK has no name for them; but the process holds tables of pointers to
 * them at exported symbols:
 *   rte_eth_fp_ops[port]     (librte_ethdev, DPDK >= 21.11): per port
 *     rx_pkt_burst, rx_queue_count, rx_descriptor_status, the RX queue
 *     data, then on the second cache line tx_pkt_burst, tx_pkt_prepare,
 *     tx_descriptor_status, the TX queue data (128 bytes per port)
 *   rte_mempool_ops_table    (librte_mempool): a spinlock, num_ops, then
 *     on the next cache line 16 ops of 128 bytes: name[32], alloc, free,
 *     enqueue, dequeue, get_count, calc_mem_size, populate, get_info,
 *     dequeue_contig_blocks
 * (offsets as in DPDK 22.11's rte_ethdev_core.h and rte_mempool.h; the
 * symbols' sizes must match, else the table is left alone). They are read
 * once with process_vm_readv; every function they point to gets a label
 * ("net_null rx_pkt_burst (port 0)", "ring_mp_mc dequeue") and a role.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attach_dpdk_layout.h"
#include "attach_syms_int.h"

#define FP_OPS_SIZE RXB_FP_OPS_SIZE
#define MP_OPS_FIRST RXB_MP_TABLE_OPS
#define MP_OPS_SIZE RXB_MP_OPS_SIZE
#define MP_OPS_MAX RXB_MP_OPS_MAX
#define MP_NAME RXB_MP_OPS_NAMESIZE

/*
 * An exported table may be defined twice: in its library and, through a
 * copy relocation, in an executable built without -fPIC (Debian's
 * testpmd). The dynamic linker binds every reference to the executable's
 * copy then, so that one is live and the library's stays unused.
 */
struct sym_find {
	const char *name;
	char exe[4096];     /* the target's /proc/<pid>/exe */
	uint64_t addr, size;
	const char *dso;
	bool in_exe;
};

/* a defined data object with a size (the tables read from the process) */
static bool is_data(const GElf_Sym *sym)
{
	return GELF_ST_TYPE(sym->st_info) == STT_OBJECT && sym->st_shndx != SHN_UNDEF &&
	       sym->st_size;
}

static int sym_find_cb(Dwfl_Module *mod, void **ud, const char *mname, Dwarf_Addr start,
		       void *arg)
{
	struct sym_find *sf = arg;
	bool exe = mname && !strcmp(mname, sf->exe);
	GElf_Sym sym;
	GElf_Addr addr;

	if (sf->addr && (sf->in_exe || !exe))
		return DWARF_CB_OK;
	if (rxb_syms_module_find(mod, sf->name, is_data, &sym, &addr)) {
		sf->addr = addr;
		sf->size = sym.st_size;
		sf->dso = rxb_syms_base_name(mname);
		sf->in_exe = exe;
	}
	return DWARF_CB_OK;
}

/* The live definition's address and size: the executable's copy first. */
static int sym_find(struct rxb_syms *sy, struct sym_find *sf)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", sy->pid);
	n = readlink(link, sf->exe, sizeof(sf->exe) - 1);
	sf->exe[n > 0 ? n : 0] = '\0';
	dwfl_getmodules(sy->dwfl, sym_find_cb, sf, 0);
	return sf->addr ? 0 : -ENOENT;
}

static int mem_read(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* A label being collected: one per distinct function address. */
struct pending {
	uint64_t addr;
	enum rxb_dpdk_role role;
	char who[64];          /* driver or ops name */
	const char *what;      /* "rx_pkt_burst", "dequeue", ... */
	bool per_port;
	uint64_t ports[4];     /* bitmap of ports 0..255 */
};

struct collect {
	struct rxb_syms *sy;
	size_t n;
	struct pending p[RXB_ATTACH_MAX_DPDK];
};

static struct pending *pending_add(struct collect *c, uint64_t addr, enum rxb_dpdk_role role,
				   const char *who, const char *what)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->p[i].addr == addr)
			return c->p[i].what == what ? &c->p[i] : NULL; /* shared: first wins */
	if (c->n == RXB_ATTACH_MAX_DPDK)
		return NULL;
	struct pending *p = &c->p[c->n++];
	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->role = role;
	p->what = what;
	snprintf(p->who, sizeof(p->who), "%s", who);
	return p;
}

/* Object basename of a target address, or NULL. */
static const char *addr_dso(struct rxb_syms *sy, uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(sy->dwfl, addr);
	return mod ? rxb_syms_base_name(dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL))
		   : NULL;
}

/* "librte_net_null.so.23.0" -> "net_null"; else the port's name. */
static void driver_name(const char *dso, const char *port_name, char *out, size_t len)
{
	if (dso && !strncmp(dso, "librte_", 7)) {
		const char *so = strstr(dso, ".so");
		snprintf(out, len, "%.*s", (int)(so ? so - dso - 7 : (long)strlen(dso + 7)), dso + 7);
	} else {
		snprintf(out, len, "%s", port_name && *port_name ? port_name : "ethdev");
	}
}

/* one function-pointer field of a DPDK ops table and the role it plays */
struct ops_field {
	size_t off;
	enum rxb_dpdk_role role;
	const char *what;
};

/* Copies the symbol sf found out of the target; *out is the caller's to free. */
static int sym_copy(struct rxb_syms *sy, const struct sym_find *sf, uint8_t **out, char *err,
		    size_t errlen)
{
	uint8_t *buf = malloc(sf->size);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = mem_read(sy->pid, sf->addr, buf, sf->size);
	if (rc) {
		snprintf(err, errlen, "reading %s of pid %d: %s", sf->name, sy->pid, strerror(-rc));
		free(buf);
		return rc;
	}
	*out = buf;
	return 0;
}

static int fp_ops_read(struct collect *c, const struct rxb_tele_snap *ports, char *err,
		       size_t errlen)
{
	static const struct ops_field fields[] = {
		{RXB_FP_RX_PKT_BURST, RXB_ROLE_RX_BURST, "rx_pkt_burst"},
		{RXB_FP_RX_QUEUE_COUNT, RXB_ROLE_ETH_OTHER, "rx_queue_count"},
		{RXB_FP_RX_DESCRIPTOR_STATUS, RXB_ROLE_ETH_OTHER, "rx_descriptor_status"},
		{RXB_FP_TX_PKT_BURST, RXB_ROLE_TX_BURST, "tx_pkt_burst"},
		{RXB_FP_TX_PKT_PREPARE, RXB_ROLE_ETH_OTHER, "tx_pkt_prepare"},
		{RXB_FP_TX_DESCRIPTOR_STATUS, RXB_ROLE_ETH_OTHER, "tx_descriptor_status"},
	};
	struct sym_find sf = {.name = "rte_eth_fp_ops"};
	uint8_t *buf;
	size_t nports;
	int rc = sym_find(c->sy, &sf);

	if (rc)
		return rc;
	nports = sf.size / FP_OPS_SIZE;
	if (sf.size % FP_OPS_SIZE || !nports || nports > 256) {
		snprintf(err, errlen, "rte_eth_fp_ops is %llu bytes: not the DPDK 21.11+ layout",
			 (unsigned long long)sf.size);
		return -EPROTO;
	}
	rc = sym_copy(c->sy, &sf, &buf, err, errlen);
	if (rc)
		return rc;
	for (size_t port = 0; port < nports; port++) {
		const struct rxb_tele_port *tp = rxb_tele_port_find(ports, (uint16_t)port);
		if (ports && !tp)
			continue;
		const char *pname = tp ? tp->name : NULL;
		for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
			uint64_t fn;
			char drv[64];
			memcpy(&fn, buf + port * FP_OPS_SIZE + fields[k].off, sizeof(fn));
			if (!fn)
				continue;
			const char *dso = addr_dso(c->sy, fn);
			/* unused ports point at ethdev's own dummies */
			if (!dso || (!ports && (!strncmp(dso, "librte_ethdev", 13) ||
						!strcmp(dso, sf.dso))))
				continue;
			driver_name(dso, pname, drv, sizeof(drv));
			struct pending *p = pending_add(c, fn, fields[k].role, drv, fields[k].what);
			if (p) {
				p->per_port = true;
				p->ports[port / 64] |= 1ull << (port % 64);
			}
		}
	}
	free(buf);
	return 0;
}

static int mp_ops_read(struct collect *c, char *err, size_t errlen)
{
	static const struct ops_field fields[] = {
		{RXB_MP_OPS_ALLOC, RXB_ROLE_MP_OTHER, "alloc"},
		{RXB_MP_OPS_FREE, RXB_ROLE_MP_OTHER, "free"},
		{RXB_MP_OPS_ENQUEUE, RXB_ROLE_MP_PUT, "enqueue"},
		{RXB_MP_OPS_DEQUEUE, RXB_ROLE_MP_GET, "dequeue"},
		{RXB_MP_OPS_GET_COUNT, RXB_ROLE_MP_OTHER, "get_count"},
		{RXB_MP_OPS_CALC_MEM_SIZE, RXB_ROLE_MP_OTHER, "calc_mem_size"},
		{RXB_MP_OPS_POPULATE, RXB_ROLE_MP_OTHER, "populate"},
		{RXB_MP_OPS_GET_INFO, RXB_ROLE_MP_OTHER, "get_info"},
		{RXB_MP_OPS_DEQUEUE_CONTIG_BLOCKS, RXB_ROLE_MP_GET, "dequeue_contig_blocks"},
	};
	struct sym_find sf = {.name = "rte_mempool_ops_table"};
	uint8_t *buf;
	uint32_t num;
	int rc = sym_find(c->sy, &sf);

	if (rc)
		return rc;
	if (sf.size != RXB_MP_TABLE_SIZE) {
		snprintf(err, errlen, "rte_mempool_ops_table is %llu bytes: not the layout of "
			 "DPDK 22.11", (unsigned long long)sf.size);
		return -EPROTO;
	}
	rc = sym_copy(c->sy, &sf, &buf, err, errlen);
	if (rc)
		return rc;
	memcpy(&num, buf + RXB_MP_TABLE_NUM_OPS, sizeof(num));
	for (uint32_t i = 0; i < num && i < MP_OPS_MAX; i++) {
		const uint8_t *ops = buf + MP_OPS_FIRST + (size_t)i * MP_OPS_SIZE;
		char name[MP_NAME + 1];
		memcpy(name, ops + RXB_MP_OPS_NAME, MP_NAME);
		name[MP_NAME] = '\0';
		for (char *ch = name; *ch; ch++) /* it becomes a frame name */
			if (*ch == ';' || *ch < ' ' || *ch > '~')
				*ch = '_';
		for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
			uint64_t fn;
			memcpy(&fn, ops + fields[k].off, sizeof(fn));
			if (fn && addr_dso(c->sy, fn))
				pending_add(c, fn, fields[k].role, name, fields[k].what);
		}
	}
	free(buf);
	return 0;
}

/* " (port 0)", " (ports 0,1)" */
static void ports_text(const struct pending *p, char *out, size_t len)
{
	size_t o = 0, n = 0;

	for (size_t i = 0; i < 256; i++)
		n += (p->ports[i / 64] >> (i % 64)) & 1;
	o = (size_t)snprintf(out, len, " (port%s ", n > 1 ? "s" : "");
	for (size_t i = 0, k = 0; i < 256 && o < len; i++) {
		if (!((p->ports[i / 64] >> (i % 64)) & 1))
			continue;
		if (k++ == 8) {
			o += (size_t)snprintf(out + o, len - o, ",...");
			break;
		}
		o += (size_t)snprintf(out + o, len - o, "%s%zu", k > 1 ? "," : "", i);
	}
	if (o < len)
		snprintf(out + o, len - o, ")");
}

static int label_cmp(const void *a, const void *b)
{
	const struct rxb_dpdk_label *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int rxb_syms_dpdk_read(struct rxb_syms *sy, const struct rxb_tele_snap *ports, char *err,
		       size_t errlen)
{
	struct collect *c = calloc(1, sizeof(*c));
	char e1[160] = "", e2[160] = "";
	int r1, r2;

	sy->ndpdk = 0;
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->sy = sy;
	r1 = fp_ops_read(c, ports, e1, sizeof(e1));
	r2 = mp_ops_read(c, e2, sizeof(e2));
	for (size_t i = 0; i < c->n; i++) {
		const struct pending *p = &c->p[i];
		struct rxb_dpdk_label *l = &sy->dpdk[sy->ndpdk++];
		Dwfl_Module *mod = dwfl_addrmodule(sy->dwfl, p->addr);
		Dwarf_Addr bias = 0;
		char where[96] = "";
		memset(l, 0, sizeof(*l));
		l->addr = p->addr;
		l->role = p->role;
		l->off = p->addr;
		if (mod && dwfl_module_getelf(mod, &bias)) {
			l->off = p->addr - bias;
			snprintf(l->dso, sizeof(l->dso), "%s", addr_dso(sy, p->addr));
		}
		if (p->per_port)
			ports_text(p, where, sizeof(where));
		snprintf(l->label, sizeof(l->label), "%.60s %.24s%.40s", p->who, p->what, where);
	}
	free(c);
	if (sy->ndpdk)
		qsort(sy->dpdk, sy->ndpdk, sizeof(sy->dpdk[0]), label_cmp);
	if (r1 == -ENOENT && r2 == -ENOENT) {
		snprintf(err, errlen, "no rte_eth_fp_ops or rte_mempool_ops_table in pid %d: "
			 "not a DPDK process", sy->pid);
		return -ENOENT;
	}
	if (r1 && r1 != -ENOENT && r2 && r2 != -ENOENT) {
		snprintf(err, errlen, "%s; %s", e1, e2);
		return r1;
	}
	if ((r1 && r1 != -ENOENT) || (r2 && r2 != -ENOENT)) /* one table read: say what the other did */
		snprintf(err, errlen, "%s", r1 && r1 != -ENOENT ? e1 : e2);
	else
		err[0] = '\0';
	return (int)sy->ndpdk;
}

const struct rxb_dpdk_label *rxb_syms_dpdk_labels(const struct rxb_syms *sy, size_t *n)
{
	*n = sy->ndpdk;
	return sy->dpdk;
}

const struct rxb_dpdk_label *rxb_syms_dpdk_find(const struct rxb_syms *sy, uint64_t addr)
{
	size_t lo = 0, hi = sy->ndpdk;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sy->dpdk[mid].addr == addr)
			return &sy->dpdk[mid];
		if (sy->dpdk[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
