// SPDX-License-Identifier: GPL-2.0
/*
 * kunit-rcu x86 back end: a self-NMI through the local APIC, caught by an
 * NMI_LOCAL handler that claims only the NMIs it asked for, and an int3
 * at a known address, caught by a die notifier (as int3_selftest() does).
 * Optionally: a kprobe (its int3 goes through kprobe_int3_handler()) and a
 * hardware data breakpoint on a word of our own (#DB, on the DB IST stack).
 * Every handler runs kunit_rcu_entry_handler() only.
 */

#include <linux/hw_breakpoint.h>
#include <linux/kdebug.h>
#include <linux/kprobes.h>
#include <linux/nmi.h>
#include <linux/notifier.h>
#include <linux/objtool.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <asm/apic.h>
#include <asm/stacktrace.h>
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

#ifdef CONFIG_KPROBES
/*
 * notrace: no ftrace site, so the kprobe is a real int3 (KPROBES_ON_FTRACE).
 * __no_profile: no gcov counter update either, so the probed instruction is
 * the ret, which kprobes emulate: one int3 per hit.  A RIP-relative counter
 * increment there would be stepped out of line and trap a second time.
 */
static noinline notrace __no_profile void kunit_rcu_kprobed(void)
{
	asm volatile("" : : : "memory");
}

static int kunit_rcu_kprobe_pre(struct kprobe *p, struct pt_regs *regs)
{
	kunit_rcu_entry_handler();
	return 0;
}

/* Its presence keeps the probe from being optimized into a jump. */
static void kunit_rcu_kprobe_post(struct kprobe *p, struct pt_regs *regs,
				  unsigned long flags)
{
}

static struct kprobe kunit_rcu_kp;
static bool kunit_rcu_kp_armed;

static void kunit_rcu_kprobe_arm(void)
{
	kunit_rcu_kp = (struct kprobe) {
		.addr = (kprobe_opcode_t *)kunit_rcu_kprobed,
		.pre_handler = kunit_rcu_kprobe_pre,
		.post_handler = kunit_rcu_kprobe_post,
	};
	kunit_rcu_kp_armed = !register_kprobe(&kunit_rcu_kp);
}

static void kunit_rcu_kprobe_disarm(void)
{
	if (kunit_rcu_kp_armed)
		unregister_kprobe(&kunit_rcu_kp);
	kunit_rcu_kp_armed = false;
}
#else
static void kunit_rcu_kprobed(void)
{
}

static const bool kunit_rcu_kp_armed;

static void kunit_rcu_kprobe_arm(void)
{
}

static void kunit_rcu_kprobe_disarm(void)
{
}
#endif

/* Written by kunit_rcu_arch_raise(KUNIT_RCU_DEBUG) only. */
static unsigned long kunit_rcu_db_word;
static struct perf_event * __percpu *kunit_rcu_db_bp;

static void kunit_rcu_db_hit(struct perf_event *bp, struct perf_sample_data *data,
			     struct pt_regs *regs)
{
	kunit_rcu_entry_handler();
}

static void kunit_rcu_db_arm(void)
{
	struct perf_event * __percpu *bp;
	struct perf_event_attr attr;

	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&kunit_rcu_db_word;
	attr.bp_len = sizeof(kunit_rcu_db_word);
	attr.bp_type = HW_BREAKPOINT_W;
	bp = register_wide_hw_breakpoint(&attr, kunit_rcu_db_hit, NULL);
	kunit_rcu_db_bp = IS_ERR(bp) ? NULL : bp;
}

static void kunit_rcu_db_disarm(void)
{
	if (kunit_rcu_db_bp)
		unregister_wide_hw_breakpoint(kunit_rcu_db_bp);
	kunit_rcu_db_bp = NULL;
}

int kunit_rcu_arch_arm(void)
{
	int ret = register_nmi_handler(NMI_LOCAL, kunit_rcu_nmi, 0, "kunit_rcu");

	if (ret)
		return ret;
	ret = register_die_notifier(&kunit_rcu_int3_nb);
	if (ret) {
		unregister_nmi_handler(NMI_LOCAL, "kunit_rcu");
		return ret;
	}
	/* Optional: kunit_rcu_arch_supported() tells whether they are there. */
	kunit_rcu_kprobe_arm();
	kunit_rcu_db_arm();
	return 0;
}

void kunit_rcu_arch_disarm(void)
{
	kunit_rcu_db_disarm();
	kunit_rcu_kprobe_disarm();
	unregister_die_notifier(&kunit_rcu_int3_nb);
	unregister_nmi_handler(NMI_LOCAL, "kunit_rcu");
}

bool kunit_rcu_arch_supported(enum kunit_rcu_entry e)
{
	switch (e) {
	case KUNIT_RCU_NMI:
	case KUNIT_RCU_INT3:
		return true;
	case KUNIT_RCU_KPROBE:
		return READ_ONCE(kunit_rcu_kp_armed);
	case KUNIT_RCU_DEBUG:
		return READ_ONCE(kunit_rcu_db_bp);
	default:
		return false;
	}
}

int kunit_rcu_arch_stack(unsigned long sp)
{
	struct stack_info info;

	if (!get_stack_info_noinstr((unsigned long *)sp, current, &info))
		return STACK_TYPE_UNKNOWN;
	return info.type;
}

const char *kunit_rcu_arch_stack_name(int stack)
{
	return stack_type_name(stack);
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
	case KUNIT_RCU_KPROBE:
		kunit_rcu_kprobed();
		return 0;
	case KUNIT_RCU_DEBUG:
		/* The #DB trap follows the store at once. */
		WRITE_ONCE(kunit_rcu_db_word, kunit_rcu_db_word + 1);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}
