// SPDX-License-Identifier: MIT
/*
 * rxray attach, kernel side: a perf-event program that counts the user and
 * kernel stacks of one process's chosen threads, and uprobe/uretprobe
 * programs that count calls and return values of named symbols. All
 * filtering happens here so samples of other processes cost one compare.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "attach_bpf.h"

const volatile __u32 target_tgid = 0;
const volatile __u8 filter_tids = 0; /* 1: only tids present in `tids` */
const volatile __u32 stack_copy = RXB_BPF_STACK_COPY; /* dwarf mode: bytes copied */

__u64 samples = 0;      /* samples of the target kept */
__u64 dropped = 0;      /* samples lost because `counts` was full */
__u64 stack_errors = 0; /* user stack id < 0 (collision or fault) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXB_BPF_MAX_TIDS);
	__type(key, __u32);
	__type(value, __u8);
} tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, RXB_BPF_MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, RXB_BPF_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXB_BPF_MAX_KEYS);
	__type(key, struct rxb_bpf_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RXB_BPF_MAX_UPROBES);
	__type(key, __u32);
	__type(value, struct rxb_bpf_uprobe_stat);
} ustats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RXB_BPF_RINGBUF); /* user space shrinks it in fp mode */
} raw_samples SEC(".maps");

static __always_inline int rxb_is_target(__u32 *tid_out)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	if ((__u32)(id >> 32) != target_tgid)
		return 0;
	if (filter_tids && !bpf_map_lookup_elem(&tids, &tid))
		return 0;
	*tid_out = tid;
	return 1;
}

SEC("perf_event")
int rxb_sample(struct bpf_perf_event_data *ctx)
{
	static const __u64 zero;
	struct rxb_bpf_key key = {};
	__u64 *val;

	if (!rxb_is_target(&key.tid))
		return 0;
	key.user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	key.kern_stack = bpf_get_stackid(ctx, &stacks, 0);
	if (key.user_stack < 0)
		__sync_fetch_and_add(&stack_errors, 1);

	val = bpf_map_lookup_elem(&counts, &key);
	if (!val) {
		/* the map is fixed-size: a full map drops, never grows */
		bpf_map_update_elem(&counts, &key, &zero, BPF_NOEXIST);
		val = bpf_map_lookup_elem(&counts, &key);
		if (!val) {
			__sync_fetch_and_add(&dropped, 1);
			return 0;
		}
	}
	__sync_fetch_and_add(val, 1);
	__sync_fetch_and_add(&samples, 1);
	return 0;
}

#if defined(__TARGET_ARCH_x86)
/*
 * dwarf mode: the user registers (saved at kernel entry, so right whether
 * the sample hit user or kernel mode) and the top of the user stack go to
 * user space, which unwinds them with the objects' CFI.
 */
SEC("perf_event")
int rxb_sample_raw(struct bpf_perf_event_data *ctx)
{
	struct rxb_bpf_raw_sample *e;
	struct pt_regs *r;
	__u64 sp;
	__u32 tid, n;

	if (!rxb_is_target(&tid))
		return 0;
	e = bpf_ringbuf_reserve(&raw_samples, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	e->tid = tid;
	e->pad = 0;
	e->kern_stack = bpf_get_stackid(ctx, &stacks, 0);
	e->regs[0] = BPF_CORE_READ(r, ax);
	e->regs[1] = BPF_CORE_READ(r, dx);
	e->regs[2] = BPF_CORE_READ(r, cx);
	e->regs[3] = BPF_CORE_READ(r, bx);
	e->regs[4] = BPF_CORE_READ(r, si);
	e->regs[5] = BPF_CORE_READ(r, di);
	e->regs[6] = BPF_CORE_READ(r, bp);
	e->regs[7] = BPF_CORE_READ(r, sp);
	e->regs[8] = BPF_CORE_READ(r, r8);
	e->regs[9] = BPF_CORE_READ(r, r9);
	e->regs[10] = BPF_CORE_READ(r, r10);
	e->regs[11] = BPF_CORE_READ(r, r11);
	e->regs[12] = BPF_CORE_READ(r, r12);
	e->regs[13] = BPF_CORE_READ(r, r13);
	e->regs[14] = BPF_CORE_READ(r, r14);
	e->regs[15] = BPF_CORE_READ(r, r15);
	e->regs[16] = BPF_CORE_READ(r, ip);
	sp = e->regs[7];
	/* what is copied is what the sample costs; near the top of the stack
	 * a full copy faults: try smaller ones */
	n = stack_copy;
	if (n > RXB_BPF_STACK_COPY || n < 512)
		n = RXB_BPF_STACK_COPY;
	if (!bpf_probe_read_user(e->stack, n, (void *)sp))
		e->stack_len = n;
	else if (n > 2048 && !bpf_probe_read_user(e->stack, 2048, (void *)sp))
		e->stack_len = 2048;
	else if (!bpf_probe_read_user(e->stack, 512, (void *)sp))
		e->stack_len = 512;
	else
		e->stack_len = 0;
	if (!e->stack_len)
		__sync_fetch_and_add(&stack_errors, 1);
	/* no wakeup: user space drains the ring on a timer (see
	 * rxb_sampler_poll); a wakeup per sample would be an irq_work here */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	__sync_fetch_and_add(&samples, 1);
	return 0;
}
#endif

static __always_inline struct rxb_bpf_uprobe_stat *rxb_ustat(void *ctx)
{
	__u32 tid, slot;

	if (!rxb_is_target(&tid))
		return 0;
	slot = (__u32)bpf_get_attach_cookie(ctx);
	return bpf_map_lookup_elem(&ustats, &slot);
}

SEC("uprobe")
int BPF_KPROBE(rxb_uprobe_entry)
{
	struct rxb_bpf_uprobe_stat *st = rxb_ustat(ctx);

	if (st)
		__sync_fetch_and_add(&st->calls, 1);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(rxb_uprobe_return, long ret)
{
	struct rxb_bpf_uprobe_stat *st = rxb_ustat(ctx);

	if (!st)
		return 0;
	__sync_fetch_and_add(&st->returns, 1);
	if (ret > 0)
		__sync_fetch_and_add(&st->ret_sum, (__u64)ret);
	else if (ret == 0)
		__sync_fetch_and_add(&st->ret_zero, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
