// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the "Scheduler and RCU" requirements of "RCU
 * requirements, part 3": readers whose end meets scheduler locks, readers
 * preempted by other tasks, and the grace-period kthread.  The readers
 * run on a CPU of their own (lib/kunit-rcu/), the test thread asserts
 * afterwards.
 */

#include <kunit/test.h>
#include <linux/irq_work.h>
#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/cputime.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <trace/events/irq.h>
#include <trace/events/rcu.h>

#include "rcu.h"
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
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_scheduler_unlock *u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	struct kunit_rcu_work *w;

	KUNIT_ASSERT_NOT_NULL(test, u);
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

/* PERF-5: a reader preempted by a SCHED_FIFO task on its CPU. */
struct rcu_scheduler_preempted {
	atomic_t in_reader;		/* the reader began */
	atomic_t release;		/* the test ends the reader */
	atomic_t preempting;		/* the preempter holds the CPU */
	atomic_t release_cpu;		/* the test lets the preempter go */
	struct task_struct *reader;
	unsigned long nivcsw_in, nivcsw_out;
	bool released;			/* the reader ended by @release, not its bound */
	bool inside_when_preempted;	/* the reader was in its critical section */
	bool blocked;			/* RCU had queued it as a blocked reader */
};

/* Inside the reader: says so, stays until released, counts the preemptions meanwhile. */
static void rcu_scheduler_preempted_wait(struct rcu_scheduler_preempted *p)
{
	p->nivcsw_in = current->nivcsw;
	atomic_set_release(&p->in_reader, 1);
	p->released = kunit_rcu_spin_flag(&p->release, KUNIT_RCU_GP_TIMEOUT_MS);
	p->nivcsw_out = current->nivcsw;
	atomic_set(&p->in_reader, 0);
}

static void rcu_scheduler_preempted_reader(void *arg)
{
	struct rcu_scheduler_preempted *p = arg;

	WRITE_ONCE(p->reader, current);
	rcu_read_lock();
	rcu_scheduler_preempted_wait(p);
	rcu_read_unlock();
}

/* Runs on the reader's CPU: as soon as it runs at all, the reader is preempted. */
static void rcu_scheduler_preempter(void *arg)
{
	struct rcu_scheduler_preempted *p = arg;

	sched_set_fifo(current);
	p->inside_when_preempted = atomic_read(&p->in_reader);
#ifdef CONFIG_PREEMPT_RCU
	p->blocked = READ_ONCE(p->reader->rcu_read_unlock_special.b.blocked);
#endif
	atomic_set_release(&p->preempting, 1);
	kunit_rcu_spin_flag(&p->release_cpu, KUNIT_RCU_GP_TIMEOUT_MS);
	sched_set_normal(current, 0);
}

/*
 * Starts @reader on @cpu and, once it runs, rcu_scheduler_preempter() on
 * the same CPU.  False, with the case failed and both released, if either
 * did not run within KUNIT_RCU_PROMPT_MS.
 */
static bool rcu_scheduler_preempt(struct kunit *test, int cpu, void (*reader)(void *arg),
				  struct rcu_scheduler_preempted *p,
				  struct kunit_rcu_work **rw, struct kunit_rcu_work **pw)
{
	*rw = kunit_rcu_start_on_cpu(test, cpu, reader, p, false);
	if (!*rw)
		return false;
	if (!kunit_rcu_wait_flag(&p->in_reader, KUNIT_RCU_PROMPT_MS)) {
		atomic_set(&p->release, 1);
		kunit_rcu_finish(test, *rw, KUNIT_RCU_GP_TIMEOUT_MS);
		KUNIT_FAIL(test, "the reader did not begin within %d ms", KUNIT_RCU_PROMPT_MS);
		return false;
	}
	*pw = kunit_rcu_start_on_cpu(test, cpu, rcu_scheduler_preempter, p, false);
	if (!*pw || !kunit_rcu_wait_flag(&p->preempting, KUNIT_RCU_PROMPT_MS)) {
		atomic_set(&p->release_cpu, 1);
		atomic_set(&p->release, 1);
		if (*pw)
			kunit_rcu_finish(test, *pw, KUNIT_RCU_GP_TIMEOUT_MS);
		kunit_rcu_finish(test, *rw, KUNIT_RCU_GP_TIMEOUT_MS);
		KUNIT_FAIL(test, "the preempter did not run on CPU %d within %d ms", cpu,
			   KUNIT_RCU_PROMPT_MS);
		return false;
	}
	return true;
}

/*
 * Covers: PERF-5
 * May skip: nopreempt
 *
 * With preemptible RCU a reader can be preempted: a SCHED_FIFO task takes
 * the reader's CPU while the reader is inside its critical section (an
 * involuntary context switch of the reader).  While it stays preempted, a
 * normal and an expedited grace period started then do not complete
 * (RCU has queued it as a blocked reader; the CPU itself is quiescent);
 * they still do not once it runs again inside the reader, and complete
 * after its rcu_read_unlock(), each proved on its own sequence.  Normal
 * grace periods are not expedited here (kunit_rcu_unexpedite(): built-in
 * suites run while boot expedites them).  Priority boosting needs
 * RCU_BOOST (RCU_EXPERT), not configured.
 */
static void rcu_scheduler_preempted_reader_blocks_gp(struct kunit *test)
{
	struct rcu_scheduler_preempted *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	bool held_norm, held_exp, held_running;
	struct kunit_rcu_work *rw, *pw;
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_seq seq;

	KUNIT_ASSERT_NOT_NULL(test, p);
	if (!IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "PREEMPT_RCU=n: a reader cannot be preempted");
	if (!rcu_scheduler_preempt(test, cpu, rcu_scheduler_preempted_reader, p, &rw, &pw))
		return;

	kunit_rcu_unexpedite(test);
	kunit_rcu_seq_snap(&seq);
	start_poll_synchronize_rcu();
	start_poll_synchronize_rcu_expedited();
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	held_norm = !kunit_rcu_normal_done(&seq);
	held_exp = !kunit_rcu_exp_done(&seq);
	atomic_set_release(&p->release_cpu, 1);
	kunit_rcu_finish(test, pw, KUNIT_RCU_GP_TIMEOUT_MS);
	/* The reader runs again, still inside its critical section. */
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS / 4);
	held_running = !kunit_rcu_normal_done(&seq);
	atomic_set_release(&p->release, 1);
	kunit_rcu_finish(test, rw, KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_normal_done, &seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the normal grace period did not end within %d ms of the reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_exp_done, &seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the expedited grace period did not end within %d ms of the reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);

	KUNIT_EXPECT_TRUE_MSG(test, p->inside_when_preempted,
			      "the preempter ran when the reader was not in its critical section");
	KUNIT_EXPECT_GT_MSG(test, p->nivcsw_out, p->nivcsw_in,
			    "the reader was never preempted inside its critical section");
	KUNIT_EXPECT_TRUE_MSG(test, p->blocked,
			      "the preempted reader was not queued as a blocked reader");
	KUNIT_EXPECT_TRUE_MSG(test, held_norm,
			      "a normal grace period ended while the reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_exp,
			      "an expedited grace period ended while the reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_running,
			      "a normal grace period ended before the resumed reader unlocked");
	KUNIT_EXPECT_TRUE_MSG(test, p->released, "the reader ended by its bound, not released");
}

/* SCH-2: a blocked reader that ends under a scheduler lock with interrupts disabled. */
struct rcu_scheduler_blocked_unlock {
	struct rcu_scheduler_preempted p;
	struct kunit_rcu_seq seq;
	bool normal_in_region;	/* a normal grace period ended inside the locked region */
	bool exp_in_region;	/* an expedited one did */
};

static bool rcu_scheduler_both_done(void *seq)
{
	return kunit_rcu_normal_done(seq) && kunit_rcu_exp_done(seq);
}

static void rcu_scheduler_blocked_reader(void *arg)
{
	struct rcu_scheduler_blocked_unlock *b = arg;
	struct rcu_scheduler_preempted *p = &b->p;
	unsigned long flags;

	WRITE_ONCE(p->reader, current);
	rcu_read_lock();
	rcu_scheduler_preempted_wait(p);
	raw_spin_lock_irqsave(&current->pi_lock, flags);
	rcu_read_unlock();
	kunit_rcu_spin_until(rcu_scheduler_both_done, &b->seq, KUNIT_RCU_HOLD_MS);
	b->normal_in_region = kunit_rcu_normal_done(&b->seq);
	b->exp_in_region = kunit_rcu_exp_done(&b->seq);
	raw_spin_unlock_irqrestore(&current->pi_lock, flags);
}

/*
 * Covers: SCH-2
 * May skip: nopreempt
 *
 * A reader that was preempted inside its critical section (so RCU queued
 * it on its leaf rcu_node as a blocked reader) holds a normal and an
 * expedited grace period started meanwhile, runs again and ends while
 * its task holds a scheduler lock (its ->pi_lock) with interrupts
 * disabled.  That rcu_read_unlock() must not report the quiescent state
 * from inside the locked region (waking the grace-period kthread there
 * is the deadlock the article describes; lockdep's report fails the run):
 * neither grace period ends inside the region, held for
 * KUNIT_RCU_HOLD_MS, and both end, each on its own sequence, once it is
 * left.  Without preemptible RCU no reader is ever blocked: skipped
 * (rcu_scheduler_lock_across_unlock covers that kernel).
 */
static void rcu_scheduler_blocked_reader_locked_unlock(struct kunit *test)
{
	struct rcu_scheduler_blocked_unlock *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *rw, *pw;
	bool held_norm, held_exp;

	KUNIT_ASSERT_NOT_NULL(test, b);
	if (!IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "PREEMPT_RCU=n: a reader cannot be preempted");
	if (!rcu_scheduler_preempt(test, cpu, rcu_scheduler_blocked_reader, &b->p, &rw, &pw))
		return;

	kunit_rcu_unexpedite(test);
	kunit_rcu_seq_snap(&b->seq);
	start_poll_synchronize_rcu();
	start_poll_synchronize_rcu_expedited();
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS / 2);
	held_norm = !kunit_rcu_normal_done(&b->seq);
	held_exp = !kunit_rcu_exp_done(&b->seq);
	atomic_set_release(&b->p.release_cpu, 1);
	kunit_rcu_finish(test, pw, KUNIT_RCU_GP_TIMEOUT_MS);
	atomic_set_release(&b->p.release, 1);
	kunit_rcu_finish(test, rw, KUNIT_RCU_GP_TIMEOUT_MS);

	KUNIT_EXPECT_TRUE_MSG(test, b->p.blocked,
			      "the preempted reader was not queued as a blocked reader");
	KUNIT_EXPECT_GT_MSG(test, b->p.nivcsw_out, b->p.nivcsw_in,
			    "the reader was never preempted inside its critical section");
	KUNIT_EXPECT_TRUE_MSG(test, held_norm,
			      "a normal grace period ended while the reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_exp,
			      "an expedited grace period ended while the reader was preempted");
	KUNIT_EXPECT_FALSE_MSG(test, b->normal_in_region,
			       "a normal grace period ended while the scheduler lock was held");
	KUNIT_EXPECT_FALSE_MSG(test, b->exp_in_region,
			       "an expedited grace period ended while the scheduler lock was held");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_normal_done, &b->seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the normal grace period did not end within %d ms of the region",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_exp_done, &b->seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the expedited grace period did not end within %d ms of the region",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, b->p.released, "the reader ended by its bound, not released");
}

#ifdef CONFIG_RCU_TRACE
/* PERF-6: who starts and ends grace periods, seen from the rcu_grace_period tracepoint. */
struct rcu_scheduler_gp_events {
	atomic_t starts, ends;
	atomic_t foreign;		/* events not from the GP kthread's context */
	struct task_struct *task;	/* the task of the first "start" */
	char name[TASK_COMM_LEN];	/* ... its name */
	char flavor[TASK_COMM_LEN];	/* rcu_state.name, as traced */
};

static struct rcu_scheduler_gp_events *rcu_scheduler_gp_events;

static void rcu_scheduler_probe_gp(void *data, const char *rcuname, unsigned long gp_seq,
				   const char *gpevent)
{
	struct rcu_scheduler_gp_events *ev = READ_ONCE(rcu_scheduler_gp_events);
	bool start = !strcmp(gpevent, "start");

	if (!ev || (!start && strcmp(gpevent, "end")))
		return;
	if (start && atomic_inc_return(&ev->starts) == 1) {
		ev->task = current;
		strscpy(ev->name, current->comm, sizeof(ev->name));
		strscpy(ev->flavor, rcuname, sizeof(ev->flavor));
	} else if (!start) {
		atomic_inc(&ev->ends);
	}
	if (!in_task() || !(current->flags & PF_KTHREAD) ||
	    (READ_ONCE(ev->task) && current != READ_ONCE(ev->task)))
		atomic_inc(&ev->foreign);
}
#endif /* CONFIG_RCU_TRACE */

/*
 * Covers: PERF-6
 *
 * A normal synchronize_rcu() (not expedited: rcu_unexpedite_gp()) is
 * carried out by the grace-period kthread: every grace-period start and
 * end traced meanwhile (rcu_grace_period "start"/"end") comes from one
 * kthread, in task context, named after the RCU flavor, not from the
 * caller; at least one grace period started and ended.
 */
static void rcu_scheduler_gp_kthread_drives(struct kunit *test)
{
#ifdef CONFIG_RCU_TRACE
	struct rcu_scheduler_gp_events *ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	WRITE_ONCE(rcu_scheduler_gp_events, ev);
	ret = register_trace_rcu_grace_period(rcu_scheduler_probe_gp, NULL);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "cannot hook the rcu_grace_period tracepoint");
	rcu_unexpedite_gp();
	synchronize_rcu();
	synchronize_rcu();
	rcu_expedite_gp();
	unregister_trace_rcu_grace_period(rcu_scheduler_probe_gp, NULL);
	tracepoint_synchronize_unregister();
	WRITE_ONCE(rcu_scheduler_gp_events, NULL);

	KUNIT_EXPECT_GE_MSG(test, atomic_read(&ev->starts), 1,
			    "two normal synchronize_rcu() started no grace period");
	KUNIT_EXPECT_GE_MSG(test, atomic_read(&ev->ends), 1,
			    "two normal synchronize_rcu() ended no grace period");
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&ev->foreign), 0,
			    "grace periods started or ended outside the kthread that started the first");
	if (!atomic_read(&ev->starts))
		return;
	KUNIT_EXPECT_PTR_NE(test, ev->task, current);
	KUNIT_EXPECT_STREQ_MSG(test, ev->name, ev->flavor,
			       "the grace-period kthread is named after its flavor");
#else
	kunit_skip(test, "needs CONFIG_RCU_TRACE for the rcu_grace_period tracepoint");
#endif
}

/* SCH-3: ping-pong pairs on every CPU while grace periods run back to back. */
#define RCU_SCHEDULER_LOAD_MS		2000
#define RCU_SCHEDULER_KTHREAD_PERCENT	7

struct rcu_scheduler_pair {
	struct completion ping, pong;
	atomic_t *stop;
	unsigned long switches;		/* round trips, two context switches each */
};

static void rcu_scheduler_ping(void *arg)
{
	struct rcu_scheduler_pair *p = arg;

	while (!atomic_read(p->stop)) {
		complete(&p->pong);
		if (wait_for_completion_timeout(&p->ping, HZ / 10))
			p->switches++;
	}
	complete(&p->pong);
}

static void rcu_scheduler_pong(void *arg)
{
	struct rcu_scheduler_pair *p = arg;

	while (!atomic_read(p->stop))
		if (wait_for_completion_timeout(&p->pong, HZ / 10))
			complete(&p->ping);
}

/*
 * RCU's softirq handler time (RCU_SOFTIRQ, in whatever task it runs:
 * interrupted code or ksoftirqd), from the softirq tracepoints.
 */
static DEFINE_PER_CPU(u64, rcu_scheduler_si_start);
static atomic64_t rcu_scheduler_si_ns;

static void rcu_scheduler_si_entry(void *data, unsigned int vec_nr)
{
	if (vec_nr == RCU_SOFTIRQ)
		__this_cpu_write(rcu_scheduler_si_start, local_clock());
}

static void rcu_scheduler_si_exit(void *data, unsigned int vec_nr)
{
	u64 t0 = __this_cpu_read(rcu_scheduler_si_start);

	if (vec_nr != RCU_SOFTIRQ || !t0)
		return;
	atomic64_add(local_clock() - t0, &rcu_scheduler_si_ns);
	__this_cpu_write(rcu_scheduler_si_start, 0);
}

static int rcu_scheduler_si_hook(void)
{
	int ret;

	atomic64_set(&rcu_scheduler_si_ns, 0);
	ret = register_trace_softirq_entry(rcu_scheduler_si_entry, NULL);
	if (ret)
		return ret;
	ret = register_trace_softirq_exit(rcu_scheduler_si_exit, NULL);
	if (ret) {
		unregister_trace_softirq_entry(rcu_scheduler_si_entry, NULL);
		tracepoint_synchronize_unregister();
	}
	return ret;
}

static u64 rcu_scheduler_si_unhook(void)
{
	unregister_trace_softirq_entry(rcu_scheduler_si_entry, NULL);
	unregister_trace_softirq_exit(rcu_scheduler_si_exit, NULL);
	tracepoint_synchronize_unregister();
	return atomic64_read(&rcu_scheduler_si_ns);
}

/* Adds the CPU time of RCU kthread @t (rcu_preempt or rcu_sched, rcu_exp_*, ...) to *@ns. */
static bool rcu_scheduler_add_runtime(struct task_struct *t, void *ns)
{
	*(u64 *)ns += task_sched_runtime(t);
	return true;
}

/*
 * Covers: SCH-3
 *
 * A context-switch-heavy load (a pair of kthreads handing the CPU to each
 * other through completions, on every online CPU) runs for
 * RCU_SCHEDULER_LOAD_MS while the test thread runs normal grace periods
 * back to back.  The RCU kthreads and RCU's softirq handler (RCU_SOFTIRQ,
 * in any task, ksoftirqd included) together use less than
 * RCU_SCHEDULER_KTHREAD_PERCENT % of the CPU time of that window (the
 * bound; the measured shares are printed), the load really switched, and
 * grace periods completed under it.  The bound is for RCU's default
 * softirq mode: with rcutree.use_softirq=0 the rcuc kthreads take over
 * RCU's softirq work (callback invocation among it), so the case skips.
 *
 * May skip: ghost
 */
static void rcu_scheduler_kthreads_under_load(struct kunit *test)
{
	struct rcu_scheduler_pair *pairs;
	struct kunit_rcu_work **w;
	int cpu, n = 0, i, ncpus = num_online_cpus();
	unsigned long switches = 0, gps = 0;
	u64 start, end, rcu0 = 0, rcu1 = 0, avail, si, used;
	atomic_t stop = ATOMIC_INIT(0);

	if (kunit_rcu_kthreads("rcuc/", NULL, NULL))
		kunit_skip(test, "rcutree.use_softirq=0: rcuc kthreads do RCU's softirq work");
	pairs = kunit_kcalloc(test, nr_cpu_ids, sizeof(*pairs), GFP_KERNEL);
	w = kunit_kcalloc(test, 2 * nr_cpu_ids, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pairs);
	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_EQ_MSG(test, rcu_scheduler_si_hook(), 0,
			    "cannot hook the softirq tracepoints");
	kunit_rcu_kthreads("rcu", rcu_scheduler_add_runtime, &rcu0);
	start = ktime_get_ns();
	for_each_online_cpu(cpu) {
		struct rcu_scheduler_pair *p = &pairs[cpu];

		init_completion(&p->ping);
		init_completion(&p->pong);
		p->stop = &stop;
		w[n] = kunit_rcu_start_on_cpu(test, cpu, rcu_scheduler_ping, p, false);
		if (w[n])
			n++;
		w[n] = kunit_rcu_start_on_cpu(test, cpu, rcu_scheduler_pong, p, false);
		if (w[n])
			n++;
	}
	kunit_rcu_unexpedite(test);
	while (ktime_get_ns() - start < RCU_SCHEDULER_LOAD_MS * NSEC_PER_MSEC) {
		synchronize_rcu();
		gps++;
	}
	end = ktime_get_ns();
	kunit_rcu_kthreads("rcu", rcu_scheduler_add_runtime, &rcu1);
	si = rcu_scheduler_si_unhook();
	used = rcu1 - rcu0 + si;
	atomic_set(&stop, 1);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE(test, kunit_rcu_finish(test, w[i], KUNIT_RCU_PROMPT_MS));
	for_each_online_cpu(cpu)
		switches += pairs[cpu].switches;

	avail = (end - start) * ncpus;
	kunit_info(test, "%lu round trips, %lu grace periods, RCU kthreads %llu us + RCU softirq %llu us of %llu us (%llu.%02llu %%)\n",
		   switches, gps, div_u64(rcu1 - rcu0, NSEC_PER_USEC),
		   div_u64(si, NSEC_PER_USEC), div_u64(avail, NSEC_PER_USEC),
		   div64_u64(used * 100, avail), div64_u64(used * 10000, avail) % 100);
	KUNIT_EXPECT_EQ_MSG(test, n, 2 * ncpus, "the load did not start on every CPU");
	KUNIT_EXPECT_GE_MSG(test, switches, 100UL * ncpus, "the load hardly switched");
	KUNIT_EXPECT_GE_MSG(test, gps, 2UL, "no grace period completed under the load");
	KUNIT_EXPECT_LT_MSG(test, used * 100, avail * RCU_SCHEDULER_KTHREAD_PERCENT,
			    "the RCU kthreads and softirq used more than %d %% of the CPU time",
			    RCU_SCHEDULER_KTHREAD_PERCENT);
}

/*
 * TASKS-1, TASKS-3: Tasks RCU.  Its readers are implicit: a task is one
 * from any point where it does not voluntarily switch until it does.  The
 * callbacks are static: a broken kernel that runs them late must not find
 * them freed.
 */
#define RCU_SCHEDULER_TASKS_CBS		4
/*
 * How long the reader stays preempted: a grace period that does not wait
 * for it has time to end, and the SCHED_FIFO preempter stays below the
 * RT throttling limit (950 ms of each second).
 */
#define RCU_SCHEDULER_TASKS_HOLD_MS	500

static struct {
	struct rcu_head rh[RCU_SCHEDULER_TASKS_CBS];
	atomic_t ran[RCU_SCHEDULER_TASKS_CBS];
	atomic_t synced;
	atomic_t barriered;
	int ran_at_barrier;	/* callbacks run when rcu_barrier_tasks() returned */
} rcu_scheduler_tasks;

static void rcu_scheduler_tasks_cb(struct rcu_head *rh)
{
	atomic_inc(&rcu_scheduler_tasks.ran[rh - rcu_scheduler_tasks.rh]);
}

static int rcu_scheduler_tasks_ran(void)
{
	int i, n = 0;

	for (i = 0; i < RCU_SCHEDULER_TASKS_CBS; i++)
		n += atomic_read(&rcu_scheduler_tasks.ran[i]);
	return n;
}

static void rcu_scheduler_tasks_sync(void *unused)
{
	synchronize_rcu_tasks();
	atomic_set_release(&rcu_scheduler_tasks.synced, 1);
}

static void rcu_scheduler_tasks_barrier(void *unused)
{
	if (IS_ENABLED(CONFIG_TASKS_RCU))	/* no definition without it */
		rcu_barrier_tasks();
	rcu_scheduler_tasks.ran_at_barrier = rcu_scheduler_tasks_ran();
	atomic_set_release(&rcu_scheduler_tasks.barriered, 1);
}

/* An implicit Tasks RCU reader: spins until released, never sleeping. */
static void rcu_scheduler_tasks_reader(void *arg)
{
	struct rcu_scheduler_preempted *p = arg;

	WRITE_ONCE(p->reader, current);
	p->nivcsw_in = current->nivcsw;
	atomic_set_release(&p->in_reader, 1);
	p->released = kunit_rcu_spin_flag(&p->release, KUNIT_RCU_GP_TIMEOUT_MS);
	p->nivcsw_out = current->nivcsw;
	atomic_set(&p->in_reader, 0);
}

/*
 * Covers: TASKS-1, TASKS-3
 * May skip: nopreempt
 *
 * A task that has not voluntarily switched since a Tasks RCU grace period
 * began, preempted by a SCHED_FIFO task on its CPU: while it stays
 * preempted, and after it runs again until it sleeps, neither
 * synchronize_rcu_tasks() (in a kthread on another CPU) returns nor any
 * call_rcu_tasks() callback queued then runs, nor rcu_barrier_tasks()
 * (in another kthread, called while the callbacks wait for that grace
 * period) returns.  Once the reader has slept, synchronize_rcu_tasks()
 * and rcu_barrier_tasks() return within a bound, and when the barrier
 * returned every callback had run, exactly once.  The Rude and Trace
 * flavors are not configured in these kernels.
 */
static void rcu_scheduler_tasks_wait_for_preempted(struct kunit *test)
{
	struct rcu_scheduler_preempted *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	bool held_cbs, held_sync, held_running, held_barrier;
	struct kunit_rcu_work *rw, *pw, *sw, *bw;
	int cpu = kunit_rcu_target_cpu(test);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	if (!IS_ENABLED(CONFIG_TASKS_RCU) || !IS_ENABLED(CONFIG_PREEMPTION))
		kunit_skip(test, "needs TASKS_RCU and PREEMPTION (a preempted kernel task)");
	memset(&rcu_scheduler_tasks, 0, sizeof(rcu_scheduler_tasks));
	if (!rcu_scheduler_preempt(test, cpu, rcu_scheduler_tasks_reader, p, &rw, &pw))
		return;

	for (i = 0; i < RCU_SCHEDULER_TASKS_CBS; i++)
		call_rcu_tasks(&rcu_scheduler_tasks.rh[i], rcu_scheduler_tasks_cb);
	sw = kunit_rcu_start_on_cpu(test, kunit_rcu_other_cpu(cpu), rcu_scheduler_tasks_sync,
				    NULL, false);
	bw = kunit_rcu_start_on_cpu(test, kunit_rcu_other_cpu(cpu), rcu_scheduler_tasks_barrier,
				    NULL, false);
	kunit_rcu_delay_ms(RCU_SCHEDULER_TASKS_HOLD_MS);
	held_cbs = !rcu_scheduler_tasks_ran();
	held_sync = !atomic_read(&rcu_scheduler_tasks.synced);
	held_barrier = !atomic_read(&rcu_scheduler_tasks.barriered);
	atomic_set_release(&p->release_cpu, 1);
	kunit_rcu_finish(test, pw, KUNIT_RCU_GP_TIMEOUT_MS);
	/* The reader runs again, still without a voluntary switch. */
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	held_running = !rcu_scheduler_tasks_ran() && !atomic_read(&rcu_scheduler_tasks.synced);
	atomic_set_release(&p->release, 1);
	kunit_rcu_finish(test, rw, KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, sw && kunit_rcu_finish(test, sw, KUNIT_RCU_GP_TIMEOUT_MS),
			      "synchronize_rcu_tasks() did not return within %d ms of the reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, bw && kunit_rcu_finish(test, bw, KUNIT_RCU_GP_TIMEOUT_MS),
			      "rcu_barrier_tasks() did not return within %d ms of the reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_EQ_MSG(test, rcu_scheduler_tasks.ran_at_barrier, RCU_SCHEDULER_TASKS_CBS,
			    "call_rcu_tasks() callbacks run when rcu_barrier_tasks() returned");
	for (i = 0; i < RCU_SCHEDULER_TASKS_CBS; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rcu_scheduler_tasks.ran[i]), 1,
				    "call_rcu_tasks() callback %d after rcu_barrier_tasks(): times run",
				    i);

	KUNIT_EXPECT_TRUE_MSG(test, p->inside_when_preempted,
			      "the preempter ran when the reader was not running");
	KUNIT_EXPECT_GT_MSG(test, p->nivcsw_out, p->nivcsw_in,
			    "the reader was never preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_cbs,
			      "a call_rcu_tasks() callback ran while a reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_sync,
			      "synchronize_rcu_tasks() returned while a reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_barrier,
			      "rcu_barrier_tasks() returned while its callbacks waited for a reader");
	KUNIT_EXPECT_TRUE_MSG(test, held_running,
			      "Tasks RCU ended its grace period before the resumed reader slept");
	KUNIT_EXPECT_TRUE_MSG(test, p->released, "the reader ended by its bound, not released");
}

/* How long the sleeper sleeps at most: longer than the wait for a Tasks grace period. */
#define RCU_SCHEDULER_SLEEP_MS		(KUNIT_RCU_GP_TIMEOUT_MS + KUNIT_RCU_PROMPT_MS)

/**
 * struct rcu_scheduler_sleeper - a task in one long voluntary sleep
 * @task: the sleeping task
 * @asleep: it is about to sleep
 * @awake: its sleep ended
 * @wake: the test ends the sleep
 * @released: the sleep ended by @wake, not its bound
 */
struct rcu_scheduler_sleeper {
	struct task_struct *task;
	atomic_t asleep;
	atomic_t awake;
	struct completion wake;
	bool released;
};

/* Static: on a broken kernel the grace period may end after the case. */
static struct {
	struct rcu_head rh;
	atomic_t ran;
	atomic_t synced;
} rcu_scheduler_sleeper_gp;

static void rcu_scheduler_sleeper_cb(struct rcu_head *rh)
{
	atomic_set_release(&rcu_scheduler_sleeper_gp.ran, 1);
}

static void rcu_scheduler_sleeper_sync(void *unused)
{
	synchronize_rcu_tasks();
	atomic_set_release(&rcu_scheduler_sleeper_gp.synced, 1);
}

static void rcu_scheduler_tasks_sleeper(void *arg)
{
	struct rcu_scheduler_sleeper *s = arg;

	WRITE_ONCE(s->task, current);
	atomic_set_release(&s->asleep, 1);
	s->released = wait_for_completion_timeout(&s->wake,
						  msecs_to_jiffies(RCU_SCHEDULER_SLEEP_MS));
	atomic_set_release(&s->awake, 1);
}

/*
 * Covers: TASKS-2
 *
 * A voluntary context switch ends a task's implicit Tasks RCU reader: a
 * kthread that went to sleep once (one wait, not woken in between) holds
 * neither synchronize_rcu_tasks() (in a kthread on another CPU) nor a
 * call_rcu_tasks() callback; both complete within a bound while it is
 * still alive and asleep.
 *
 * May skip: nopreempt
 */
static void rcu_scheduler_tasks_sleeper_quiescent(struct kunit *test)
{
	struct rcu_scheduler_sleeper *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	bool slept, synced, cb_ran, awake;
	struct kunit_rcu_work *w, *sw;

	KUNIT_ASSERT_NOT_NULL(test, s);
	if (!IS_ENABLED(CONFIG_TASKS_RCU))
		kunit_skip(test, "needs TASKS_RCU (PREEMPTION, or a selecting option)");
	init_completion(&s->wake);
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_scheduler_tasks_sleeper, s, false);
	KUNIT_ASSERT_NOT_NULL(test, w);
	if (!kunit_rcu_wait_flag(&s->asleep, KUNIT_RCU_PROMPT_MS)) {
		complete(&s->wake);
		kunit_rcu_finish(test, w, RCU_SCHEDULER_SLEEP_MS);
		KUNIT_FAIL(test, "the sleeper did not start within %d ms", KUNIT_RCU_PROMPT_MS);
		return;
	}
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	slept = !task_is_running(READ_ONCE(s->task)) && !atomic_read(&s->awake);

	atomic_set(&rcu_scheduler_sleeper_gp.ran, 0);
	atomic_set(&rcu_scheduler_sleeper_gp.synced, 0);
	call_rcu_tasks(&rcu_scheduler_sleeper_gp.rh, rcu_scheduler_sleeper_cb);
	sw = kunit_rcu_start_on_cpu(test, kunit_rcu_other_cpu(cpu), rcu_scheduler_sleeper_sync,
				    NULL, false);
	synced = kunit_rcu_wait_flag(&rcu_scheduler_sleeper_gp.synced, KUNIT_RCU_GP_TIMEOUT_MS);
	cb_ran = kunit_rcu_wait_flag(&rcu_scheduler_sleeper_gp.ran, KUNIT_RCU_PROMPT_MS);
	awake = atomic_read(&s->awake);
	complete(&s->wake);
	kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS);
	if (synced)
		kunit_rcu_finish(test, sw, KUNIT_RCU_PROMPT_MS);

	KUNIT_EXPECT_TRUE_MSG(test, slept, "the kthread was not asleep before the grace period");
	KUNIT_EXPECT_TRUE_MSG(test, synced && !awake,
			      "synchronize_rcu_tasks() did not return within %d ms while a task slept",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, cb_ran && !awake,
			      "the call_rcu_tasks() callback did not run while a task slept");
	KUNIT_EXPECT_TRUE_MSG(test, s->released, "the sleep ended by its bound, not released");
}

static struct kunit_case rcu_scheduler_cases[] = {
	KUNIT_CASE(rcu_scheduler_irq_reader_in_unlock),
	KUNIT_CASE(rcu_scheduler_lock_across_unlock),
	KUNIT_CASE(rcu_scheduler_preempted_reader_blocks_gp),
	KUNIT_CASE(rcu_scheduler_blocked_reader_locked_unlock),
	KUNIT_CASE(rcu_scheduler_gp_kthread_drives),
	KUNIT_CASE(rcu_scheduler_kthreads_under_load),
	KUNIT_CASE(rcu_scheduler_tasks_wait_for_preempted),
	KUNIT_CASE(rcu_scheduler_tasks_sleeper_quiescent),
	{}
};

static struct kunit_suite rcu_scheduler_suite = {
	.name = "rcu_scheduler",
	.test_cases = rcu_scheduler_cases,
};

kunit_test_suite(rcu_scheduler_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's scheduler requirements");
MODULE_LICENSE("GPL");
