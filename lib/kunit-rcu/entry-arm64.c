// SPDX-License-Identifier: GPL-2.0
/*
 * kunit-rcu arm64 back end: a kernel BRK with an immediate of its own,
 * caught by a kernel break hook.  el1_dbg() enters it through
 * arm64_enter_el1_dbg(), that is ct_nmi_enter() without __nmi_enter():
 * NMI-like for RCU, but in_nmi() is false, unlike x86's int3 and NMI.
 */

#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <asm/debug-monitors.h>
#include <asm/insn.h>
#include <asm/traps.h>

#include "kunit_rcu.h"

/* Unused by the kernel (see asm/brk-imm.h). */
#define KUNIT_RCU_BRK_IMM	0x0a5

static int kunit_rcu_brk(struct pt_regs *regs, unsigned long esr)
{
	kunit_rcu_entry_handler();
	arm64_skip_faulting_instruction(regs, AARCH64_INSN_SIZE);
	return DBG_HOOK_HANDLED;
}

static struct break_hook kunit_rcu_brk_hook = {
	.fn = kunit_rcu_brk,
	.imm = KUNIT_RCU_BRK_IMM,
};

int kunit_rcu_arch_arm(void)
{
	register_kernel_break_hook(&kunit_rcu_brk_hook);
	return 0;
}

void kunit_rcu_arch_disarm(void)
{
	unregister_kernel_break_hook(&kunit_rcu_brk_hook);
}

bool kunit_rcu_arch_supported(enum kunit_rcu_entry e)
{
	return e == KUNIT_RCU_BRK;
}

int kunit_rcu_arch_stack(unsigned long sp)
{
	return 0;
}

const char *kunit_rcu_arch_stack_name(int stack)
{
	return "unknown";
}

int kunit_rcu_arch_raise(enum kunit_rcu_entry e)
{
	if (e != KUNIT_RCU_BRK)
		return -EOPNOTSUPP;
	asm volatile("brk %0" : : "I" (KUNIT_RCU_BRK_IMM) : "memory");
	return 0;
}
