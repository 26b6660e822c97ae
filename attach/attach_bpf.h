/* SPDX-License-Identifier: MIT */
/*
 * What the kernel side (attach.bpf.c) and the user side share: fixed-width
 * map keys and values and the fixed map sizes. Every map is sized here, so
 * the memory rxray attach uses is bounded whatever the target does.
 */
#ifndef RXRAY_ATTACH_BPF_H
#define RXRAY_ATTACH_BPF_H

#define RXB_BPF_STACK_DEPTH 127  /* frames kept per stack (kernel maximum) */
#define RXB_BPF_MAX_STACKS 16384 /* distinct stacks in the stack-trace map */
#define RXB_BPF_MAX_KEYS 16384   /* distinct (tid, user, kernel) stacks counted */
#define RXB_BPF_MAX_TIDS 1024    /* threads a filter can name */
#define RXB_BPF_MAX_UPROBES 16   /* symbols --uprobes can name */

#define RXB_BPF_STACK_COPY 8192        /* user stack bytes copied per sample (dwarf mode) */
#define RXB_BPF_RINGBUF (8u << 20)     /* dwarf-mode sample ring (bytes, power of 2) */
#define RXB_BPF_NREGS 17               /* x86-64 DWARF registers 0..16 (16 = rip) */

/*
 * dwarf mode: one raw sample, unwound in user space with the target's
 * CFI (code built without frame pointers, like distro DPDK).
 */
struct rxb_bpf_raw_sample {
	__u32 tid;
	__s32 kern_stack;
	__u32 stack_len; /* bytes of stack[] that hold the stack from regs[7] (rsp) up */
	__u32 pad;
	__u64 regs[RXB_BPF_NREGS]; /* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
	__u8 stack[RXB_BPF_STACK_COPY];
};

/* One counted sample: the thread and its two stack ids (< 0: none). */
struct rxb_bpf_key {
	__u32 tid;
	__s32 user_stack;
	__s32 kern_stack;
	__u32 pad;
};

/* Per probed symbol (array slot = the link's cookie). */
struct rxb_bpf_uprobe_stat {
	__u64 calls;     /* entry hits */
	__u64 returns;   /* return hits */
	__u64 ret_sum;   /* sum of return values >= 0 (packets for rx bursts) */
	__u64 ret_zero;  /* returns that gave 0 (empty polls) */
};

#endif
