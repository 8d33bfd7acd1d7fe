// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the "Tracing" requirement of "RCU requirements, part
 * 3": the tracing-safe accessors inside the handlers kprobes run in.
 * The handler is the breakpoint exception kprobes use (x86 int3, arm64
 * BRK), raised through lib/kunit-rcu/ from task context and from an
 * extended quiescent state; it only records, the test thread asserts.
 */

#include <kunit/test.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "kunit_rcu.h"

static int rcu_tracing_datum = 42;
static int __rcu *rcu_tracing_ptr = (int __rcu *)&rcu_tracing_datum;

struct rcu_tracing_seen {
	int raised;
	struct kunit_rcu_snap s;
	bool held;
	int *sched, *raw;
};

/* What a tracing handler does: a notrace sched reader and raw lookups. */
static void rcu_tracing_handler(void *arg)
{
	struct rcu_tracing_seen *t = arg;

	rcu_read_lock_sched_notrace();
	kunit_rcu_snap(&t->s);
	t->held = rcu_read_lock_sched_held();
	t->sched = rcu_dereference_sched(rcu_tracing_ptr);
	t->raw = rcu_dereference_raw_check(rcu_tracing_ptr);
	rcu_read_unlock_sched_notrace();
}

static void rcu_tracing_raise(void *arg)
{
	struct rcu_tracing_seen *t = arg;

	/* Depth 1: int3 on x86 (not the NMI), BRK on arm64. */
	t->raised = kunit_rcu_raise(kunit_rcu_nmi_like(1), rcu_tracing_handler, t);
}

static void rcu_tracing_check(struct kunit *test, struct rcu_tracing_seen *t, const char *from)
{
	KUNIT_ASSERT_EQ_MSG(test, t->raised, 0, "breakpoint from %s not taken", from);
	KUNIT_EXPECT_TRUE_MSG(test, t->s.watching, "RCU not watching in the handler (%s)", from);
	KUNIT_EXPECT_TRUE_MSG(test, t->held, "sched reader not held in the handler (%s)", from);
	KUNIT_EXPECT_PTR_EQ_MSG(test, t->sched, &rcu_tracing_datum, "from %s", from);
	KUNIT_EXPECT_PTR_EQ_MSG(test, t->raw, &rcu_tracing_datum, "from %s", from);
	KUNIT_EXPECT_GE_MSG(test, t->s.nmi_nesting, 1, "handler not counted as NMI-like (%s)",
			    from);
}

/*
 * Covers: TR-1
 *
 * In the breakpoint handler kprobes use, taken from task context and
 * from an extended quiescent state, rcu_read_lock_sched_notrace(),
 * rcu_dereference_sched() and rcu_dereference_raw_check() work: RCU
 * watches, lockdep sees the sched reader, the pointer reads back, and
 * no splat is printed (the run fails on any).
 */
static void rcu_tracing_accessors_in_handler(struct kunit *test)
{
	struct rcu_tracing_seen *task = kunit_kzalloc(test, sizeof(*task), GFP_KERNEL);
	struct rcu_tracing_seen *eqs = kunit_kzalloc(test, sizeof(*eqs), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);

	KUNIT_ASSERT_NOT_NULL(test, task);
	KUNIT_ASSERT_NOT_NULL(test, eqs);
	KUNIT_ASSERT_EQ(test, kunit_rcu_entries_arm(test), 0);

	preempt_disable();
	rcu_tracing_raise(task);
	preempt_enable();
	rcu_tracing_check(test, task, "task context");

	KUNIT_ASSERT_TRUE(test, kunit_rcu_run_on_cpu(test, cpu, rcu_tracing_raise, eqs, true,
						     KUNIT_RCU_PROMPT_MS));
	rcu_tracing_check(test, eqs, "an extended quiescent state");
}

static struct kunit_case rcu_tracing_cases[] = {
	KUNIT_CASE(rcu_tracing_accessors_in_handler),
	{}
};

static struct kunit_suite rcu_tracing_suite = {
	.name = "rcu_tracing",
	.test_cases = rcu_tracing_cases,
};

kunit_test_suite(rcu_tracing_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's tracing requirements");
MODULE_LICENSE("GPL");
