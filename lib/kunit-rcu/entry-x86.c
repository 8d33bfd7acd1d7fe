// SPDX-License-Identifier: GPL-2.0
/*
 * kunit-rcu x86 back end: a self-NMI through the local APIC, caught by an
 * NMI_LOCAL handler that claims only the NMIs it asked for, and an int3
 * at a known address, caught by a die notifier (as int3_selftest() does).
 */

#include <linux/kdebug.h>
#include <linux/nmi.h>
#include <linux/notifier.h>
#include <linux/objtool.h>
#include <linux/percpu.h>
#include <asm/apic.h>
#include <asm/text-patching.h>

#include "kunit_rcu.h"

static DEFINE_PER_CPU(bool, kunit_rcu_nmi_pending);

static int kunit_rcu_nmi(unsigned int type, struct pt_regs *regs)
{
	if (!__this_cpu_read(kunit_rcu_nmi_pending))
		return NMI_DONE;
	__this_cpu_write(kunit_rcu_nmi_pending, false);
	kunit_rcu_entry_handler();
	return NMI_HANDLED;
}

extern const char kunit_rcu_int3_ip[];

/* Not inlined, not cloned: kunit_rcu_int3_ip must be unique. */
static noinline void kunit_rcu_int3(void)
{
	asm volatile("kunit_rcu_int3_ip:\n\t"
		     ANNOTATE_NOENDBR
		     "int3; nop\n\t" : : : "memory");
}

static int kunit_rcu_int3_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	struct pt_regs *regs = args->regs;

	if (val != DIE_INT3 || !regs || user_mode(regs) ||
	    regs->ip - INT3_INSN_SIZE != (unsigned long)kunit_rcu_int3_ip)
		return NOTIFY_DONE;
	kunit_rcu_entry_handler();
	return NOTIFY_STOP;	/* ->ip is past the int3 already */
}

static struct notifier_block kunit_rcu_int3_nb = {
	.notifier_call = kunit_rcu_int3_notify,
};

int kunit_rcu_arch_arm(void)
{
	int ret = register_nmi_handler(NMI_LOCAL, kunit_rcu_nmi, 0, "kunit_rcu");

	if (ret)
		return ret;
	ret = register_die_notifier(&kunit_rcu_int3_nb);
	if (ret)
		unregister_nmi_handler(NMI_LOCAL, "kunit_rcu");
	return ret;
}

void kunit_rcu_arch_disarm(void)
{
	unregister_die_notifier(&kunit_rcu_int3_nb);
	unregister_nmi_handler(NMI_LOCAL, "kunit_rcu");
}

bool kunit_rcu_arch_supported(enum kunit_rcu_entry e)
{
	return e == KUNIT_RCU_NMI || e == KUNIT_RCU_INT3;
}

int kunit_rcu_arch_raise(enum kunit_rcu_entry e)
{
	switch (e) {
	case KUNIT_RCU_NMI:
		/* Not send_IPI_self(): under x2APIC that sends a plain vector. */
		__this_cpu_write(kunit_rcu_nmi_pending, true);
		apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
		return 0;
	case KUNIT_RCU_INT3:
		kunit_rcu_int3();
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}
