// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the "Scheduler and RCU" requirements of "RCU
 * requirements, part 3": readers whose end meets scheduler locks.
 * The readers run on a CPU of their own (lib/kunit-rcu/), the test
 * thread asserts afterwards.
 */

#include <kunit/test.h>
#include <linux/irq_work.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "kunit_rcu.h"

/* Nesting depth of the reader in the unlock case. */
#define RCU_SCHEDULER_NEST_DEPTH	4

struct rcu_scheduler_irq_reader {
	struct irq_work work;
	atomic_t ran;
	struct rcu_gp_oldstate gp;	/* tracks expedited grace periods too */
	bool special_pending;	/* the outer reader still owed its quiescent state */
	int depth_at_entry, depth_in_reader;
	bool done_in_reader;
};

static void rcu_scheduler_irq_reader_fn(struct irq_work *work)
{
	struct rcu_scheduler_irq_reader *r =
		container_of(work, struct rcu_scheduler_irq_reader, work);

	r->depth_at_entry = kunit_rcu_reader_depth();
#ifdef CONFIG_PREEMPT_RCU
	r->special_pending = READ_ONCE(current->rcu_read_unlock_special.s) != 0;
#endif
	rcu_read_lock();
	r->depth_in_reader = kunit_rcu_reader_depth();
	r->done_in_reader = poll_state_synchronize_rcu_full(&r->gp);
	rcu_read_unlock();
	atomic_set_release(&r->ran, 1);
}

/*
 * Covers: SCH-1
 *
 * 6.1 drops the nesting count to zero first and runs the outermost
 * rcu_read_unlock()'s special processing (rcu_read_unlock_special())
 * after, deferring it when interrupts are disabled.  A reader nested
 * RCU_SCHEDULER_NEST_DEPTH deep is reached by an expedited grace
 * period; the inner unlocks do not end it; the outermost unlock runs
 * with interrupts disabled, and an interrupt taken right after, while
 * the quiescent state is still owed, runs a reader of its own (whose
 * unlock meets the pending special state from hardirq).  That reader
 * counts from zero, the grace period does not end before the outermost
 * unlock nor inside the interrupt's reader, and the owed quiescent
 * state is not lost: the grace period ends after.
 */
static void rcu_scheduler_irq_reader_in_unlock(struct kunit *test)
{
	struct rcu_scheduler_irq_reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int depth_in[RCU_SCHEDULER_NEST_DEPTH + 1], depth_out[RCU_SCHEDULER_NEST_DEPTH + 1];
	bool reached = false, done_nested, done_outer;
	unsigned long flags;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ_MSG(test, kunit_rcu_reader_depth(), 0, "test thread already in a reader");
	r->work = IRQ_WORK_INIT_HARD(rcu_scheduler_irq_reader_fn);

	for (i = 1; i <= RCU_SCHEDULER_NEST_DEPTH; i++) {
		rcu_read_lock();
		depth_in[i] = kunit_rcu_reader_depth();
	}
	start_poll_synchronize_rcu_expedited_full(&r->gp);
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		reached = kunit_rcu_spin_until(kunit_rcu_gp_reached_reader, &r->gp,
					       KUNIT_RCU_PROMPT_MS);
	done_nested = poll_state_synchronize_rcu_full(&r->gp);
	for (i = RCU_SCHEDULER_NEST_DEPTH; i > 1; i--) {
		rcu_read_unlock();
		depth_out[i - 1] = kunit_rcu_reader_depth();
	}
	done_outer = kunit_rcu_spin_until(kunit_rcu_full_done, &r->gp, KUNIT_RCU_HOLD_MS);

	local_irq_save(flags);
	rcu_read_unlock();		/* the outermost: special processing deferred */
	depth_out[0] = kunit_rcu_reader_depth();
	irq_work_queue(&r->work);	/* a self-interrupt, taken at the restore */
	local_irq_restore(flags);
	KUNIT_ASSERT_TRUE_MSG(test, kunit_rcu_wait_flag(&r->ran, KUNIT_RCU_PROMPT_MS),
			      "the interrupt did not run within %d ms", KUNIT_RCU_PROMPT_MS);
	irq_work_sync(&r->work);

	for (i = 1; i <= RCU_SCHEDULER_NEST_DEPTH; i++)
		KUNIT_EXPECT_EQ_MSG(test, depth_in[i], i, "depth after lock number %d", i);
	for (i = 0; i < RCU_SCHEDULER_NEST_DEPTH; i++)
		KUNIT_EXPECT_EQ_MSG(test, depth_out[i], i, "depth after unlock down to %d", i);
	if (IS_ENABLED(CONFIG_PREEMPT_RCU)) {
		KUNIT_EXPECT_TRUE_MSG(test, reached,
				      "the expedited grace period never reached the reader");
		KUNIT_EXPECT_TRUE_MSG(test, r->special_pending,
				      "the interrupt came after the special processing, not during");
	}
	KUNIT_EXPECT_FALSE_MSG(test, done_nested, "grace period ended inside the nested reader");
	KUNIT_EXPECT_FALSE_MSG(test, done_outer,
			       "grace period ended after the inner unlocks, before the outermost");
	KUNIT_EXPECT_EQ(test, r->depth_at_entry, 0);
	KUNIT_EXPECT_EQ(test, r->depth_in_reader, 1);
	KUNIT_EXPECT_FALSE_MSG(test, r->done_in_reader,
			       "grace period ended before the owed quiescent state was reported");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_full_done, &r->gp,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the owed quiescent state was lost: no grace period end within %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
}

struct rcu_scheduler_unlock {
	atomic_t in_reader, cookie_set;
	struct rcu_gp_oldstate gp;	/* tracks expedited grace periods too */
	bool reached;		/* the expedited grace period reached the reader */
	bool done_in_reader;
	bool done_in_region;	/* after the unlock, lock still held */
};

static void rcu_scheduler_unlock_under_pi_lock(void *arg)
{
	struct rcu_scheduler_unlock *u = arg;
	unsigned long flags;

	rcu_read_lock();
	atomic_set_release(&u->in_reader, 1);
	if (kunit_rcu_spin_flag(&u->cookie_set, KUNIT_RCU_PROMPT_MS)) {
		if (IS_ENABLED(CONFIG_PREEMPT_RCU))
			u->reached = kunit_rcu_spin_until(kunit_rcu_gp_reached_reader, &u->gp,
							  KUNIT_RCU_PROMPT_MS);
		else
			kunit_rcu_spin_until(kunit_rcu_full_done, &u->gp, KUNIT_RCU_HOLD_MS);
	}
	u->done_in_reader = poll_state_synchronize_rcu_full(&u->gp);
	/* A scheduler lock, taken with interrupts disabled, held across the end. */
	raw_spin_lock_irqsave(&current->pi_lock, flags);
	rcu_read_unlock();
	u->done_in_region = kunit_rcu_spin_until(kunit_rcu_full_done, &u->gp,
						 KUNIT_RCU_HOLD_MS);
	raw_spin_unlock_irqrestore(&current->pi_lock, flags);
}

/*
 * Covers: SCH-2
 *
 * A reader hit by an expedited grace period (driven from another CPU)
 * ends while its task holds a scheduler lock (its ->pi_lock) with
 * interrupts disabled: the rcu_read_unlock() does not deadlock (nor
 * make lockdep see a possible one: the run fails on a splat), the
 * quiescent state it owes is deferred (the grace period does not end
 * inside the locked region), and it is reported once the region ends
 * (the grace period then completes).  Without preemptible RCU the
 * reader is a preemption-disabled region and the same holds.
 */
static void rcu_scheduler_lock_across_unlock(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu();
	struct rcu_scheduler_unlock *u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	struct kunit_rcu_work *w;

	KUNIT_ASSERT_NOT_NULL(test, u);
	if (cpu < 0)
		kunit_skip(test, "needs a second online CPU");
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_scheduler_unlock_under_pi_lock, u, false);
	if (kunit_rcu_wait_flag(&u->in_reader, KUNIT_RCU_PROMPT_MS)) {
		/* From here: its work must not queue behind the reader. */
		start_poll_synchronize_rcu_expedited_full(&u->gp);
		atomic_set_release(&u->cookie_set, 1);
	}
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, 3 * KUNIT_RCU_PROMPT_MS));
	KUNIT_ASSERT_TRUE_MSG(test, atomic_read(&u->cookie_set), "the reader never began");
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		KUNIT_EXPECT_TRUE_MSG(test, u->reached,
				      "the expedited grace period never reached the reader");
	KUNIT_EXPECT_FALSE_MSG(test, u->done_in_reader, "grace period ended inside the reader");
	KUNIT_EXPECT_FALSE_MSG(test, u->done_in_region,
			       "grace period ended while the lock was still held");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_full_done, &u->gp,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "deferred quiescent state not reported within %d ms of the region",
			      KUNIT_RCU_GP_TIMEOUT_MS);
}

static struct kunit_case rcu_scheduler_cases[] = {
	KUNIT_CASE(rcu_scheduler_irq_reader_in_unlock),
	KUNIT_CASE(rcu_scheduler_lock_across_unlock),
	{}
};

static struct kunit_suite rcu_scheduler_suite = {
	.name = "rcu_scheduler",
	.test_cases = rcu_scheduler_cases,
};

kunit_test_suite(rcu_scheduler_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's scheduler requirements");
MODULE_LICENSE("GPL");
