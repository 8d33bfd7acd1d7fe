// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for RCU's Linux-kernel requirements ("RCU requirements,
 * part 3").  Every case says which requirement IDs of the kunit-rcu
 * catalogue it checks in a "Covers:" line; the tooling builds its
 * traceability matrix from those lines.
 *
 * The suites run built in, after every CPU is online but before
 * rcu_end_inkernel_boot(): grace periods are expedited unless a case
 * asks otherwise.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/processor.h>
#include <linux/jiffies.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

/* Nesting depth of the reader-nesting case. */
#define RCU_KUNIT_NEST_DEPTH		4

/* How long a reader is held while checking that a grace period waits. */
#define RCU_KUNIT_HOLD_MS		200

/* Bound on a grace period reaching a reader that holds it up. */
#define RCU_KUNIT_REACH_MS		5000

/* Bound on a grace period that nothing holds up. */
#define RCU_KUNIT_GP_TIMEOUT_MS		20000

/*
 * Reader depth as the implementation tracks it: ->rcu_read_lock_nesting
 * for preemptible RCU, the preemption count otherwise.
 */
static int rcu_kunit_reader_depth(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		return rcu_preempt_depth();
	return preempt_count() & PREEMPT_MASK;
}

/*
 * Spins up to @ms without leaving the caller's RCU reader (if any);
 * returns true as soon as @done(@arg) does.
 */
static bool rcu_kunit_spin_until(bool (*done)(void *arg), void *arg, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		if (done(arg))
			return true;
		cpu_relax();
	} while (time_before(jiffies, end));
	return done(arg);
}

static bool rcu_kunit_cookie_done(void *arg)
{
	return poll_state_synchronize_rcu(*(unsigned long *)arg);
}

/* Either of two full states complete. */
static bool rcu_kunit_full_done(void *arg)
{
	struct rcu_gp_oldstate *rgos = arg;

	return poll_state_synchronize_rcu_full(&rgos[0]) ||
	       poll_state_synchronize_rcu_full(&rgos[1]);
}

/*
 * The expedited grace period of cookie @arg is over, or has reached the
 * current reader: preemptible RCU marked it (->rcu_read_unlock_special)
 * as holding up an expedited grace period or as preempted.
 */
static bool rcu_kunit_gp_reached_reader(void *arg)
{
#ifdef CONFIG_PREEMPT_RCU
	union rcu_special special = { .s = READ_ONCE(current->rcu_read_unlock_special.s) };

	if (special.b.exp_hint || special.b.blocked)
		return true;
#endif
	return rcu_kunit_cookie_done(arg);
}

/* Sleeps (outside any reader) until @cookie completes or @ms pass. */
static bool rcu_kunit_wait_gp(unsigned long cookie, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (!poll_state_synchronize_rcu(cookie)) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(1000, 2000);
	}
	return true;
}

/*
 * Covers: SCH-1
 *
 * Nested rcu_read_lock() calls are counted one by one, and only the
 * outermost rcu_read_unlock() ends the reader: a grace period started
 * inside the nest cannot complete before it, however many inner
 * unlocks (each a chance to run the unlock special processing) come
 * first.  6.1 counts in current->rcu_read_lock_nesting (no negative
 * "unlocking" value any more); without preemptible RCU the count is
 * the preemption count.
 */
static void rcu_read_lock_nesting(struct kunit *test)
{
	int depth_in[RCU_KUNIT_NEST_DEPTH + 1];
	int depth_out[RCU_KUNIT_NEST_DEPTH + 1];
	bool done_nested, done_outer;
	unsigned long cookie;
	int base, i;

	if (!IS_ENABLED(CONFIG_PREEMPT_RCU) && !IS_ENABLED(CONFIG_PREEMPT_COUNT))
		kunit_skip(test, "no reader depth to observe without PREEMPT_RCU or PREEMPT_COUNT");

	base = rcu_kunit_reader_depth();
	KUNIT_ASSERT_EQ_MSG(test, base, 0, "test thread already inside a reader");

	for (i = 1; i <= RCU_KUNIT_NEST_DEPTH; i++) {
		rcu_read_lock();
		depth_in[i] = rcu_kunit_reader_depth();
	}
	/*
	 * Let the grace period reach this reader (IPI, deferred QS request),
	 * so that the inner unlocks below have special processing to run.
	 */
	cookie = start_poll_synchronize_rcu_expedited();
	rcu_kunit_spin_until(rcu_kunit_gp_reached_reader, &cookie, RCU_KUNIT_REACH_MS);
	done_nested = poll_state_synchronize_rcu(cookie);
	for (i = RCU_KUNIT_NEST_DEPTH; i > 1; i--) {
		rcu_read_unlock();
		depth_out[i - 1] = rcu_kunit_reader_depth();
	}
	/* Depth 1 is left: the outermost reader is still running. */
	done_outer = rcu_kunit_spin_until(rcu_kunit_cookie_done, &cookie, RCU_KUNIT_HOLD_MS);
	rcu_read_unlock();
	depth_out[0] = rcu_kunit_reader_depth();

	for (i = 1; i <= RCU_KUNIT_NEST_DEPTH; i++)
		KUNIT_EXPECT_EQ_MSG(test, depth_in[i], i, "depth after lock number %d", i);
	for (i = 0; i < RCU_KUNIT_NEST_DEPTH; i++)
		KUNIT_EXPECT_EQ_MSG(test, depth_out[i], i, "depth after unlock down to %d", i);
	KUNIT_EXPECT_FALSE_MSG(test, done_nested,
			       "grace period ended inside %d nested readers", RCU_KUNIT_NEST_DEPTH);
	KUNIT_EXPECT_FALSE_MSG(test, done_outer,
			       "grace period ended after the inner unlocks, before the outermost");
	KUNIT_EXPECT_TRUE_MSG(test, rcu_kunit_wait_gp(cookie, RCU_KUNIT_GP_TIMEOUT_MS),
			      "grace period did not end after the outermost unlock");
}

/*
 * Covers: POLL-1
 *
 * get_state_synchronize_rcu() taken inside a reader cannot read as
 * complete while that reader runs, even with a grace period pushed;
 * after synchronize_rcu() it reads as complete.
 */
static void rcu_poll_get_state(struct kunit *test)
{
	unsigned long cookie;
	bool done_inside;

	rcu_read_lock();
	cookie = get_state_synchronize_rcu();
	start_poll_synchronize_rcu_expedited();
	done_inside = rcu_kunit_spin_until(rcu_kunit_cookie_done, &cookie, RCU_KUNIT_HOLD_MS);
	rcu_read_unlock();

	KUNIT_EXPECT_FALSE_MSG(test, done_inside,
			       "cookie completed while a reader older than it was running");
	synchronize_rcu();
	KUNIT_EXPECT_TRUE_MSG(test, poll_state_synchronize_rcu(cookie),
			      "cookie not complete after synchronize_rcu()");
	cond_synchronize_rcu(cookie);	/* Must return at once; hangs are caught. */
}

/*
 * Covers: POLL-1
 *
 * start_poll_synchronize_rcu() starts the grace period its cookie needs:
 * polling alone, with no other update-side call, sees it complete.  A
 * completed-state cookie always reads as complete.
 */
static void rcu_poll_start(struct kunit *test)
{
	unsigned long cookie, done = get_completed_synchronize_rcu();

	KUNIT_EXPECT_TRUE(test, poll_state_synchronize_rcu(done));
	cookie = start_poll_synchronize_rcu();
	KUNIT_EXPECT_FALSE(test, same_state_synchronize_rcu(cookie, done));
	KUNIT_EXPECT_TRUE_MSG(test, rcu_kunit_wait_gp(cookie, RCU_KUNIT_GP_TIMEOUT_MS),
			      "started grace period did not complete within %d ms",
			      RCU_KUNIT_GP_TIMEOUT_MS);
}

/*
 * Covers: POLL-1
 *
 * The _full variants: a state taken inside a reader is not complete
 * while the reader runs, and is after a grace period, whether it was
 * normal or expedited.
 */
static void rcu_poll_full(struct kunit *test)
{
	struct rcu_gp_oldstate rgos[2], done;
	struct rcu_gp_oldstate *norm = &rgos[0], *exp = &rgos[1];
	bool done_inside;

	get_completed_synchronize_rcu_full(&done);
	KUNIT_EXPECT_TRUE(test, poll_state_synchronize_rcu_full(&done));

	rcu_read_lock();
	get_state_synchronize_rcu_full(norm);
	start_poll_synchronize_rcu_expedited_full(exp);
	done_inside = rcu_kunit_spin_until(rcu_kunit_full_done, rgos, RCU_KUNIT_HOLD_MS);
	rcu_read_unlock();

	KUNIT_EXPECT_FALSE_MSG(test, done_inside,
			       "full state completed while a reader older than it was running");
	synchronize_rcu_expedited();
	KUNIT_EXPECT_TRUE(test, poll_state_synchronize_rcu_full(norm));
	KUNIT_EXPECT_TRUE(test, poll_state_synchronize_rcu_full(exp));

	get_state_synchronize_rcu_full(norm);
	KUNIT_EXPECT_FALSE(test, same_state_synchronize_rcu_full(norm, &done));
	synchronize_rcu();
	KUNIT_EXPECT_TRUE(test, poll_state_synchronize_rcu_full(norm));
}

static struct kunit_case rcu_core_cases[] = {
	KUNIT_CASE(rcu_read_lock_nesting),
	KUNIT_CASE(rcu_poll_get_state),
	KUNIT_CASE(rcu_poll_start),
	KUNIT_CASE(rcu_poll_full),
	{}
};

static struct kunit_suite rcu_core_suite = {
	.name = "rcu_core",
	.test_cases = rcu_core_cases,
};

kunit_test_suite(rcu_core_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's Linux-kernel requirements");
MODULE_LICENSE("GPL");
