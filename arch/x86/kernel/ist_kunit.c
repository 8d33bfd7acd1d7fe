// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the RCU guarantees of x86's NMI-like exception entries
 * (commit 959274753857 "x86, traps: Track entry into and exit from IST
 * context", in 6.1 irqentry_nmi_enter()/irqentry_nmi_exit()): a kernel
 * int3 (raw and from a kprobe), a kernel #DB from a hardware data
 * breakpoint and an NMI make RCU watch even when they interrupt an
 * extended quiescent state (EQS), are never quiescent states, nest and
 * unwind exactly, and run where scheduling is caught.
 *
 * Every entry is raised from kernel mode on a chosen CPU, from a kthread
 * in task context and from the same kthread in a fake EQS
 * (lib/kunit-rcu/).  Handlers only record; the test thread asserts.
 */

#include <kunit/test.h>
#include <linux/context_tracking.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <asm/cpu_entry_area.h>
#include <asm/stacktrace.h>

#include "kunit_rcu.h"

/* Installs every entry's handler; all of them must be there. */
static void ist_arm(struct kunit *test)
{
	static const enum kunit_rcu_entry need[] = {
		KUNIT_RCU_NMI, KUNIT_RCU_INT3, KUNIT_RCU_KPROBE, KUNIT_RCU_DEBUG,
	};
	unsigned int i;

	KUNIT_ASSERT_EQ(test, kunit_rcu_entries_arm(test), 0);
	for (i = 0; i < ARRAY_SIZE(need); i++)
		KUNIT_ASSERT_TRUE_MSG(test, kunit_rcu_entry_supported(need[i]),
				      "%s cannot be armed (CONFIG_KPROBES? a free debug register?)",
				      kunit_rcu_entry_name(need[i]));
}

/* The stack a handler of @e runs on when the entry comes from a kthread. */
static int ist_stack(enum kunit_rcu_entry e)
{
	switch (e) {
	case KUNIT_RCU_NMI:
		return STACK_TYPE_EXCEPTION + ESTACK_NMI;
	case KUNIT_RCU_DEBUG:
		return STACK_TYPE_EXCEPTION + ESTACK_DB;
	default:
		return STACK_TYPE_TASK;	/* #BP has used no IST stack since 5.x */
	}
}

/*
 * What every NMI-like handler must see, at nesting level @l (0 outermost)
 * of an entry taken from the EQS (@eqs) or from task context.
 */
static void ist_expect_in(struct kunit *test, struct kunit_rcu_chain *o, unsigned int l, bool eqs)
{
	const char *name = kunit_rcu_entry_name(o->entry[l]);
	const char *from = eqs ? "EQS" : "task";
	const struct kunit_rcu_snap *in = &o->in[l], *out = &o->out[l];
	long nmi_nesting = eqs ? 2 * l + 1 : o->before.nmi_nesting + 2 * (l + 1);
	int dynticks = o->before.dynticks + (eqs ? RCU_DYNTICKS_IDX : 0);

	KUNIT_EXPECT_TRUE_MSG(test, in->valid, "%s (level %u, from %s) ran no handler",
			      name, l + 1, from);
	KUNIT_EXPECT_TRUE_MSG(test, in->watching, "%s (level %u, from %s): RCU not watching",
			      name, l + 1, from);
	KUNIT_EXPECT_TRUE_MSG(test, in->in_nmi, "%s (level %u, from %s): in_nmi() false",
			      name, l + 1, from);
	KUNIT_EXPECT_NE_MSG(test, in->preempt_count & NMI_MASK, 0,
			    "%s (level %u, from %s): preempt_count %#x", name, l + 1, from,
			    in->preempt_count);
	KUNIT_EXPECT_TRUE_MSG(test, in->in_hardirq,
			      "%s (level %u, from %s): no hardirq count, preempt_count %#x",
			      name, l + 1, from, in->preempt_count);
	KUNIT_EXPECT_FALSE_MSG(test, in->preemptible, "%s (level %u, from %s): preemptible",
			       name, l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, in->nmi_nesting, nmi_nesting,
			    "%s (level %u, from %s): NMI nesting on entry", name, l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, in->dynticks, dynticks,
			    "%s (level %u, from %s): dynticks on entry", name, l + 1, from);
	/* Still watched, same counters, after every inner entry has left. */
	KUNIT_EXPECT_TRUE_MSG(test, out->watching,
			      "%s (level %u, from %s): not watching after the inner exit",
			      name, l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, out->nmi_nesting, nmi_nesting,
			    "%s (level %u, from %s): NMI nesting after the inner exit",
			    name, l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, out->dynticks, dynticks,
			    "%s (level %u, from %s): dynticks after the inner exit",
			    name, l + 1, from);
}

/* Raises the entries of @o on @cpu from task context and from an EQS. */
static void ist_check(struct kunit *test, int cpu, struct kunit_rcu_chain *proto)
{
	bool eqs;

	for (eqs = false; ; eqs = true) {
		struct kunit_rcu_chain *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
		const char *from = eqs ? "EQS" : "task";
		unsigned int l;
		int stack;

		KUNIT_ASSERT_NOT_NULL(test, o);
		memcpy(o->entry, proto->entry, sizeof(o->entry));
		o->depth = proto->depth;
		KUNIT_ASSERT_TRUE(test, kunit_rcu_run_on_cpu(test, cpu, kunit_rcu_chain_raise, o,
							     eqs, KUNIT_RCU_PROMPT_MS));
		for (l = 0; l < o->depth; l++)
			KUNIT_ASSERT_EQ_MSG(test, o->raised[l], 0,
					    "%s (level %u, from %s) not taken",
					    kunit_rcu_entry_name(o->entry[l]), l + 1, from);
		KUNIT_EXPECT_EQ_MSG(test, o->level, o->depth, "handlers run, from %s", from);
		KUNIT_EXPECT_EQ_MSG(test, o->before.watching, !eqs, "from %s", from);
		for (l = 0; l < o->depth; l++)
			ist_expect_in(test, o, l, eqs);

		/* Which stack: the IST stack where the entry has one. */
		stack = ist_stack(o->entry[0]);
		KUNIT_EXPECT_EQ_MSG(test, o->in[0].stack, stack,
				    "%s from %s ran on the %s stack, not the %s stack",
				    kunit_rcu_entry_name(o->entry[0]), from,
				    kunit_rcu_stack_name(o->in[0].stack),
				    kunit_rcu_stack_name(stack));

		/* Exact unwinding: the state before the entry is back. */
		KUNIT_EXPECT_EQ_MSG(test, o->after.watching, o->before.watching, "from %s", from);
		KUNIT_EXPECT_EQ_MSG(test, o->after.nmi_nesting, o->before.nmi_nesting,
				    "NMI nesting after the last exit, from %s", from);
		KUNIT_EXPECT_EQ_MSG(test, o->after.nesting, o->before.nesting,
				    "nesting after the last exit, from %s", from);
		KUNIT_EXPECT_EQ_MSG(test, o->after.dynticks,
				    o->before.dynticks + (eqs ? 2 * RCU_DYNTICKS_IDX : 0),
				    "dynticks after the last exit, from %s", from);
		KUNIT_EXPECT_EQ_MSG(test, o->after.preempt_count, o->before.preempt_count,
				    "preempt_count after the last exit, from %s", from);
		if (eqs)
			break;
	}
}

static void ist_single(struct kunit *test, enum kunit_rcu_entry e)
{
	struct kunit_rcu_chain proto = { .entry = { e }, .depth = 1 };
	int cpu = kunit_rcu_target_cpu(test);

	ist_arm(test);
	ist_check(test, cpu, &proto);
}

/*
 * Covers: IST-1
 *
 * A raw kernel int3 (die notifier, as int3_selftest()), from task context
 * and from an EQS: RCU watches in the handler, in_nmi() and the NMI and
 * hardirq counts are set, it is not preemptible, it runs on the task
 * stack (no IST for #BP), and the counters unwind exactly.
 */
static void rcu_ist_int3(struct kunit *test)
{
	ist_single(test, KUNIT_RCU_INT3);
}

/*
 * Covers: IST-1
 *
 * The same for the int3 of a (non-optimized) kprobe: its pre_handler is
 * NMI-like for RCU.
 */
static void rcu_ist_kprobe(struct kunit *test)
{
	ist_single(test, KUNIT_RCU_KPROBE);
}

/*
 * Covers: IST-2
 *
 * A kernel #DB from a hardware data breakpoint (perf), from task context
 * and from an EQS: the handler runs on the DB IST stack, NMI-like for
 * RCU, and the counters unwind exactly.
 */
static void rcu_ist_debug(struct kunit *test)
{
	ist_single(test, KUNIT_RCU_DEBUG);
}

/*
 * Covers: IST-3
 *
 * NMI-like entries nested three deep, from task context and from an EQS:
 * NMI > int3 > kprobe, #DB > int3 > int3.  The outer NMI and #DB run on
 * their IST stacks.  At every level RCU watches,
 * the NMI nesting steps by two (by one for the outermost entry from an
 * EQS), dynticks moves only at the outermost entry, each handler is
 * still watched after its inner entry left, and everything unwinds.
 */
static void rcu_ist_nesting(struct kunit *test)
{
	struct kunit_rcu_chain nmi = {
		.entry = { KUNIT_RCU_NMI, KUNIT_RCU_INT3, KUNIT_RCU_KPROBE }, .depth = 3,
	};
	struct kunit_rcu_chain db = {
		.entry = { KUNIT_RCU_DEBUG, KUNIT_RCU_INT3, KUNIT_RCU_INT3 }, .depth = 3,
	};
	int cpu = kunit_rcu_target_cpu(test);

	ist_arm(test);
	ist_check(test, cpu, &nmi);
	ist_check(test, cpu, &db);
}

/*
 * Entries raised again when the held reader ended before this thread
 * armed it.  With two CPUs (CONFIG=ghost) this thread was kept off its
 * CPU for the reader's whole bound in about 1 boot in 3, on the first
 * try of an entry and not the next (cause not found: something on this
 * CPU waits for the held one, whose interrupts are off).
 */
#define IST_HOLD_TRIES	5

static void ist_hold(struct kunit *test, int cpu, enum kunit_rcu_entry e)
{
	const char *name = kunit_rcu_entry_name(e);
	struct kunit_rcu_chain *o;
	struct kunit_rcu_work *w;
	int try = 1;

	for (;;) {
		bool armed;

		o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, o);
		o->entry[0] = e;
		o->depth = 1;
		o->hold_reader = true;
		w = kunit_rcu_start_on_cpu(test, cpu, kunit_rcu_chain_raise, o, true);
		armed = kunit_rcu_try_gp_held(test, &o->hold, name);
		KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS));
		if (armed)
			break;
		KUNIT_ASSERT_LT_MSG(test, try, IST_HOLD_TRIES,
				    "%s: the reader ended before grace periods were requested, %d times",
				    name, try);
		kunit_info(test, "%s: reader not armed within %d ms, try %d\n", name,
			   KUNIT_RCU_PROMPT_MS, try);
		try++;
	}
	KUNIT_ASSERT_EQ_MSG(test, o->raised[0], 0, "%s from EQS not taken", name);
	KUNIT_EXPECT_FALSE_MSG(test, o->before.watching, "%s: the kthread was not in an EQS",
			       name);
	KUNIT_EXPECT_TRUE_MSG(test, o->hold.in.watching, "%s: reader not watched", name);
	KUNIT_EXPECT_FALSE_MSG(test, o->after.watching, "%s: EQS not back", name);
}

/*
 * Covers: IST-8
 *
 * int3, kprobe, #DB and NMI, each taken from an EQS, run a reader and
 * hold it while this CPU drives a normal and an expedited grace period:
 * neither is reported complete (full polled state) before the handler
 * leaves its reader, and both are soon after.
 */
static void rcu_ist_not_quiescent(struct kunit *test)
{
	static const enum kunit_rcu_entry entries[] = {
		KUNIT_RCU_INT3, KUNIT_RCU_KPROBE, KUNIT_RCU_DEBUG, KUNIT_RCU_NMI,
	};
	int cpu = kunit_rcu_target_cpu(test);
	unsigned int i;

	ist_arm(test);
	for (i = 0; i < ARRAY_SIZE(entries); i++)
		ist_hold(test, cpu, entries[i]);
}

/*
 * Covers: IST-7
 *
 * Sleeping in an NMI-like handler is caught: in every entry, taken from
 * an EQS, the handler runs the scheduler's might_sleep() check, which
 * must report "sleeping function called from invalid context".  From
 * task context and from the EQS, the handler also sees what makes that
 * check and schedule()'s "scheduling while atomic" fire: NMI and hardirq
 * counts in the preempt count, interrupts off, nothing preemptible.
 */
static void rcu_ist_cannot_schedule(struct kunit *test)
{
	static const enum kunit_rcu_entry entries[] = {
		KUNIT_RCU_INT3, KUNIT_RCU_KPROBE, KUNIT_RCU_DEBUG, KUNIT_RCU_NMI,
	};
	int cpu = kunit_rcu_target_cpu(test);
	unsigned int i;
	bool eqs;

	ist_arm(test);
	for (i = 0; i < ARRAY_SIZE(entries); i++) {
		for (eqs = false; ; eqs = true) {
			struct kunit_rcu_chain *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
			const char *name = kunit_rcu_entry_name(entries[i]);
			const char *from = eqs ? "EQS" : "task";
			unsigned int pc;

			KUNIT_ASSERT_NOT_NULL(test, o);
			o->entry[0] = entries[i];
			o->depth = 1;
			KUNIT_ASSERT_TRUE(test, kunit_rcu_run_on_cpu(test, cpu,
								     kunit_rcu_chain_raise, o, eqs,
								     KUNIT_RCU_PROMPT_MS));
			KUNIT_ASSERT_EQ_MSG(test, o->raised[0], 0, "%s from %s not taken", name,
					    from);
			pc = o->in[0].preempt_count;
			KUNIT_EXPECT_GE_MSG(test, pc & NMI_MASK, NMI_OFFSET,
					    "%s from %s: preempt_count %#x", name, from, pc);
			KUNIT_EXPECT_GE_MSG(test, pc & HARDIRQ_MASK, HARDIRQ_OFFSET,
					    "%s from %s: preempt_count %#x", name, from, pc);
			KUNIT_EXPECT_GT_MSG(test, pc & ~PREEMPT_NEED_RESCHED,
					    o->before.preempt_count & ~PREEMPT_NEED_RESCHED,
					    "%s from %s: in_atomic() not raised", name, from);
			KUNIT_EXPECT_TRUE_MSG(test, o->in[0].irqs_disabled,
					      "%s from %s: interrupts on", name, from);
			KUNIT_EXPECT_FALSE_MSG(test, o->in[0].preemptible,
					       "%s from %s: preemptible", name, from);
			if (eqs)
				break;
		}
		kunit_rcu_expect_might_sleep(test, cpu, entries[i], true);
	}
}

static struct kunit_case rcu_ist_cases[] = {
	KUNIT_CASE(rcu_ist_int3),
	KUNIT_CASE(rcu_ist_kprobe),
	KUNIT_CASE(rcu_ist_debug),
	KUNIT_CASE(rcu_ist_nesting),
	KUNIT_CASE(rcu_ist_not_quiescent),
	KUNIT_CASE(rcu_ist_cannot_schedule),
	{}
};

static struct kunit_suite rcu_ist_suite = {
	.name = "rcu_ist",
	.test_cases = rcu_ist_cases,
};

kunit_test_suite(rcu_ist_suite);

MODULE_DESCRIPTION("KUnit tests of RCU in x86's NMI-like (IST) exception entries");
MODULE_LICENSE("GPL");
