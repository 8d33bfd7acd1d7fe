// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the "Tracing" requirement of "RCU requirements, part
 * 3": the tracing-safe accessors inside the handlers tracers run.  One
 * handler is the breakpoint exception kprobes use (x86 int3, arm64 BRK),
 * raised through lib/kunit-rcu/ from task context and from an extended
 * quiescent state; the other is a function tracer (ftrace) callback,
 * called from preemptible code.  Handlers only record, the test thread
 * asserts.
 */

#include <kunit/test.h>
#include <linux/ftrace.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
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

#ifdef CONFIG_FUNCTION_TRACER
/* What the ftrace callback saw, for one call of rcu_tracing_traced(). */
struct rcu_tracing_probe {
	struct task_struct *task;	/* the task whose call is probed */
	bool in_accessor;		/* inside a tracing-safe accessor */
	int calls;			/* callback runs for rcu_tracing_traced() */
	int recursions;			/* traced calls made by an accessor */
	bool preemptible;		/* the traced code was preemptible */
	unsigned int pc_before, pc_in, pc_after;	/* preempt_count() */
	bool preemptible_in;
	bool held;			/* rcu_read_lock_sched_held() inside */
	int *sched, *raw;
	struct kunit_rcu_hold hold;	/* the reader, held while grace periods run */
};

static struct rcu_tracing_probe *rcu_tracing_probe;

/* The traced function: called from preemptible code in a kthread. */
static noinline void rcu_tracing_traced(void)
{
	barrier();
}

/*
 * A function tracer's callback.  Without FTRACE_OPS_FL_RECURSION ftrace
 * calls it directly, with no recursion protection and with preemption as
 * the traced code left it.  It also runs for rcu_read_lock_sched_held(),
 * which an accessor that checks its reader would call: such a call from
 * inside an accessor is a recursion, counted.  Interrupts are off around
 * the accessors' own entry and exit, so nothing else runs there.  (Not
 * preempt_count_add(): tracing it on every CPU without recursion
 * protection froze about one boot in five, every CPU taking int3 at its
 * call site, seen with gdb on QEMU's gdbstub.)
 */
static notrace void rcu_tracing_callback(unsigned long ip, unsigned long parent_ip,
					 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct rcu_tracing_probe *t = READ_ONCE(rcu_tracing_probe);
	unsigned long flags;

	if (!t || READ_ONCE(t->task) != current || !in_task())
		return;
	if (t->in_accessor) {
		t->recursions++;
		return;
	}
	if (ip - (unsigned long)rcu_tracing_traced >= 16)
		return;
	t->calls++;
	t->preemptible = preemptible();
	t->pc_before = preempt_count();

	local_irq_save(flags);
	t->in_accessor = true;
	rcu_read_lock_sched_notrace();
	t->raw = rcu_dereference_raw_check(rcu_tracing_ptr);
	t->in_accessor = false;
	local_irq_restore(flags);

	t->pc_in = preempt_count();
	t->preemptible_in = preemptible();
	t->held = rcu_read_lock_sched_held();
	t->sched = rcu_dereference_sched(rcu_tracing_ptr);
	kunit_rcu_snap(&t->hold.in);
	kunit_rcu_hold_spin(&t->hold);

	local_irq_save(flags);
	t->in_accessor = true;
	rcu_read_unlock_sched_notrace();
	t->in_accessor = false;
	local_irq_restore(flags);
	t->pc_after = preempt_count();
	kunit_rcu_hold_ended(&t->hold);
}

static struct ftrace_ops rcu_tracing_ops = {
	.func = rcu_tracing_callback,
};

static void rcu_tracing_call_traced(void *arg)
{
	struct rcu_tracing_probe *t = arg;

	WRITE_ONCE(t->task, current);
	rcu_tracing_traced();
}

static void rcu_tracing_unregister(struct kunit_resource *res)
{
	unregister_ftrace_function(&rcu_tracing_ops);
	ftrace_free_filter(&rcu_tracing_ops);
	WRITE_ONCE(rcu_tracing_probe, NULL);
}

/* Also traced: what the accessors would call if they were not notrace. */
static const char * const rcu_tracing_also[] = {
	"rcu_read_lock_sched_held",
};

/* The ftrace callback case's body, with FUNCTION_TRACER. */
static void rcu_tracing_ftrace_reader(struct kunit *test)
{
	struct rcu_tracing_probe *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *w;
	char name[32];
	int i, traced = 0;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ_MSG(test, ftrace_set_filter_ip(&rcu_tracing_ops,
						       (unsigned long)rcu_tracing_traced, 0, 0), 0,
			    "rcu_tracing_traced() has no ftrace call site");
	for (i = 0; i < ARRAY_SIZE(rcu_tracing_also); i++) {
		strscpy(name, rcu_tracing_also[i], sizeof(name));
		if (!ftrace_set_filter(&rcu_tracing_ops, name, strlen(name), 0))
			traced++;
	}
	KUNIT_EXPECT_EQ_MSG(test, traced, (int)ARRAY_SIZE(rcu_tracing_also),
			    "not every function a non-notrace reader calls can be traced");
	WRITE_ONCE(rcu_tracing_probe, t);
	if (register_ftrace_function(&rcu_tracing_ops)) {
		ftrace_free_filter(&rcu_tracing_ops);
		WRITE_ONCE(rcu_tracing_probe, NULL);
		KUNIT_FAIL(test, "register_ftrace_function() failed");
		return;
	}
	if (!kunit_alloc_resource(test, NULL, rcu_tracing_unregister, GFP_KERNEL,
				  &rcu_tracing_ops)) {
		rcu_tracing_unregister(NULL);
		KUNIT_FAIL(test, "no memory to unregister the callback at the end");
		return;
	}

	w = kunit_rcu_start_on_cpu(test, cpu, rcu_tracing_call_traced, t, false);
	KUNIT_ASSERT_NOT_NULL(test, w);
	kunit_rcu_expect_gp_held(test, &t->hold, "a reader in an ftrace callback");
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS));

	KUNIT_ASSERT_EQ_MSG(test, t->calls, 1, "the callback ran %d times for one call",
			    t->calls);
	KUNIT_EXPECT_TRUE_MSG(test, t->preemptible,
			      "the callback ran with preemption already off (count %#x)",
			      t->pc_before);
	KUNIT_EXPECT_EQ_MSG(test, t->pc_in & PREEMPT_MASK, (t->pc_before & PREEMPT_MASK) + 1,
			    "preempt_count() in rcu_read_lock_sched_notrace() was %#x, before %#x",
			    t->pc_in, t->pc_before);
	KUNIT_EXPECT_FALSE_MSG(test, t->preemptible_in, "preemptible inside the reader");
	KUNIT_EXPECT_EQ_MSG(test, t->pc_after, t->pc_before,
			    "rcu_read_unlock_sched_notrace() left preempt_count() at %#x",
			    t->pc_after);
	KUNIT_EXPECT_TRUE_MSG(test, t->held, "sched reader not held in the callback");
	KUNIT_EXPECT_PTR_EQ(test, t->sched, &rcu_tracing_datum);
	KUNIT_EXPECT_PTR_EQ(test, t->raw, &rcu_tracing_datum);
	KUNIT_EXPECT_EQ_MSG(test, t->recursions, 0,
			    "the tracing-safe accessors called traced functions");
	KUNIT_EXPECT_TRUE_MSG(test, t->hold.released, "the reader ended by its bound");
}
#else
static void rcu_tracing_ftrace_reader(struct kunit *test)
{
	kunit_skip(test, "FUNCTION_TRACER=n (CONFIG=nohz turns it on)");
}
#endif /* CONFIG_FUNCTION_TRACER */

/*
 * Covers: TR-1
 * May skip: default, ghost, nopreempt
 *
 * A function tracer's callback (ftrace_ops without recursion protection,
 * so called directly, with preemption enabled as in the traced code) on
 * a function a kthread calls from preemptible code uses
 * rcu_read_lock_sched_notrace(), rcu_dereference_raw_check() and
 * rcu_read_unlock_sched_notrace(): preemption is off inside the reader
 * (preempt_count() one higher, not preemptible) and back after; lockdep
 * sees the sched reader; the pointer reads back; the reader, held there,
 * holds a normal and an expedited grace period, each of which ends once
 * it is released; and no accessor calls rcu_read_lock_sched_held(),
 * which the callback also traces.  No splat.  Needs FUNCTION_TRACER,
 * which only CONFIG=nohz turns on.
 */
static void rcu_tracing_ftrace_callback_reader(struct kunit *test)
{
	rcu_tracing_ftrace_reader(test);
}

static struct kunit_case rcu_tracing_cases[] = {
	KUNIT_CASE(rcu_tracing_accessors_in_handler),
	KUNIT_CASE(rcu_tracing_ftrace_callback_reader),
	{}
};

static struct kunit_suite rcu_tracing_suite = {
	.name = "rcu_tracing",
	.test_cases = rcu_tracing_cases,
};

kunit_test_suite(rcu_tracing_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's tracing requirements");
MODULE_LICENSE("GPL");
