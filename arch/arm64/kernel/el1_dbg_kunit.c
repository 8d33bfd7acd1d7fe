// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the RCU guarantees of arm64's kernel debug exceptions.
 * el1_dbg() brackets the handler with arm64_enter_el1_dbg() and
 * arm64_exit_el1_dbg(): ct_nmi_enter()/ct_nmi_exit() without
 * __nmi_enter(), so the exception is NMI-like for RCU (RCU watches in it,
 * also when it interrupts an extended quiescent state, it is no
 * quiescent state and it nests) while in_nmi() and in_hardirq() stay
 * false: do_debug_exception() only disables preemption.  x86 differs
 * there: its int3, #DB and NMI go through irqentry_nmi_enter(), which
 * raises the NMI and hardirq counts (see arch/x86/kernel/ist_kunit.c).
 *
 * The exception is a kernel BRK with an immediate of the test library's
 * own, caught by a break hook (lib/kunit-rcu/), raised on a chosen CPU
 * from a kthread in task context and in a fake EQS.  Handlers only
 * record; the test thread asserts.
 */

#include <kunit/test.h>
#include <linux/context_tracking.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>

#include "kunit_rcu.h"

/* Raises @depth nested BRKs on @cpu from task context or an EQS. */
static struct kunit_rcu_chain *dbg_raise(struct kunit *test, int cpu, unsigned int depth,
					 bool eqs)
{
	struct kunit_rcu_chain *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned int l;

	KUNIT_ASSERT_NOT_NULL(test, c);
	for (l = 0; l < depth; l++)
		c->entry[l] = KUNIT_RCU_BRK;
	c->depth = depth;
	KUNIT_ASSERT_TRUE(test, kunit_rcu_run_on_cpu(test, cpu, kunit_rcu_chain_raise, c, eqs,
						     KUNIT_RCU_PROMPT_MS));
	for (l = 0; l < depth; l++)
		KUNIT_ASSERT_EQ_MSG(test, c->raised[l], 0, "BRK level %u from %s not taken",
				    l + 1, eqs ? "EQS" : "task");
	KUNIT_ASSERT_EQ(test, c->level, depth);
	return c;
}

/*
 * The arm64 contract at level @l of a chain from an EQS (@eqs) or from
 * task context: RCU watches, NMI nesting and dynticks as for an NMI, but
 * in_nmi() and in_hardirq() false: no NMI or hardirq count.
 */
static void dbg_expect_level(struct kunit *test, struct kunit_rcu_chain *c, unsigned int l,
			     bool eqs)
{
	const char *from = eqs ? "EQS" : "task";
	const struct kunit_rcu_snap *in = &c->in[l], *out = &c->out[l];
	long nmi_nesting = eqs ? 2 * l + 1 : c->before.nmi_nesting + 2 * (l + 1);
	int dynticks = c->before.dynticks + (eqs ? RCU_DYNTICKS_IDX : 0);

	KUNIT_EXPECT_TRUE_MSG(test, in->watching, "BRK level %u from %s: RCU not watching",
			      l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, in->nmi_nesting, nmi_nesting,
			    "BRK level %u from %s: NMI nesting on entry", l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, in->dynticks, dynticks,
			    "BRK level %u from %s: dynticks on entry", l + 1, from);
	KUNIT_EXPECT_TRUE_MSG(test, out->watching,
			      "BRK level %u from %s: not watching after the inner exit",
			      l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, out->nmi_nesting, nmi_nesting,
			    "BRK level %u from %s: NMI nesting after the inner exit", l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, out->dynticks, dynticks,
			    "BRK level %u from %s: dynticks after the inner exit", l + 1, from);
	/* Where arm64 differs from x86: no NMI or hardirq count. */
	KUNIT_EXPECT_FALSE_MSG(test, in->in_nmi, "BRK level %u from %s: in_nmi()", l + 1, from);
	KUNIT_EXPECT_FALSE_MSG(test, in->in_hardirq, "BRK level %u from %s: in_hardirq()",
			       l + 1, from);
	KUNIT_EXPECT_EQ_MSG(test, in->preempt_count & (NMI_MASK | HARDIRQ_MASK),
			    c->before.preempt_count & (NMI_MASK | HARDIRQ_MASK),
			    "BRK level %u from %s: preempt count %#x", l + 1, from,
			    in->preempt_count);
}

static void dbg_expect_unwound(struct kunit *test, struct kunit_rcu_chain *c, bool eqs)
{
	const char *from = eqs ? "EQS" : "task";

	KUNIT_EXPECT_EQ_MSG(test, c->before.watching, !eqs, "from %s", from);
	KUNIT_EXPECT_EQ_MSG(test, c->after.watching, c->before.watching, "from %s", from);
	KUNIT_EXPECT_EQ_MSG(test, c->after.nmi_nesting, c->before.nmi_nesting,
			    "NMI nesting after the last exit, from %s", from);
	KUNIT_EXPECT_EQ_MSG(test, c->after.nesting, c->before.nesting,
			    "nesting after the last exit, from %s", from);
	KUNIT_EXPECT_EQ_MSG(test, c->after.dynticks,
			    c->before.dynticks + (eqs ? 2 * RCU_DYNTICKS_IDX : 0),
			    "dynticks after the last exit, from %s", from);
}

static void dbg_chain(struct kunit *test, unsigned int depth)
{
	int cpu = kunit_rcu_target_cpu(test);
	bool eqs;

	KUNIT_ASSERT_EQ(test, kunit_rcu_entries_arm(test), 0);
	for (eqs = false; ; eqs = true) {
		struct kunit_rcu_chain *c = dbg_raise(test, cpu, depth, eqs);
		unsigned int l;

		for (l = 0; l < depth; l++)
			dbg_expect_level(test, c, l, eqs);
		dbg_expect_unwound(test, c, eqs);
		if (eqs)
			break;
	}
}

/*
 * Covers: IST-A1
 *
 * A kernel BRK from task context and from an EQS: RCU watches in the
 * handler, which counts as an NMI for context tracking (NMI nesting +2,
 * or 1 from an EQS, whose dynticks it leaves), in_nmi() and in_hardirq()
 * stay false; the counters unwind exactly.
 */
static void rcu_el1_dbg_brk(struct kunit *test)
{
	dbg_chain(test, 1);
}

/*
 * Covers: IST-A1
 *
 * BRKs nested three deep, from task context and from an EQS: at every
 * level RCU watches, the NMI nesting steps by two, dynticks moves only
 * at the outermost entry, each handler is still watched after its inner
 * BRK left, and everything unwinds.
 */
static void rcu_el1_dbg_nesting(struct kunit *test)
{
	dbg_chain(test, KUNIT_RCU_CHAIN_MAX);
}

/*
 * Covers: IST-A1, IST-8
 *
 * A BRK taken from an EQS runs a reader and holds it while this CPU
 * drives a normal and an expedited grace period: neither is reported
 * complete before the handler leaves its reader, and both are soon after.
 */
static void rcu_el1_dbg_not_quiescent(struct kunit *test)
{
	struct kunit_rcu_chain *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *w;

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_EQ(test, kunit_rcu_entries_arm(test), 0);
	c->entry[0] = KUNIT_RCU_BRK;
	c->depth = 1;
	c->hold_reader = true;
	w = kunit_rcu_start_on_cpu(test, cpu, kunit_rcu_chain_raise, c, true);
	kunit_rcu_expect_gp_held(test, &c->hold, "BRK");
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS));
	KUNIT_ASSERT_EQ_MSG(test, c->raised[0], 0, "BRK from EQS not taken");
	KUNIT_EXPECT_FALSE_MSG(test, c->before.watching, "the kthread was not in an EQS");
	KUNIT_EXPECT_TRUE_MSG(test, c->hold.in.watching, "reader not watched");
	KUNIT_EXPECT_FALSE_MSG(test, c->after.watching, "EQS not back");
}

/*
 * Covers: IST-7
 *
 * Sleeping in a BRK handler is caught: the handler, entered from an EQS,
 * runs the scheduler's might_sleep() check, which must report "sleeping
 * function called from invalid context".  From task context and from
 * the EQS, the handler also sees what makes that check and schedule()'s
 * "scheduling while atomic" fire: interrupts masked and preemption
 * disabled by do_debug_exception().  Unlike x86 it is the preemption
 * count, not the NMI count, that is raised.
 */
static void rcu_el1_dbg_cannot_schedule(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	bool eqs;

	KUNIT_ASSERT_EQ(test, kunit_rcu_entries_arm(test), 0);
	for (eqs = false; ; eqs = true) {
		struct kunit_rcu_chain *c = dbg_raise(test, cpu, 1, eqs);

		KUNIT_EXPECT_TRUE_MSG(test, c->in[0].irqs_disabled, "from %s: interrupts on",
				      eqs ? "EQS" : "task");
		KUNIT_EXPECT_FALSE_MSG(test, c->in[0].preemptible, "from %s: preemptible",
				       eqs ? "EQS" : "task");
		KUNIT_EXPECT_GT_MSG(test, c->in[0].preempt_count & ~PREEMPT_NEED_RESCHED,
				    c->before.preempt_count & ~PREEMPT_NEED_RESCHED,
				    "from %s: in_atomic() not raised", eqs ? "EQS" : "task");
		if (eqs)
			break;
	}
	kunit_rcu_expect_might_sleep(test, cpu, KUNIT_RCU_BRK, true);
}

static struct kunit_case rcu_el1_dbg_cases[] = {
	KUNIT_CASE(rcu_el1_dbg_brk),
	KUNIT_CASE(rcu_el1_dbg_nesting),
	KUNIT_CASE(rcu_el1_dbg_not_quiescent),
	KUNIT_CASE(rcu_el1_dbg_cannot_schedule),
	{}
};

static struct kunit_suite rcu_el1_dbg_suite = {
	.name = "rcu_el1_dbg",
	.test_cases = rcu_el1_dbg_cases,
};

kunit_test_suite(rcu_el1_dbg_suite);

MODULE_DESCRIPTION("KUnit tests of RCU in arm64's kernel debug exceptions");
MODULE_LICENSE("GPL");
