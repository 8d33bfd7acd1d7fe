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
#include <linux/rcupdate_trace.h>
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

/*
 * Bound on a grace period reaching a reader: a normal one asks the reader
 * for a quiescent state from the scheduling-clock interrupt only once it
 * is a second old.
 */
#define RCU_SCHEDULER_REACH_MS		3000

/**
 * struct rcu_scheduler_path - the grace period a case drives
 * @name: the parameter's description
 * @expedited: an expedited grace period, else a normal one (expediting off)
 */
struct rcu_scheduler_path {
	const char *name;
	bool expedited;
};

static const struct rcu_scheduler_path rcu_scheduler_paths[] = {
	{ "normal grace period", false },
	{ "expedited grace period", true },
};

static void rcu_scheduler_path_desc(const struct rcu_scheduler_path *path, char *desc)
{
	strscpy(desc, path->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rcu_scheduler_path, rcu_scheduler_paths, rcu_scheduler_path_desc);

/* A grace period of one path and the sequence values it ends at. */
struct rcu_scheduler_gp {
	bool expedited;
	struct kunit_rcu_seq seq;
};

/*
 * In the test thread, before any reader: a grace period of the case's
 * path (@expedited, else its parameter), a normal one with boot-time
 * expediting off for the rest of the case.
 */
static void rcu_scheduler_gp_prepare(struct kunit *test, struct rcu_scheduler_gp *gp,
				     bool expedited)
{
	gp->expedited = expedited;
	if (!expedited)
		kunit_rcu_unexpedite(test);
}

/* Starts the grace period; legal inside a reader. */
static void rcu_scheduler_gp_start(struct rcu_scheduler_gp *gp)
{
	kunit_rcu_seq_snap(&gp->seq);
	if (gp->expedited)
		kunit_rcu_start_exp();
	else
		start_poll_synchronize_rcu();
}

/* kunit_rcu_*_until() condition: the grace period ended, on its own sequence. */
static bool rcu_scheduler_gp_done(void *gp)
{
	struct rcu_scheduler_gp *g = gp;

	return g->expedited ? kunit_rcu_exp_done(&g->seq) : kunit_rcu_normal_done(&g->seq);
}

/* The sequence of @gp's kind now: rcu_scheduler_gp_current()'s @since. */
static unsigned long rcu_scheduler_gp_seq(struct rcu_scheduler_gp *gp)
{
	return gp->expedited ? rcu_exp_batches_completed() : rcu_get_gp_seq();
}

/*
 * Aims @gp at the grace period of its kind in progress now, if one is and
 * it started after @since (rcu_scheduler_gp_seq() taken inside the
 * reader), instead of the first one to start after rcu_scheduler_gp_start().
 * A grace period that started after the reader began waits for it, on the
 * CPU or on ->blkd_tasks once preempted.  One in progress since before the
 * reader began may not: its CPU may have reported for it already (from
 * idle, through the force-quiescent-state scan).  Return: whether a grace
 * period of the kind is in progress.
 */
static bool rcu_scheduler_gp_current(struct rcu_scheduler_gp *gp, unsigned long since)
{
	unsigned long cur = rcu_scheduler_gp_seq(gp);

	if (!rcu_seq_state(cur))
		return false;
	if (!ULONG_CMP_LT(since, cur))
		return true;
	if (gp->expedited)
		gp->seq.exp = rcu_seq_endval(&cur);
	else
		gp->seq.normal = rcu_seq_endval(&cur);
	return true;
}

#ifdef CONFIG_PREEMPT_RCU
/*
 * Whether the grace period has marked @t's reader as owing it a quiescent
 * state: preempted (->blocked), asked from the tick (->need_qs, normal)
 * or from the IPI (->exp_hint, expedited).
 */
static bool rcu_scheduler_owes(struct rcu_scheduler_gp *gp, struct task_struct *t)
{
	union rcu_special special = { .s = READ_ONCE(t->rcu_read_unlock_special.s) };

	return special.b.blocked || (gp->expedited ? special.b.exp_hint : special.b.need_qs);
}
#else
static bool rcu_scheduler_owes(struct rcu_scheduler_gp *gp, struct task_struct *t)
{
	return false;
}
#endif

/*
 * kunit_rcu_*_until() condition, inside the current task's reader: the
 * grace period has reached the reader or ended.  Without preemptible RCU
 * nothing marks a reader, and a caller spins out its bound.
 */
static bool rcu_scheduler_gp_reached(void *gp)
{
	return rcu_scheduler_owes(gp, current) || rcu_scheduler_gp_done(gp);
}

struct rcu_scheduler_irq_reader {
	struct irq_work work;
	atomic_t ran;
	struct rcu_scheduler_gp gp;
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
	r->done_in_reader = rcu_scheduler_gp_done(&r->gp);
	rcu_read_unlock();
	atomic_set_release(&r->ran, 1);
}

/*
 * Covers: SCH-1
 *
 * 6.1 drops the nesting count to zero first and runs the outermost
 * rcu_read_unlock()'s special processing (rcu_read_unlock_special())
 * after, deferring it when interrupts are disabled.  A reader nested
 * RCU_SCHEDULER_NEST_DEPTH deep is reached by a grace period (normal
 * with expediting off, or expedited: one parameter each); the inner
 * unlocks do not end it; the outermost unlock runs with interrupts
 * disabled, and an interrupt taken right after, while the quiescent
 * state is still owed, runs a reader of its own (whose unlock meets the
 * pending special state from hardirq).  That reader counts from zero,
 * the grace period does not end before the outermost unlock nor inside
 * the interrupt's reader, and the deferred quiescent state is not lost:
 * the grace period ends after, on its own sequence.
 * rcu_scheduler_irq_inside_unlock_special takes the interrupt inside
 * the special processing itself.
 */
static void rcu_scheduler_irq_reader_in_unlock(struct kunit *test)
{
	struct rcu_scheduler_irq_reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int depth_in[RCU_SCHEDULER_NEST_DEPTH + 1], depth_out[RCU_SCHEDULER_NEST_DEPTH + 1];
	bool reached = false, done_nested, done_outer;
	unsigned long flags;
	int i;

	const struct rcu_scheduler_path *path = test->param_value;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ_MSG(test, kunit_rcu_reader_depth(), 0, "test thread already in a reader");
	r->work = IRQ_WORK_INIT_HARD(rcu_scheduler_irq_reader_fn);
	rcu_scheduler_gp_prepare(test, &r->gp, path->expedited);

	for (i = 1; i <= RCU_SCHEDULER_NEST_DEPTH; i++) {
		rcu_read_lock();
		depth_in[i] = kunit_rcu_reader_depth();
	}
	rcu_scheduler_gp_start(&r->gp);
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		reached = kunit_rcu_spin_until(rcu_scheduler_gp_reached, &r->gp,
					       RCU_SCHEDULER_REACH_MS);
	else
		kunit_rcu_spin_until(rcu_scheduler_gp_done, &r->gp, KUNIT_RCU_HOLD_MS);
	done_nested = rcu_scheduler_gp_done(&r->gp);
	for (i = RCU_SCHEDULER_NEST_DEPTH; i > 1; i--) {
		rcu_read_unlock();
		depth_out[i - 1] = kunit_rcu_reader_depth();
	}
	done_outer = kunit_rcu_spin_until(rcu_scheduler_gp_done, &r->gp, KUNIT_RCU_HOLD_MS);

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
				      "the grace period did not reach the reader within %d ms",
				      RCU_SCHEDULER_REACH_MS);
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
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(rcu_scheduler_gp_done, &r->gp,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the owed quiescent state was lost: no grace period end within %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
}

struct rcu_scheduler_unlock {
	atomic_t in_reader, cookie_set;
	struct rcu_scheduler_gp gp;
	bool reached;		/* the grace period reached the reader */
	bool done_in_reader;
	bool done_in_region;	/* after the unlock, lock still held */
	unsigned long since;	/* rcu_scheduler_gp_seq() as the reader began */
};

static void rcu_scheduler_unlock_under_pi_lock(void *arg)
{
	struct rcu_scheduler_unlock *u = arg;
	unsigned long flags;

	rcu_read_lock();
	u->since = rcu_scheduler_gp_seq(&u->gp);
	atomic_set_release(&u->in_reader, 1);
	if (kunit_rcu_spin_flag(&u->cookie_set, KUNIT_RCU_PROMPT_MS)) {
		if (IS_ENABLED(CONFIG_PREEMPT_RCU))
			u->reached = kunit_rcu_spin_until(rcu_scheduler_gp_reached, &u->gp,
							  RCU_SCHEDULER_REACH_MS);
		else
			kunit_rcu_spin_until(rcu_scheduler_gp_done, &u->gp, KUNIT_RCU_HOLD_MS);
	}
	u->done_in_reader = rcu_scheduler_gp_done(&u->gp);
	/* What reached the reader is the grace period in progress: judge that one. */
	if (u->reached)
		rcu_scheduler_gp_current(&u->gp, u->since);
	/* A scheduler lock, taken with interrupts disabled, held across the end. */
	raw_spin_lock_irqsave(&current->pi_lock, flags);
	rcu_read_unlock();
	u->done_in_region = kunit_rcu_spin_until(rcu_scheduler_gp_done, &u->gp,
						 KUNIT_RCU_HOLD_MS);
	raw_spin_unlock_irqrestore(&current->pi_lock, flags);
}

/*
 * Covers: SCH-2
 *
 * A reader reached by a grace period driven from another CPU (normal
 * with expediting off, or expedited: one parameter each) ends while its
 * task holds a scheduler lock (its ->pi_lock) with interrupts disabled:
 * the rcu_read_unlock() does not deadlock (nor make lockdep see a
 * possible one: the run fails on a splat), the quiescent state it owes
 * is deferred (the grace period in progress, which reached the reader,
 * does not end inside the locked region), and it is reported once the
 * region ends (that grace period and the requested one then complete,
 * on their own sequence).  Without preemptible RCU the reader
 * is a preemption-disabled region and the same holds.
 */
static void rcu_scheduler_lock_across_unlock(struct kunit *test)
{
	const struct rcu_scheduler_path *path = test->param_value;
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_scheduler_unlock *u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	struct rcu_scheduler_gp requested = { };
	struct kunit_rcu_work *w;

	KUNIT_ASSERT_NOT_NULL(test, u);
	rcu_scheduler_gp_prepare(test, &u->gp, path->expedited);
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_scheduler_unlock_under_pi_lock, u, false);
	if (kunit_rcu_wait_flag(&u->in_reader, KUNIT_RCU_PROMPT_MS)) {
		/* From here: its work must not queue behind the reader. */
		rcu_scheduler_gp_start(&u->gp);
		requested = u->gp;
		atomic_set_release(&u->cookie_set, 1);
	}
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, RCU_SCHEDULER_REACH_MS +
							  KUNIT_RCU_GP_TIMEOUT_MS));
	KUNIT_ASSERT_TRUE_MSG(test, atomic_read(&u->cookie_set), "the reader never began");
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		KUNIT_EXPECT_TRUE_MSG(test, u->reached,
				      "the grace period did not reach the reader within %d ms",
				      RCU_SCHEDULER_REACH_MS);
	KUNIT_EXPECT_FALSE_MSG(test, u->done_in_reader, "grace period ended inside the reader");
	KUNIT_EXPECT_FALSE_MSG(test, u->done_in_region,
			       "grace period ended while the lock was still held");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(rcu_scheduler_gp_done, &u->gp,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "deferred quiescent state not reported within %d ms of the region",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(rcu_scheduler_gp_done, &requested,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the requested grace period did not end within %d ms of the region",
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

/* The reader was preempted inside its critical section and queued as blocked. */
static void rcu_scheduler_expect_preempted(struct kunit *test, struct rcu_scheduler_preempted *p)
{
	KUNIT_EXPECT_TRUE_MSG(test, p->inside_when_preempted,
			      "the preempter ran when the reader was not in its critical section");
	KUNIT_EXPECT_GT_MSG(test, p->nivcsw_out, p->nivcsw_in,
			    "the reader was never preempted inside its critical section");
	KUNIT_EXPECT_TRUE_MSG(test, p->blocked,
			      "the preempted reader was not queued as a blocked reader");
}

/* kunit_rcu_*_until() condition: @gp reached the reader of @p's task. */
struct rcu_scheduler_reach {
	struct rcu_scheduler_gp *gp;
	struct rcu_scheduler_preempted *p;
};

static bool rcu_scheduler_reached_reader(void *arg)
{
	struct rcu_scheduler_reach *r = arg;

	return rcu_scheduler_owes(r->gp, READ_ONCE(r->p->reader)) || rcu_scheduler_gp_done(r->gp);
}

/*
 * Starts @reader on @cpu and, once it runs and if @pw is not NULL,
 * rcu_scheduler_preempter() on the same CPU.  With @during, starts that
 * grace period once the reader has begun and preempts the reader only
 * after the grace period, still in progress, has reached it.  False, with
 * the case failed and both released, if either did not run within
 * KUNIT_RCU_PROMPT_MS or the grace period did not reach the reader within
 * RCU_SCHEDULER_REACH_MS.
 */
static bool rcu_scheduler_preempt_during(struct kunit *test, int cpu,
					 void (*reader)(void *arg),
					 struct rcu_scheduler_preempted *p,
					 struct kunit_rcu_work **rw, struct kunit_rcu_work **pw,
					 struct rcu_scheduler_gp *during)
{
	struct rcu_scheduler_reach reach = { .gp = during, .p = p };

	*rw = kunit_rcu_start_on_cpu(test, cpu, reader, p, false);
	if (!*rw)
		return false;
	if (!kunit_rcu_wait_flag(&p->in_reader, KUNIT_RCU_PROMPT_MS)) {
		atomic_set(&p->release, 1);
		kunit_rcu_finish(test, *rw, KUNIT_RCU_GP_TIMEOUT_MS);
		KUNIT_FAIL(test, "the reader did not begin within %d ms", KUNIT_RCU_PROMPT_MS);
		return false;
	}
	if (during) {
		rcu_scheduler_gp_start(during);
		if (!kunit_rcu_wait_until(rcu_scheduler_reached_reader, &reach,
					  RCU_SCHEDULER_REACH_MS) ||
		    rcu_scheduler_gp_done(during)) {
			atomic_set(&p->release, 1);
			kunit_rcu_finish(test, *rw, KUNIT_RCU_GP_TIMEOUT_MS);
			KUNIT_FAIL(test, "the grace period %s", rcu_scheduler_gp_done(during) ?
				   "ended inside the running reader" :
				   "did not reach the running reader");
			return false;
		}
	}
	if (!pw)
		return true;
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

static bool rcu_scheduler_preempt(struct kunit *test, int cpu, void (*reader)(void *arg),
				  struct rcu_scheduler_preempted *p,
				  struct kunit_rcu_work **rw, struct kunit_rcu_work **pw)
{
	return rcu_scheduler_preempt_during(test, cpu, reader, p, rw, pw, NULL);
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
	kunit_rcu_start_exp();
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

	rcu_scheduler_expect_preempted(test, p);
	KUNIT_EXPECT_TRUE_MSG(test, held_norm,
			      "a normal grace period ended while the reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_exp,
			      "an expedited grace period ended while the reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_running,
			      "a normal grace period ended before the resumed reader unlocked");
	KUNIT_EXPECT_TRUE_MSG(test, p->released, "the reader ended by its bound, not released");
}

/*
 * Covers: PERF-5
 * May skip: nopreempt
 *
 * A reader that is already running when a grace period (normal with
 * expediting off, or expedited: one parameter each) starts, and is
 * preempted only once that grace period, in progress, has reached it
 * (asked it for a quiescent state: ->need_qs from the tick, ->exp_hint
 * from the IPI).  RCU must queue it so that this grace period waits for
 * it (not only grace periods that start later and find it on the blocked
 * list): the grace period does not end while the reader is preempted,
 * nor once it runs again inside its critical section, and ends, on its
 * own sequence, after its rcu_read_unlock().
 */
static void rcu_scheduler_preempted_during_gp(struct kunit *test)
{
	const struct rcu_scheduler_path *path = test->param_value;
	struct rcu_scheduler_preempted *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *rw, *pw;
	struct rcu_scheduler_gp gp;
	bool held, held_running;

	KUNIT_ASSERT_NOT_NULL(test, p);
	if (!IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "PREEMPT_RCU=n: a reader cannot be preempted");
	rcu_scheduler_gp_prepare(test, &gp, path->expedited);
	if (!rcu_scheduler_preempt_during(test, cpu, rcu_scheduler_preempted_reader, p, &rw, &pw,
					  &gp))
		return;

	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	held = !rcu_scheduler_gp_done(&gp);
	atomic_set_release(&p->release_cpu, 1);
	kunit_rcu_finish(test, pw, KUNIT_RCU_GP_TIMEOUT_MS);
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS / 4);
	held_running = !rcu_scheduler_gp_done(&gp);
	atomic_set_release(&p->release, 1);
	kunit_rcu_finish(test, rw, KUNIT_RCU_GP_TIMEOUT_MS);

	rcu_scheduler_expect_preempted(test, p);
	KUNIT_EXPECT_TRUE_MSG(test, held,
			      "the grace period in progress ended while the reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, held_running,
			      "the grace period ended before the resumed reader unlocked");
	KUNIT_EXPECT_TRUE_MSG(test, p->released, "the reader ended by its bound, not released");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(rcu_scheduler_gp_done, &gp,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the grace period did not end within %d ms of the reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
}

/* SCH-2: a blocked reader that ends under a scheduler lock with interrupts disabled. */
struct rcu_scheduler_blocked_unlock {
	struct rcu_scheduler_preempted p;
	struct rcu_scheduler_gp gp;	/* the one in progress at the release */
	bool in_region;		/* it ended inside the locked region */
	unsigned long since;	/* rcu_scheduler_gp_seq() as the reader began */
};

static void rcu_scheduler_blocked_reader(void *arg)
{
	struct rcu_scheduler_blocked_unlock *b = arg;
	struct rcu_scheduler_preempted *p = &b->p;
	unsigned long flags;

	WRITE_ONCE(p->reader, current);
	rcu_read_lock();
	b->since = rcu_scheduler_gp_seq(&b->gp);
	rcu_scheduler_preempted_wait(p);
	raw_spin_lock_irqsave(&current->pi_lock, flags);
	rcu_read_unlock();
	b->in_region = kunit_rcu_spin_until(rcu_scheduler_gp_done, &b->gp, KUNIT_RCU_HOLD_MS);
	raw_spin_unlock_irqrestore(&current->pi_lock, flags);
}

/*
 * Covers: SCH-2
 * May skip: nopreempt
 *
 * A reader that was preempted inside its critical section (so RCU queued
 * it on its leaf rcu_node as a blocked reader) holds a grace period
 * requested meanwhile (a normal one with expediting off, or an expedited
 * one: one parameter each), runs again and ends while its task holds a
 * scheduler lock (its ->pi_lock) with interrupts disabled.  That
 * rcu_read_unlock() must not report the quiescent state from inside the
 * locked region (waking the grace-period kthread there is the deadlock
 * the article describes; lockdep's report fails the run): the grace
 * period in progress when the reader is let go (the requested one, or
 * one before it that began after the reader did) does not end inside the
 * region, held for KUNIT_RCU_HOLD_MS, and ends, on its own sequence, once
 * it is left; so does the requested one.  Without preemptible RCU
 * no reader is ever blocked: skipped (rcu_scheduler_lock_across_unlock
 * covers that kernel).
 */
static void rcu_scheduler_blocked_reader_locked_unlock(struct kunit *test)
{
	const struct rcu_scheduler_path *path = test->param_value;
	struct rcu_scheduler_blocked_unlock *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *rw, *pw;
	struct rcu_scheduler_gp requested;
	bool held, in_progress;

	KUNIT_ASSERT_NOT_NULL(test, b);
	if (!IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "PREEMPT_RCU=n: a reader cannot be preempted");
	rcu_scheduler_gp_prepare(test, &b->gp, path->expedited);
	if (!rcu_scheduler_preempt(test, cpu, rcu_scheduler_blocked_reader, &b->p, &rw, &pw))
		return;

	rcu_scheduler_gp_start(&b->gp);
	requested = b->gp;
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS / 2);
	held = !rcu_scheduler_gp_done(&b->gp);
	in_progress = rcu_scheduler_gp_current(&b->gp, b->since);
	atomic_set_release(&b->p.release_cpu, 1);
	kunit_rcu_finish(test, pw, KUNIT_RCU_GP_TIMEOUT_MS);
	atomic_set_release(&b->p.release, 1);
	kunit_rcu_finish(test, rw, KUNIT_RCU_GP_TIMEOUT_MS);

	rcu_scheduler_expect_preempted(test, &b->p);
	KUNIT_EXPECT_TRUE_MSG(test, held, "the grace period ended while the reader was preempted");
	KUNIT_EXPECT_TRUE_MSG(test, in_progress,
			      "no grace period in progress while the reader was preempted");
	KUNIT_EXPECT_FALSE_MSG(test, b->in_region,
			       "the grace period ended while the scheduler lock was held");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(rcu_scheduler_gp_done, &b->gp,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the grace period did not end within %d ms of the region",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(rcu_scheduler_gp_done, &requested,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the requested grace period did not end within %d ms of the region",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, b->p.released, "the reader ended by its bound, not released");
}

/* SCH-1: an interrupt taken inside rcu_read_unlock_special(). */
struct rcu_scheduler_special_kind {
	const char *name;
	bool expedited;		/* the grace period, else a normal one */
	bool preempted;		/* the reader is preempted while it waits */
};

static const struct rcu_scheduler_special_kind rcu_scheduler_special_kinds[] = {
	{ "normal grace period, preempted reader", false, true },
	{ "expedited grace period, running reader", true, false },
	{ "expedited grace period, preempted reader", true, true },
};

static void rcu_scheduler_special_desc(const struct rcu_scheduler_special_kind *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rcu_scheduler_special, rcu_scheduler_special_kinds,
		  rcu_scheduler_special_desc);

struct rcu_scheduler_special {
	struct rcu_scheduler_preempted p;
	struct rcu_scheduler_gp gp;
	struct irq_work work;
	atomic_t irq_ran;
	bool done_in_reader;		/* before the outermost rcu_read_unlock() */
	/* In rcu_scheduler_kunit_unlock_special(): */
	bool hooked;			/* it ran for this reader */
	int hook_depth;			/* the reader's nesting there */
	unsigned long hook_special;	/* ->rcu_read_unlock_special.s there */
	bool hook_irqs_on;		/* interrupts were enabled there */
	bool hooked_in_irq;		/* an interrupt's reader ran the special processing */
	bool irq_inside;		/* the interrupt was taken before it returned */
	/* In the interrupt: */
	unsigned long irq_special;	/* ->rcu_read_unlock_special.s on entry */
	int irq_depth_entry, irq_depth_in, irq_depth_after;
	bool done_in_irq_reader;
	/* After the outermost rcu_read_unlock() returned: */
	unsigned long special_after;
};

#ifdef CONFIG_PREEMPT_RCU
/* The reader whose special processing the hook interrupts, once. */
static struct rcu_scheduler_special *rcu_scheduler_special_armed;

/**
 * rcu_scheduler_kunit_unlock_special() - interrupt rcu_read_unlock_special()
 * @t: the task whose outermost rcu_read_unlock() runs the special processing
 *
 * Called by rcu_read_unlock_special() before it disables interrupts.  Once
 * rcu_scheduler_irq_inside_unlock_special() armed it for @t, records the
 * state there, queues a self-interrupt and waits, bounded, until that
 * interrupt has been taken, so inside the special processing.  Else does
 * nothing.
 */
void rcu_scheduler_kunit_unlock_special(struct task_struct *t)
{
	struct rcu_scheduler_special *s = READ_ONCE(rcu_scheduler_special_armed);

	if (likely(!s) || READ_ONCE(s->p.reader) != t)
		return;
	if (in_interrupt()) {
		/* Its outermost unlock was interrupted after the nesting dropped. */
		WRITE_ONCE(s->hooked_in_irq, true);
		return;
	}
	if (cmpxchg(&rcu_scheduler_special_armed, s, NULL) != s)
		return;
	s->hooked = true;
	s->hook_depth = kunit_rcu_reader_depth();
	s->hook_special = READ_ONCE(t->rcu_read_unlock_special.s);
	s->hook_irqs_on = !irqs_disabled();
	irq_work_queue(&s->work);
	s->irq_inside = kunit_rcu_spin_flag(&s->irq_ran, KUNIT_RCU_PROMPT_MS);
}

static void rcu_scheduler_special_irq(struct irq_work *work)
{
	struct rcu_scheduler_special *s = container_of(work, struct rcu_scheduler_special, work);

	s->irq_special = READ_ONCE(current->rcu_read_unlock_special.s);
	s->irq_depth_entry = kunit_rcu_reader_depth();
	rcu_read_lock();
	s->irq_depth_in = kunit_rcu_reader_depth();
	s->done_in_irq_reader = rcu_scheduler_gp_done(&s->gp);
	rcu_read_unlock();
	s->irq_depth_after = kunit_rcu_reader_depth();
	atomic_set_release(&s->irq_ran, 1);
}

static void rcu_scheduler_special_reader(void *arg)
{
	struct rcu_scheduler_special *s = arg;

	WRITE_ONCE(s->p.reader, current);
	rcu_read_lock();
	rcu_scheduler_preempted_wait(&s->p);
	s->done_in_reader = rcu_scheduler_gp_done(&s->gp);
	/* Arms the hook: orders the records above before it can run. */
	smp_store_release(&rcu_scheduler_special_armed, s);
	rcu_read_unlock();
	cmpxchg(&rcu_scheduler_special_armed, s, NULL);
	s->special_after = READ_ONCE(current->rcu_read_unlock_special.s);
}

/* Tries of rcu_scheduler_irq_inside_unlock_special() that interrupts may take over. */
#define RCU_SCHEDULER_SPECIAL_TRIES	3

/*
 * One try; false if an interrupt between the nesting drop and the special
 * processing of the reader's rcu_read_unlock() did that processing first
 * (legal, and what SCH-1 is about, but then the hook never runs in the
 * task), or if one taken inside the hook before ours did (a tick:
 * rcu_flavor_sched_clock_irq() reports a deferred quiescent state at
 * nesting zero).  A kernel that loses the state for good fails every try.
 */
static bool rcu_scheduler_special_once(struct kunit *test,
				       const struct rcu_scheduler_special_kind *kind)
{
	struct rcu_scheduler_special *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *rw, *pw = NULL;
	bool held;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->work = IRQ_WORK_INIT_HARD(rcu_scheduler_special_irq);
	rcu_scheduler_gp_prepare(test, &s->gp, kind->expedited);
	if (kind->preempted) {
		if (!rcu_scheduler_preempt(test, cpu, rcu_scheduler_special_reader, &s->p, &rw,
					   &pw))
			return true;
		rcu_scheduler_gp_start(&s->gp);
		kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS / 2);
		held = !rcu_scheduler_gp_done(&s->gp);
		atomic_set_release(&s->p.release_cpu, 1);
		kunit_rcu_finish(test, pw, KUNIT_RCU_GP_TIMEOUT_MS);
	} else {
		/* Running: the grace period reaches it, nobody preempts it. */
		if (!rcu_scheduler_preempt_during(test, cpu, rcu_scheduler_special_reader, &s->p,
						  &rw, NULL, &s->gp))
			return true;
		held = !rcu_scheduler_gp_done(&s->gp);
	}
	atomic_set_release(&s->p.release, 1);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, rw, KUNIT_RCU_GP_TIMEOUT_MS));
	if (!s->hooked && READ_ONCE(s->hooked_in_irq)) {
		kunit_info(test, "an interrupt ran the special processing first: once more\n");
		return false;
	}
	if (s->irq_inside && s->hook_special && !s->irq_special) {
		/* A tick at nesting zero reports a deferred quiescent state itself. */
		kunit_info(test, "an earlier interrupt reported the owed quiescent state: once more\n");
		return false;
	}

	KUNIT_EXPECT_TRUE_MSG(test, s->p.released, "the reader ended by its bound, not released");
	if (kind->preempted)
		rcu_scheduler_expect_preempted(test, &s->p);
	KUNIT_EXPECT_TRUE_MSG(test, held && !s->done_in_reader,
			      "the grace period ended inside the reader");
	KUNIT_ASSERT_TRUE_MSG(test, s->hooked,
			      "the outermost rcu_read_unlock() ran no rcu_read_unlock_special()");
	KUNIT_EXPECT_EQ_MSG(test, s->hook_depth, 0,
			    "special processing ran with the reader still nested");
	KUNIT_EXPECT_NE_MSG(test, s->hook_special, 0UL,
			    "special processing ran with no special state");
	KUNIT_EXPECT_TRUE_MSG(test, s->hook_irqs_on,
			      "interrupts were off where the special processing begins");
	KUNIT_ASSERT_TRUE_MSG(test, s->irq_inside,
			      "no interrupt taken inside rcu_read_unlock_special() within %d ms",
			      KUNIT_RCU_PROMPT_MS);
	KUNIT_EXPECT_NE_MSG(test, s->irq_special, 0UL,
			    "the owed quiescent state was gone when the interrupt came");
	KUNIT_EXPECT_EQ_MSG(test, s->irq_depth_entry, 0, "nesting on entry to the interrupt");
	KUNIT_EXPECT_EQ_MSG(test, s->irq_depth_in, 1, "nesting in the interrupt's reader");
	KUNIT_EXPECT_EQ_MSG(test, s->irq_depth_after, 0, "nesting after the interrupt's reader");
	KUNIT_EXPECT_FALSE_MSG(test, s->done_in_irq_reader,
			       "the grace period ended inside the interrupt's reader");
	KUNIT_EXPECT_EQ_MSG(test, s->special_after, 0UL,
			    "rcu_read_unlock() returned with special state left");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(rcu_scheduler_gp_done, &s->gp,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the owed quiescent state was lost: no grace period end within %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	return true;
}

/* rcu_scheduler_irq_inside_unlock_special()'s body, with preemptible RCU. */
static void rcu_scheduler_inside_special(struct kunit *test)
{
	int i;

	for (i = 0; i < RCU_SCHEDULER_SPECIAL_TRIES; i++)
		if (rcu_scheduler_special_once(test, test->param_value))
			return;
	KUNIT_FAIL(test, "in %d tries another interrupt always did the special processing first",
		   RCU_SCHEDULER_SPECIAL_TRIES);
}
#else
static void rcu_scheduler_inside_special(struct kunit *test)
{
	kunit_skip(test, "PREEMPT_RCU=n: no rcu_read_unlock_special()");
}
#endif /* CONFIG_PREEMPT_RCU */

/*
 * Covers: SCH-1
 * May skip: nopreempt
 *
 * The reader of a kthread on a CPU of its own is reached by a grace
 * period (per parameter: a normal one with expediting off while the
 * reader is preempted, an expedited one while it runs or while it is
 * preempted), so its outermost rcu_read_unlock() runs the special
 * processing.  A hook at the start of rcu_read_unlock_special() (patch
 * "rcu: Let the rcu_scheduler KUnit suite interrupt
 * rcu_read_unlock_special()") takes a self-interrupt there, whose
 * handler runs a reader of its own.  6.1 has dropped the nesting count
 * to zero before the special processing and does not report the owed
 * quiescent state before it disables interrupts: the hook sees depth 0
 * with the state still owed, the interrupt's reader counts 0, 1, 0 and
 * the grace period has not ended inside it; once rcu_read_unlock()
 * returns no special state is left, and the grace period ends on its own
 * sequence.  Deadlocks, lockdep reports and list corruption fail the run.
 */
static void rcu_scheduler_irq_inside_unlock_special(struct kunit *test)
{
	rcu_scheduler_inside_special(test);
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

/*
 * After a Tasks flavor's reader ended: the kthreads in its synchronous
 * grace period (@sw) and its barrier (@bw) return within a bound, and when
 * the barrier returned every callback had run, exactly once.
 */
static void rcu_scheduler_tasks_expect_after(struct kunit *test, struct kunit_rcu_work *sw,
					     struct kunit_rcu_work *bw, const char *flavor)
{
	int i;

	KUNIT_EXPECT_TRUE_MSG(test, sw && kunit_rcu_finish(test, sw, KUNIT_RCU_GP_TIMEOUT_MS),
			      "%s: the synchronous grace period did not return within %d ms",
			      flavor, KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, bw && kunit_rcu_finish(test, bw, KUNIT_RCU_GP_TIMEOUT_MS),
			      "%s: the barrier did not return within %d ms", flavor,
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_EQ_MSG(test, rcu_scheduler_tasks.ran_at_barrier, RCU_SCHEDULER_TASKS_CBS,
			    "%s: callbacks run when the barrier returned", flavor);
	for (i = 0; i < RCU_SCHEDULER_TASKS_CBS; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rcu_scheduler_tasks.ran[i]), 1,
				    "%s: callback %d: times run", flavor, i);
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
 * returned every callback had run, exactly once.  Tasks RCU Rude and
 * Trace: rcu_scheduler_tasks_flavor_waits_for_reader.
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
	rcu_scheduler_tasks_expect_after(test, sw, bw, "Tasks RCU");

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

/*
 * TASKS-3 for Tasks RCU Rude and Tasks RCU Trace: one row per flavor and
 * kind of reader.  A Rude reader is any region with preemption or
 * interrupts off; a Trace reader is rcu_read_lock_trace(), which may
 * nest and sleep.
 */
struct rcu_scheduler_tasks_reader {
	struct kunit_rcu_hold h;
	bool trace_held;		/* rcu_read_lock_trace_held() inside, nested */
	unsigned long nvcsw_in, nvcsw_out;	/* voluntary switches around the hold */
};

struct rcu_scheduler_tasks_flavor {
	const char *name;
	const char *config;		/* the option it needs, for the skip message */
	bool configured;
	void (*reader)(struct rcu_scheduler_tasks_reader *r);
	void (*call)(struct rcu_head *rh, rcu_callback_t fn);
	void (*sync)(void);
	void (*barrier_fn)(void);
	bool sleeps;			/* the reader sleeps while it is held */
	bool trace;			/* it is rcu_read_lock_trace() */
};

#ifdef CONFIG_TASKS_RUDE_RCU
static void rcu_scheduler_rude_preempt_off(struct rcu_scheduler_tasks_reader *r)
{
	preempt_disable();
	kunit_rcu_hold_spin(&r->h);
	preempt_enable();
}

static void rcu_scheduler_rude_irqs_off(struct rcu_scheduler_tasks_reader *r)
{
	unsigned long flags;

	local_irq_save(flags);
	kunit_rcu_hold_spin(&r->h);
	local_irq_restore(flags);
}

#define RCU_SCHEDULER_RUDE(name, fn) \
	{ name, "TASKS_RUDE_RCU", true, fn, call_rcu_tasks_rude, \
	  synchronize_rcu_tasks_rude, rcu_barrier_tasks_rude, false }
#else
#define RCU_SCHEDULER_RUDE(name, fn)	{ name, "TASKS_RUDE_RCU" }
#endif /* CONFIG_TASKS_RUDE_RCU */

#ifdef CONFIG_TASKS_TRACE_RCU
/* A nested Trace reader that spins, never switching voluntarily. */
static void rcu_scheduler_trace_running(struct rcu_scheduler_tasks_reader *r)
{
	rcu_read_lock_trace();
	rcu_read_lock_trace();
	r->trace_held = rcu_read_lock_trace_held();
	rcu_read_unlock_trace();
	kunit_rcu_hold_spin(&r->h);
	rcu_read_unlock_trace();
}

/* A nested Trace reader that sleeps until released. */
static void rcu_scheduler_trace_sleeping(struct rcu_scheduler_tasks_reader *r)
{
	rcu_read_lock_trace();
	rcu_read_lock_trace();
	r->trace_held = rcu_read_lock_trace_held();
	r->nvcsw_in = current->nvcsw;
	atomic_set_release(&r->h.in_reader, 1);
	r->h.released = kunit_rcu_wait_flag(&r->h.release, KUNIT_RCU_GP_TIMEOUT_MS);
	r->nvcsw_out = current->nvcsw;
	rcu_read_unlock_trace();
	rcu_read_unlock_trace();
}

#define RCU_SCHEDULER_TRACE(name, fn, sleeps) \
	{ name, "TASKS_TRACE_RCU", true, fn, call_rcu_tasks_trace, \
	  synchronize_rcu_tasks_trace, rcu_barrier_tasks_trace, sleeps, true }
#else
#define RCU_SCHEDULER_TRACE(name, fn, sleeps)	{ name, "TASKS_TRACE_RCU" }
#endif /* CONFIG_TASKS_TRACE_RCU */

static const struct rcu_scheduler_tasks_flavor rcu_scheduler_tasks_flavors[] = {
	RCU_SCHEDULER_RUDE("Rude, preempt_disable()", rcu_scheduler_rude_preempt_off),
	RCU_SCHEDULER_RUDE("Rude, local_irq_save()", rcu_scheduler_rude_irqs_off),
	RCU_SCHEDULER_TRACE("Trace, nested reader running", rcu_scheduler_trace_running, false),
	RCU_SCHEDULER_TRACE("Trace, nested reader asleep", rcu_scheduler_trace_sleeping, true),
};

static void rcu_scheduler_tasks_flavor_desc(const struct rcu_scheduler_tasks_flavor *f,
					    char *desc)
{
	strscpy(desc, f->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rcu_scheduler_tasks_flavor, rcu_scheduler_tasks_flavors,
		  rcu_scheduler_tasks_flavor_desc);

/* The flavor of the running parameter, for the kthreads below. */
static const struct rcu_scheduler_tasks_flavor *rcu_scheduler_flavor;

static void rcu_scheduler_flavor_reader(void *arg)
{
	struct rcu_scheduler_tasks_reader *r = arg;

	rcu_scheduler_flavor->reader(r);
	kunit_rcu_hold_ended(&r->h);
}

static void rcu_scheduler_flavor_sync(void *unused)
{
	rcu_scheduler_flavor->sync();
	atomic_set_release(&rcu_scheduler_tasks.synced, 1);
}

static void rcu_scheduler_flavor_barrier(void *unused)
{
	rcu_scheduler_flavor->barrier_fn();
	rcu_scheduler_tasks.ran_at_barrier = rcu_scheduler_tasks_ran();
	atomic_set_release(&rcu_scheduler_tasks.barriered, 1);
}

/*
 * Covers: TASKS-3
 * May skip: default, ghost, nopreempt
 *
 * Tasks RCU Rude and Tasks RCU Trace, one parameter per flavor and reader:
 * a Rude reader (a region with preemption off, or with interrupts off)
 * and a Trace reader (rcu_read_lock_trace() nested twice, which
 * rcu_read_lock_trace_held() reports, either spinning or asleep), in a
 * kthread on a CPU of its own, holds the flavor's synchronous grace period
 * (in a kthread on another CPU), the callbacks queued while it runs, and
 * the flavor's barrier called while those callbacks wait for their grace
 * period.  Once the reader ends (released, not by its bound; the sleeping
 * one did sleep), the grace period and the barrier return within a bound,
 * and when the barrier returned every callback had run, exactly once.
 * CONFIG=nohz configures both flavors (FUNCTION_TRACER selects Rude,
 * BPF_SYSCALL selects Trace); elsewhere the parameters skip.
 */
static void rcu_scheduler_tasks_flavor_waits_for_reader(struct kunit *test)
{
	const struct rcu_scheduler_tasks_flavor *f = test->param_value;
	struct rcu_scheduler_tasks_reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *rw, *sw, *bw;
	bool held_cbs, held_sync, held_barrier;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	if (!f->configured)
		kunit_skip(test, "%s=n (CONFIG=nohz configures it)", f->config);
	rcu_scheduler_flavor = f;
	memset(&rcu_scheduler_tasks, 0, sizeof(rcu_scheduler_tasks));
	rw = kunit_rcu_start_on_cpu(test, cpu, rcu_scheduler_flavor_reader, r, false);
	KUNIT_ASSERT_NOT_NULL(test, rw);
	KUNIT_ASSERT_TRUE_MSG(test, kunit_rcu_wait_flag(&r->h.in_reader, KUNIT_RCU_PROMPT_MS),
			      "the reader did not begin within %d ms", KUNIT_RCU_PROMPT_MS);

	for (i = 0; i < RCU_SCHEDULER_TASKS_CBS; i++)
		f->call(&rcu_scheduler_tasks.rh[i], rcu_scheduler_tasks_cb);
	sw = kunit_rcu_start_on_cpu(test, kunit_rcu_other_cpu(cpu), rcu_scheduler_flavor_sync,
				    NULL, false);
	bw = kunit_rcu_start_on_cpu(test, kunit_rcu_other_cpu(cpu), rcu_scheduler_flavor_barrier,
				    NULL, false);
	kunit_rcu_delay_ms(RCU_SCHEDULER_TASKS_HOLD_MS);
	held_cbs = !rcu_scheduler_tasks_ran();
	held_sync = !atomic_read(&rcu_scheduler_tasks.synced);
	held_barrier = !atomic_read(&rcu_scheduler_tasks.barriered);
	atomic_set_release(&r->h.release, 1);
	kunit_rcu_finish(test, rw, KUNIT_RCU_PROMPT_MS);

	rcu_scheduler_tasks_expect_after(test, sw, bw, f->name);
	KUNIT_EXPECT_TRUE_MSG(test, held_cbs, "a callback ran inside the reader");
	KUNIT_EXPECT_TRUE_MSG(test, held_sync, "the synchronous grace period ended in the reader");
	KUNIT_EXPECT_TRUE_MSG(test, held_barrier,
			      "the barrier returned while its callbacks waited for the reader");
	KUNIT_EXPECT_TRUE_MSG(test, r->h.released, "the reader ended by its bound, not released");
	if (f->sleeps)
		KUNIT_EXPECT_GT_MSG(test, r->nvcsw_out, r->nvcsw_in, "the reader never slept");
	if (f->trace)
		KUNIT_EXPECT_TRUE_MSG(test, r->trace_held,
				      "rcu_read_lock_trace_held() false in a nested reader");
}

static struct kunit_case rcu_scheduler_cases[] = {
	KUNIT_CASE_PARAM(rcu_scheduler_irq_reader_in_unlock, rcu_scheduler_path_gen_params),
	KUNIT_CASE_PARAM(rcu_scheduler_irq_inside_unlock_special,
			 rcu_scheduler_special_gen_params),
	KUNIT_CASE_PARAM(rcu_scheduler_lock_across_unlock, rcu_scheduler_path_gen_params),
	KUNIT_CASE(rcu_scheduler_preempted_reader_blocks_gp),
	KUNIT_CASE_PARAM(rcu_scheduler_preempted_during_gp, rcu_scheduler_path_gen_params),
	KUNIT_CASE_PARAM(rcu_scheduler_blocked_reader_locked_unlock,
			 rcu_scheduler_path_gen_params),
	KUNIT_CASE(rcu_scheduler_gp_kthread_drives),
	KUNIT_CASE(rcu_scheduler_kthreads_under_load),
	KUNIT_CASE(rcu_scheduler_tasks_wait_for_preempted),
	KUNIT_CASE(rcu_scheduler_tasks_sleeper_quiescent),
	KUNIT_CASE_PARAM(rcu_scheduler_tasks_flavor_waits_for_reader,
			 rcu_scheduler_tasks_flavor_gen_params),
	{}
};

static struct kunit_suite rcu_scheduler_suite = {
	.name = "rcu_scheduler",
	.test_cases = rcu_scheduler_cases,
};

kunit_test_suite(rcu_scheduler_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's scheduler requirements");
MODULE_LICENSE("GPL");
