// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of RCU during early boot: EB-1 .. EB-5 of kunit-rcu's
 * docs/requirements.md.
 *
 * A built-in KUnit suite runs long after the boot phases these
 * requirements are about, so RCU calls rcu_boot_kunit_record() at five
 * points of boot (kernel/rcu/rcu.h) and this file records there what
 * each RCU primitive did; the suite asserts the records afterwards.
 *
 *   RCU_BOOT_BEFORE_INIT     start of rcu_init(): one CPU, interrupts
 *                            and preemption off, RCU_SCHEDULER_INACTIVE
 *   RCU_BOOT_AFTER_INIT      end of rcu_init(): the same, RCU set up.
 *                            No synchronous grace period here: once
 *                            rcu_init() ran, 6.1 asserts that they are
 *                            called with interrupts enabled.
 *   RCU_BOOT_SCHED_STARTING  start of rcu_scheduler_starting(): the boot
 *                            task, interrupts on, preemption off, still
 *                            RCU_SCHEDULER_INACTIVE
 *   RCU_BOOT_SCHED_INIT      end of rcu_scheduler_starting(): the same,
 *                            but RCU_SCHEDULER_INIT
 *   RCU_BOOT_EARLY_INITCALL  an early_initcall() (linked after tree.o, so
 *                            after the grace-period kthread is spawned):
 *                            still one CPU and RCU_SCHEDULER_INIT, but
 *                            kthreads and preemption work
 *
 * Nothing here prints or asserts during boot.  Whatever can block runs in
 * a kthread that the boot waits for with a bound, so that a grace period
 * or barrier that deadlocks is recorded as such and boot goes on.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_trace.h>
#include <linux/rcupdate_wait.h>
#include <linux/srcu.h>
#include <linux/preempt.h>
#include <linux/sched.h>

#include "rcu.h"
#include "kunit_rcu.h"

/* Bound on one blocking call during boot (a grace period or a barrier). */
#define EB_BOUND_MS	10000

/* How long the EB-4 reader stays in its critical section. */
#define EB_READER_MS	200

/* A callback queued during boot. */
struct eb_cb {
	struct rcu_head rh;
	bool queued;
	int queued_at;		/* event number of the call_*() */
	bool use_full;		/* @full, not @cookie, is the polled state */
	unsigned long cookie;	/* polled state taken just before it */
	struct rcu_gp_oldstate full;
	atomic_t ran;		/* times invoked */
	int ran_at;		/* event number of the first invocation */
	bool gp_done;		/* the cookie read as complete when invoked */
};

/* A synchronous grace period raced against a reader in another task. */
struct eb_sync {
	bool tried;
	bool returned;		/* within EB_BOUND_MS */
	bool cookie_before;	/* the cookie read as complete before the call */
	bool cookie_after;	/* ... and after it */
	bool full_after;	/* the same for a full polled state */
	bool reader_inside;	/* a reader was in progress when it started */
	int reader_done_at;	/* event number: the reader's rcu_read_unlock() */
	int returned_at;	/* event number: the grace period returned */
};

enum eb_barrier {
	EB_RCU,
	EB_SRCU,
	EB_TASKS,
	EB_TASKS_RUDE,
	EB_TASKS_TRACE,
	EB_NR_BARRIERS,
};

static const char * const eb_barrier_name[EB_NR_BARRIERS] = {
	"rcu_barrier", "srcu_barrier", "rcu_barrier_tasks",
	"rcu_barrier_tasks_rude", "rcu_barrier_tasks_trace",
};

struct eb_barrier_rec {
	bool tried;
	bool returned;		/* within EB_BOUND_MS */
	int own_ran;		/* the callback queued just before it: runs */
	int early_missing;	/* earlier callbacks of its flavor not run yet */
	int returned_at;
};

/* What one point of boot saw. */
struct eb_point {
	bool reached;
	int at;			/* event number */
	int sched;		/* rcu_scheduler_active */
	bool irqs_disabled;
	int online;		/* num_online_cpus() */
	/* EB-1: a reader and the pointer accessors. */
	int depth_outside, depth_inside, depth_after;
	bool deref_ok, access_ok;
	/* EB-2: a call_rcu() and, where SRCU works, a call_srcu(). */
	struct eb_cb cb, scb;
	/* EB-3, EB-4: synchronize_rcu() and synchronize_rcu_expedited(). */
	struct eb_sync sync, exp;
	/* EB-5 (the early_initcall only). */
	struct eb_barrier_rec barrier[EB_NR_BARRIERS];
	struct eb_cb bcb[EB_NR_BARRIERS];
};

static struct eb_point eb_points[RCU_BOOT_NR_POINTS];
static atomic_t eb_events;
DEFINE_STATIC_SRCU(eb_srcu);

static const char * const eb_point_name[RCU_BOOT_NR_POINTS] = {
	"start of rcu_init()", "end of rcu_init()", "start of rcu_scheduler_starting()",
	"end of rcu_scheduler_starting()", "early_initcall",
};

static int eb_event(void)
{
	return atomic_inc_return(&eb_events);
}

static void eb_cb_fn(struct rcu_head *rh)
{
	struct eb_cb *c = container_of(rh, struct eb_cb, rh);

	if (atomic_inc_return(&c->ran) == 1) {
		c->ran_at = eb_event();
		c->gp_done = c->use_full ? poll_state_synchronize_rcu_full(&c->full) :
			     poll_state_synchronize_rcu(c->cookie);
	}
}

static void eb_srcu_cb_fn(struct rcu_head *rh)
{
	struct eb_cb *c = container_of(rh, struct eb_cb, rh);

	if (atomic_inc_return(&c->ran) == 1) {
		c->ran_at = eb_event();
		c->gp_done = poll_state_synchronize_srcu(&eb_srcu, c->cookie);
	}
}

/*
 * Queues a callback of a flavor.  An RCU callback records a polled state
 * to check in it: the full one once rcu_init() has set up the rcu_node
 * tree (the plain cookie can miss a grace period when normal and
 * expedited ones overlap), the plain cookie before that, when no grace
 * period can be in flight.
 */
static void eb_queue(struct eb_cb *c, enum eb_barrier flavor, bool full_ok)
{
	c->queued = true;
	c->queued_at = eb_event();
	c->use_full = full_ok;
	if (full_ok)
		get_state_synchronize_rcu_full(&c->full);
	else
		c->cookie = get_state_synchronize_rcu();
	switch (flavor) {
	case EB_RCU:
		call_rcu(&c->rh, eb_cb_fn);
		break;
	case EB_SRCU:
		c->cookie = get_state_synchronize_srcu(&eb_srcu);
		call_srcu(&eb_srcu, &c->rh, eb_srcu_cb_fn);
		break;
#ifdef CONFIG_TASKS_RCU
	case EB_TASKS:
		call_rcu_tasks(&c->rh, eb_cb_fn);
		break;
#endif
#ifdef CONFIG_TASKS_RUDE_RCU
	case EB_TASKS_RUDE:
		call_rcu_tasks_rude(&c->rh, eb_cb_fn);
		break;
#endif
#ifdef CONFIG_TASKS_TRACE_RCU
	case EB_TASKS_TRACE:
		call_rcu_tasks_trace(&c->rh, eb_cb_fn);
		break;
#endif
	default:
		c->queued = false;
	}
}

/* EB-1: a reader, rcu_assign_pointer(), rcu_dereference(), rcu_access_pointer(). */
static int eb_value = 42;
static int __rcu *eb_ptr;

static void eb_reader(struct eb_point *p)
{
	int *q;

	rcu_assign_pointer(eb_ptr, &eb_value);
	p->depth_outside = kunit_rcu_reader_depth();
	rcu_read_lock();
	q = rcu_dereference(eb_ptr);
	p->depth_inside = kunit_rcu_reader_depth();
	p->deref_ok = q == &eb_value && *q == 42;
	rcu_read_unlock();
	p->depth_after = kunit_rcu_reader_depth();
	p->access_ok = rcu_access_pointer(eb_ptr) == &eb_value;
	RCU_INIT_POINTER(eb_ptr, NULL);
}

/*
 * EB-3: in the INACTIVE window nothing can wait, so a synchronous grace
 * period must return at once (a waiting one would hang boot here) and
 * count as a grace period for the polled API.
 */
static void eb_one_at_once(struct eb_sync *s, void (*sync)(void), bool full_ok)
{
	struct rcu_gp_oldstate full;
	unsigned long c;

	s->tried = true;
	c = get_state_synchronize_rcu();
	if (full_ok)
		get_state_synchronize_rcu_full(&full);
	s->cookie_before = poll_state_synchronize_rcu(c);
	sync();
	s->returned = true;
	s->cookie_after = poll_state_synchronize_rcu(c);
	s->full_after = full_ok ? poll_state_synchronize_rcu_full(&full) : true;
}

static void eb_sync_at_once(struct eb_point *p, bool full_ok)
{
	eb_one_at_once(&p->sync, synchronize_rcu, full_ok);
	eb_one_at_once(&p->exp, synchronize_rcu_expedited, full_ok);
}

/* Blocking work run in a kthread that the boot waits for with a bound. */
struct eb_job {
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

static int eb_job_thread(void *arg)
{
	struct eb_job *j = arg;

	j->fn(j->arg);
	complete(&j->done);
	return 0;
}

/*
 * Runs fn(arg) in a kthread; false if it did not return within
 * EB_BOUND_MS.  @j is static storage of the caller: a job that does
 * not return keeps using it.
 */
static bool eb_run_bounded(struct eb_job *j, void (*fn)(void *arg), void *arg)
{
	struct task_struct *t;

	j->fn = fn;
	j->arg = arg;
	init_completion(&j->done);
	t = kthread_run(eb_job_thread, j, "rcu_boot_kunit");
	if (IS_ERR(t))
		return false;
	return wait_for_completion_timeout(&j->done, msecs_to_jiffies(EB_BOUND_MS));
}

/* EB-4: a reader in its own task, preempted (PREEMPT=y) by the updater. */
static struct {
	struct completion inside;
	atomic_t in_cs;
	int done_at;
} eb_rdr;

static int eb_reader_thread(void *unused)
{
	unsigned long end = jiffies + msecs_to_jiffies(EB_READER_MS);

	rcu_read_lock();
	atomic_set(&eb_rdr.in_cs, 1);
	complete(&eb_rdr.inside);
	/*
	 * preempt_enable() is a preemption point with PREEMPT=y: arm64
	 * preempts nothing on return from an interrupt until the CPU
	 * features are finalized after smp_init(), that is, not during
	 * early_initcalls.
	 */
	while (time_before(jiffies, end)) {
		preempt_disable();
		cpu_relax();
		preempt_enable();
	}
	eb_rdr.done_at = eb_event();
	atomic_set(&eb_rdr.in_cs, 0);
	rcu_read_unlock();
	return 0;
}

struct eb_gp_arg {
	struct eb_sync *s;
	bool expedited;
};

static void eb_gp_fn(void *arg)
{
	struct eb_gp_arg *a = arg;
	struct rcu_gp_oldstate full;

	/* Grace periods may be in flight now: only the full state is exact. */
	get_state_synchronize_rcu_full(&full);
	a->s->cookie_before = poll_state_synchronize_rcu_full(&full);
	a->s->reader_inside = atomic_read(&eb_rdr.in_cs);
	if (a->expedited) {
		synchronize_rcu_expedited();
	} else {
		/* During boot every grace period is expedited unless asked not to be. */
		rcu_unexpedite_gp();
		synchronize_rcu();
		rcu_expedite_gp();
	}
	a->s->returned_at = eb_event();
	a->s->cookie_after = poll_state_synchronize_rcu_full(&full);
	a->s->full_after = poll_state_synchronize_rcu_full(&full);
}

static struct eb_job eb_gp_job[2], eb_barrier_job[EB_NR_BARRIERS];

/*
 * EB-4: start a reader in a kthread, wait until it is inside its
 * critical section, then run the grace period in another kthread.  With
 * PREEMPT=y the reader is preempted and the grace period must wait for
 * it; with PREEMPT=n a reader cannot be preempted on the only CPU, so it
 * is over before the updater runs and the grace period must merely
 * return.
 */
static struct eb_gp_arg eb_gp_args[2];

static void eb_sync_vs_reader(struct eb_sync *s, int i, bool expedited)
{
	struct eb_gp_arg *a = &eb_gp_args[i];
	struct task_struct *t;

	s->tried = true;
	init_completion(&eb_rdr.inside);
	eb_rdr.done_at = 0;
	t = kthread_run(eb_reader_thread, NULL, "rcu_boot_reader");
	if (IS_ERR(t))
		return;
	if (!wait_for_completion_timeout(&eb_rdr.inside, msecs_to_jiffies(EB_BOUND_MS)))
		return;
	a->s = s;
	a->expedited = expedited;
	s->returned = eb_run_bounded(&eb_gp_job[i], eb_gp_fn, a);
	s->reader_done_at = eb_rdr.done_at;
}

/* EB-5: each barrier in a kthread, after a callback of its own flavor. */
static void eb_barrier_fn(void *arg)
{
	switch ((enum eb_barrier)(long)arg) {
	case EB_RCU:
		rcu_barrier();
		break;
	case EB_SRCU:
		srcu_barrier(&eb_srcu);
		break;
#ifdef CONFIG_TASKS_RCU
	case EB_TASKS:
		rcu_barrier_tasks();
		break;
#endif
#ifdef CONFIG_TASKS_RUDE_RCU
	case EB_TASKS_RUDE:
		rcu_barrier_tasks_rude();
		break;
#endif
#ifdef CONFIG_TASKS_TRACE_RCU
	case EB_TASKS_TRACE:
		rcu_barrier_tasks_trace();
		break;
#endif
	default:
		break;
	}
}

static bool eb_flavor_configured(enum eb_barrier b)
{
	switch (b) {
	case EB_RCU:
	case EB_SRCU:
		return true;
	case EB_TASKS:
		return IS_ENABLED(CONFIG_TASKS_RCU);
	case EB_TASKS_RUDE:
		return IS_ENABLED(CONFIG_TASKS_RUDE_RCU);
	case EB_TASKS_TRACE:
		return IS_ENABLED(CONFIG_TASKS_TRACE_RCU);
	default:
		return false;
	}
}

/* Callbacks of flavor b queued at the points before pt that have not run. */
static int eb_not_run_before(enum eb_barrier b, enum rcu_boot_point pt)
{
	int i, n = 0;

	for (i = 0; i < pt; i++) {
		struct eb_cb *c = b == EB_RCU ? &eb_points[i].cb : &eb_points[i].scb;

		if (c->queued && !atomic_read(&c->ran))
			n++;
	}
	return n;
}

static void eb_barriers(struct eb_point *p)
{
	enum eb_barrier b;

	for (b = 0; b < EB_NR_BARRIERS; b++) {
		struct eb_barrier_rec *r = &p->barrier[b];

		if (!eb_flavor_configured(b))
			continue;
		r->tried = true;
		eb_queue(&p->bcb[b], b, true);
		r->returned = eb_run_bounded(&eb_barrier_job[b], eb_barrier_fn, (void *)(long)b);
		r->returned_at = eb_event();
		r->own_ran = atomic_read(&p->bcb[b].ran);
		if (b == EB_RCU || b == EB_SRCU)
			r->early_missing = eb_not_run_before(b, RCU_BOOT_EARLY_INITCALL);
	}
}

/**
 * rcu_boot_kunit_record() - record what RCU does at one point of boot
 * @point: which point of boot this is
 *
 * Called by RCU at the points of enum rcu_boot_point when
 * CONFIG_RCU_BOOT_KUNIT_TEST is set; the suite rcu_boot asserts the
 * records after boot.  Each point is recorded once.
 */
void rcu_boot_kunit_record(enum rcu_boot_point point)
{
	struct eb_point *p;

	if (WARN_ON_ONCE(point >= RCU_BOOT_NR_POINTS) || eb_points[point].reached)
		return;
	p = &eb_points[point];
	p->reached = true;
	p->at = eb_event();
	p->sched = rcu_scheduler_active;
	p->irqs_disabled = irqs_disabled();
	p->online = num_online_cpus();

	eb_reader(p);
	eb_queue(&p->cb, EB_RCU, point != RCU_BOOT_BEFORE_INIT);
	/* The kernel's own early self-test queues SRCU callbacks this early too. */
	eb_queue(&p->scb, EB_SRCU, false);

	switch (point) {
	case RCU_BOOT_BEFORE_INIT:
		/* The root rcu_node is not set up yet: no full polled state. */
		eb_sync_at_once(p, false);
		break;
	case RCU_BOOT_SCHED_STARTING:
	case RCU_BOOT_SCHED_INIT:
		eb_sync_at_once(p, true);
		break;
	case RCU_BOOT_EARLY_INITCALL:
		eb_sync_vs_reader(&p->sync, 0, false);
		eb_sync_vs_reader(&p->exp, 1, true);
		eb_barriers(p);
		break;
	default:
		break;
	}
}

/*
 * EB-4, Tasks RCU: a synchronize_rcu_tasks() that finds no grace-period
 * kthread yet drives the grace period itself (CONFIG_PROVE_RCU's self
 * test does so right after spawning the kthread).  The kthread starting
 * in the few instructions before the caller takes ->tasks_gp_mutex is
 * the race; the hook holds that window open until the kthread has
 * started and gone to sleep waiting for callbacks.
 */
#define EB_MIDBOOT_MS	1000

static struct {
	bool reached;
	int sched;
	bool started_before;	/* the kthread had started when the caller looked */
	bool asleep;		/* ... and had gone to sleep before it went on */
	int at;
	unsigned long *gp_seq;	/* the flavor's ->tasks_gp_seq */
	unsigned long snap;	/* a full grace period from the caller's start */
	bool ended;		/* the caller's grace period returned */
	bool gp_done;		/* ... and a full one had ended by then */
} eb_midboot;

static bool eb_kthread_asleep(void *kthread)
{
	struct task_struct *t = READ_ONCE(*(struct task_struct **)kthread);

	return t && !task_is_running(t);
}

/**
 * rcu_boot_kunit_tasks_midboot() - hold open the Tasks RCU mid-boot window
 * @kthread: the flavor's ->kthread_ptr, NULL until its kthread runs
 * @gp_seq: the flavor's grace-period sequence
 *
 * Called by synchronize_rcu_tasks_generic() when it drives a grace
 * period itself, before it takes ->tasks_gp_mutex.  Sleeps until the
 * kthread has started and is sleeping, for at most EB_MIDBOOT_MS, and
 * records what it saw for the suite rcu_boot.  Only the first call waits.
 */
void rcu_boot_kunit_tasks_midboot(struct task_struct **kthread, unsigned long *gp_seq)
{
	if (eb_midboot.reached)
		return;
	eb_midboot.reached = true;
	eb_midboot.sched = rcu_scheduler_active;
	eb_midboot.started_before = READ_ONCE(*kthread);
	eb_midboot.asleep = kunit_rcu_wait_until(eb_kthread_asleep, kthread, EB_MIDBOOT_MS);
	eb_midboot.at = eb_event();
	eb_midboot.gp_seq = gp_seq;
	eb_midboot.snap = rcu_seq_snap(gp_seq);
}

/**
 * rcu_boot_kunit_tasks_midboot_end() - the mid-boot grace period returned
 * @gp_seq: the flavor's grace-period sequence
 *
 * Called by synchronize_rcu_tasks_generic() after the grace period that
 * rcu_boot_kunit_tasks_midboot() saw it start; records whether a full
 * grace period of that flavor ended in between.
 */
void rcu_boot_kunit_tasks_midboot_end(unsigned long *gp_seq)
{
	if (gp_seq != eb_midboot.gp_seq || eb_midboot.ended)
		return;
	eb_midboot.ended = true;
	eb_midboot.gp_done = rcu_seq_done(gp_seq, eb_midboot.snap);
}

static int __init rcu_boot_kunit_early(void)
{
	rcu_boot_kunit_record(RCU_BOOT_EARLY_INITCALL);
	return 0;
}
early_initcall(rcu_boot_kunit_early);

static void eb_expect_reached(struct kunit *test, enum rcu_boot_point pt)
{
	KUNIT_ASSERT_TRUE_MSG(test, eb_points[pt].reached, "%s was never recorded",
			      eb_point_name[pt]);
}

/*
 * Covers: EB-1
 *
 * At every recorded point of boot, starting before rcu_init() has set
 * anything up, rcu_read_lock() enters a reader (the reader depth steps by
 * one and back), rcu_dereference() and rcu_access_pointer() return what
 * rcu_assign_pointer() published.
 */
static void rcu_boot_readers_before_init(struct kunit *test)
{
	int pt;

	eb_expect_reached(test, RCU_BOOT_BEFORE_INIT);
	KUNIT_EXPECT_EQ(test, eb_points[RCU_BOOT_BEFORE_INIT].sched, RCU_SCHEDULER_INACTIVE);
	for (pt = 0; pt < RCU_BOOT_NR_POINTS; pt++) {
		struct eb_point *p = &eb_points[pt];

		if (!p->reached)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, p->depth_inside, p->depth_outside + 1,
				    "reader depth inside rcu_read_lock() at %s", eb_point_name[pt]);
		KUNIT_EXPECT_EQ_MSG(test, p->depth_after, p->depth_outside,
				    "reader depth after rcu_read_unlock() at %s",
				    eb_point_name[pt]);
		KUNIT_EXPECT_TRUE_MSG(test, p->deref_ok, "rcu_dereference() at %s",
				      eb_point_name[pt]);
		KUNIT_EXPECT_TRUE_MSG(test, p->access_ok, "rcu_access_pointer() at %s",
				      eb_point_name[pt]);
	}
}

static void eb_expect_cb(struct kunit *test, struct eb_cb *c, const char *what,
			 enum rcu_boot_point pt)
{
	KUNIT_EXPECT_TRUE_MSG(test, c->queued, "%s at %s was not queued", what,
			      eb_point_name[pt]);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->ran), 1, "%s queued at %s: times run",
			    what, eb_point_name[pt]);
	if (!atomic_read(&c->ran))
		return;
	KUNIT_EXPECT_GT_MSG(test, c->ran_at, c->queued_at, "%s queued at %s", what,
			    eb_point_name[pt]);
	KUNIT_EXPECT_TRUE_MSG(test, c->gp_done,
			      "%s queued at %s ran before a grace period had elapsed",
			      what, eb_point_name[pt]);
	/* Nothing can run a callback while rcu_init() has not returned. */
	if (pt == RCU_BOOT_BEFORE_INIT && eb_points[RCU_BOOT_AFTER_INIT].reached)
		KUNIT_EXPECT_GT_MSG(test, c->ran_at, eb_points[RCU_BOOT_AFTER_INIT].at,
				    "%s queued before rcu_init() ran inside it", what);
}

/*
 * Covers: EB-2
 *
 * call_rcu() and call_srcu() at every point of boot, from before
 * rcu_init() on: after one more rcu_barrier() and srcu_barrier() here,
 * each callback has run exactly once, after a grace period (the polled
 * state taken when it was queued is complete in it), and the one queued
 * before rcu_init() did not run before rcu_init() returned.
 */
static void rcu_boot_call_rcu_every_window(struct kunit *test)
{
	int pt;

	rcu_barrier();
	srcu_barrier(&eb_srcu);
	for (pt = 0; pt < RCU_BOOT_NR_POINTS; pt++) {
		eb_expect_reached(test, pt);
		eb_expect_cb(test, &eb_points[pt].cb, "call_rcu()", pt);
		eb_expect_cb(test, &eb_points[pt].scb, "call_srcu()", pt);
	}
}

static void eb_expect_at_once(struct kunit *test, struct eb_sync *s, const char *what,
			      enum rcu_boot_point pt)
{
	KUNIT_EXPECT_TRUE_MSG(test, s->tried && s->returned, "%s at %s was not called", what,
			      eb_point_name[pt]);
	KUNIT_EXPECT_FALSE_MSG(test, s->cookie_before,
			       "a fresh polled cookie read complete before %s at %s",
			       what, eb_point_name[pt]);
	KUNIT_EXPECT_TRUE_MSG(test, s->cookie_after,
			      "%s at %s did not count as a grace period for the polled API",
			      what, eb_point_name[pt]);
	KUNIT_EXPECT_TRUE_MSG(test, s->full_after,
			      "%s at %s did not complete a full polled state", what,
			      eb_point_name[pt]);
}

/*
 * Covers: EB-3
 *
 * While one CPU runs with preemption off and RCU_SCHEDULER_INACTIVE
 * (before rcu_init(), interrupts off, and when the scheduler is about to
 * start, interrupts on), synchronize_rcu() and
 * synchronize_rcu_expedited() return (they cannot wait there: boot would
 * hang) and count as grace periods: a polled cookie taken before each is
 * incomplete before it and complete after it.
 */
static void rcu_boot_sync_very_early(struct kunit *test)
{
	static const enum rcu_boot_point pts[] = {
		RCU_BOOT_BEFORE_INIT, RCU_BOOT_SCHED_STARTING,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(pts); i++) {
		struct eb_point *p = &eb_points[pts[i]];

		eb_expect_reached(test, pts[i]);
		KUNIT_EXPECT_EQ(test, p->sched, RCU_SCHEDULER_INACTIVE);
		KUNIT_EXPECT_EQ(test, p->online, 1);
		eb_expect_at_once(test, &p->sync, "synchronize_rcu()", pts[i]);
		eb_expect_at_once(test, &p->exp, "synchronize_rcu_expedited()", pts[i]);
	}
	KUNIT_EXPECT_TRUE(test, eb_points[RCU_BOOT_BEFORE_INIT].irqs_disabled);
}

static void eb_expect_waits(struct kunit *test, struct eb_sync *s, const char *what)
{
	KUNIT_ASSERT_TRUE_MSG(test, s->tried, "%s was not tried", what);
	KUNIT_ASSERT_TRUE_MSG(test, s->returned, "%s did not return within %d ms: deadlock",
			      what, EB_BOUND_MS);
	KUNIT_EXPECT_FALSE(test, s->cookie_before);
	KUNIT_EXPECT_TRUE_MSG(test, s->cookie_after, "%s: polled cookie", what);
	KUNIT_EXPECT_TRUE_MSG(test, s->full_after, "%s: full polled state", what);
	KUNIT_EXPECT_NE_MSG(test, s->reader_done_at, 0, "%s: the reader never finished", what);
	KUNIT_EXPECT_LT_MSG(test, s->reader_done_at, s->returned_at,
			    "%s returned before the reader it had to wait for", what);
	/* PREEMPT=n: a reader cannot be preempted on the only CPU. */
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		KUNIT_EXPECT_TRUE_MSG(test, s->reader_inside,
				      "%s started after the reader ended: nothing was tested",
				      what);
}

/*
 * Covers: EB-4
 *
 * In the RCU_SCHEDULER_INIT window: at rcu_scheduler_starting(),
 * synchronize_rcu() and synchronize_rcu_expedited() return and count as
 * grace periods; at an early_initcall (still one CPU), a normal and an
 * expedited synchronous grace period started while another task is
 * inside a reader (preempted there with PREEMPT=y) return within a bound
 * (no deadlock), only after that reader ended, and complete polled
 * states taken before them.
 */
static void rcu_boot_sync_sched_init(struct kunit *test)
{
	struct eb_point *s = &eb_points[RCU_BOOT_SCHED_INIT];
	struct eb_point *e = &eb_points[RCU_BOOT_EARLY_INITCALL];

	eb_expect_reached(test, RCU_BOOT_SCHED_INIT);
	KUNIT_EXPECT_EQ(test, s->sched, RCU_SCHEDULER_INIT);
	eb_expect_at_once(test, &s->sync, "synchronize_rcu()", RCU_BOOT_SCHED_INIT);
	eb_expect_at_once(test, &s->exp, "synchronize_rcu_expedited()", RCU_BOOT_SCHED_INIT);

	eb_expect_reached(test, RCU_BOOT_EARLY_INITCALL);
	KUNIT_EXPECT_EQ(test, e->sched, RCU_SCHEDULER_INIT);
	KUNIT_EXPECT_EQ(test, e->online, 1);
	eb_expect_waits(test, &e->sync, "synchronize_rcu() (normal)");
	eb_expect_waits(test, &e->exp, "synchronize_rcu_expedited()");
}

/*
 * Covers: EB-5
 *
 * At an early_initcall, rcu_barrier(), srcu_barrier() and the Tasks
 * barriers that are configured each return within a bound, after the
 * callback queued just before them has run; rcu_barrier() and
 * srcu_barrier() also find every callback of their flavor queued earlier
 * in boot (from before rcu_init() on) run.
 */
static void rcu_boot_barriers(struct kunit *test)
{
	struct eb_point *e = &eb_points[RCU_BOOT_EARLY_INITCALL];
	enum eb_barrier b;

	eb_expect_reached(test, RCU_BOOT_EARLY_INITCALL);
	for (b = 0; b < EB_NR_BARRIERS; b++) {
		struct eb_barrier_rec *r = &e->barrier[b];

		if (!eb_flavor_configured(b)) {
			kunit_info(test, "%s: flavor not configured\n", eb_barrier_name[b]);
			continue;
		}
		KUNIT_EXPECT_TRUE_MSG(test, r->tried, "%s", eb_barrier_name[b]);
		KUNIT_EXPECT_TRUE_MSG(test, r->returned, "%s did not return within %d ms",
				      eb_barrier_name[b], EB_BOUND_MS);
		KUNIT_EXPECT_EQ_MSG(test, r->own_ran, 1,
				    "%s returned before the callback queued just before it ran",
				    eb_barrier_name[b]);
		KUNIT_EXPECT_EQ_MSG(test, r->early_missing, 0,
				    "%s returned before callbacks queued earlier in boot ran",
				    eb_barrier_name[b]);
	}
}

/*
 * Covers: EB-4
 *
 * Tasks RCU in the RCU_SCHEDULER_INIT window: a synchronize_rcu_tasks()
 * that drives its grace period itself, because the flavor's kthread had
 * not run yet, neither deadlocks against that kthread starting and
 * sleeping meanwhile nor is overtaken by boot: it was recorded with the
 * kthread asleep, in RCU_SCHEDULER_INIT, it returned only after a full
 * Tasks RCU grace period (the flavor's sequence passed the snapshot taken
 * when it started), and boot went on to the early_initcalls after it.
 * A deadlock there hangs boot, which the runner reports as a hang with
 * no KTAP output.
 *
 * Skips when the kthread ran before the self test called
 * synchronize_rcu_tasks(): no mid-boot grace period then (not seen in
 * the runs measured; the scheduler lets a new task wait its turn).
 *
 * May skip: x86_64, arm64
 */
static void rcu_boot_tasks_sync_midboot(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_TASKS_RCU) || !IS_ENABLED(CONFIG_PROVE_RCU))
		kunit_skip(test, "needs CONFIG_TASKS_RCU and CONFIG_PROVE_RCU (its self test)");
	if (!eb_midboot.reached)
		kunit_skip(test, "its kthread ran first: no mid-boot grace period this boot");
	KUNIT_EXPECT_EQ(test, eb_midboot.sched, RCU_SCHEDULER_INIT);
	KUNIT_EXPECT_TRUE_MSG(test, eb_midboot.asleep,
			      "the Tasks RCU kthread %s within %d ms: the race was not set up",
			      eb_midboot.started_before ? "did not go to sleep" : "did not start",
			      EB_MIDBOOT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, eb_midboot.ended, "the mid-boot grace period never returned");
	KUNIT_EXPECT_TRUE_MSG(test, eb_midboot.gp_done,
			      "the mid-boot grace period returned before a full one ended");
	eb_expect_reached(test, RCU_BOOT_EARLY_INITCALL);
	KUNIT_EXPECT_LT_MSG(test, eb_midboot.at, eb_points[RCU_BOOT_EARLY_INITCALL].at,
			    "the mid-boot grace period was recorded after the early_initcalls");
}

static struct kunit_case rcu_boot_cases[] = {
	KUNIT_CASE(rcu_boot_readers_before_init),
	KUNIT_CASE(rcu_boot_call_rcu_every_window),
	KUNIT_CASE(rcu_boot_sync_very_early),
	KUNIT_CASE(rcu_boot_sync_sched_init),
	KUNIT_CASE(rcu_boot_barriers),
	KUNIT_CASE(rcu_boot_tasks_sync_midboot),
	{}
};

static struct kunit_suite rcu_boot_suite = {
	.name = "rcu_boot",
	.test_cases = rcu_boot_cases,
};

kunit_test_suite(rcu_boot_suite);

MODULE_DESCRIPTION("KUnit tests for RCU during early boot");
MODULE_LICENSE("GPL");
