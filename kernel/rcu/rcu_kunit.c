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

#include "kunit_rcu.h"
#include "rcu.h"

/* Either of two full states complete. */
static bool rcu_kunit_full_done(void *arg)
{
	struct rcu_gp_oldstate *rgos = arg;

	return poll_state_synchronize_rcu_full(&rgos[0]) ||
	       poll_state_synchronize_rcu_full(&rgos[1]);
}

/*
 * Covers: POLL-1
 *
 * get_state_synchronize_rcu() taken inside a reader cannot read as
 * complete while that reader runs, even with a grace period pushed;
 * after a normal synchronize_rcu() it reads as complete.
 *
 * In 6.1 the unsigned long cookies follow normal grace periods only: a
 * synchronize_rcu() that boot-time expediting turns into an expedited
 * grace period need not complete them (measured: CONFIG=nopreempt read
 * false in 2 of 5 boots).  The _full variants follow both, see
 * rcu_poll_full().  So the normal grace period is asked for here.
 */
static void rcu_poll_get_state(struct kunit *test)
{
	unsigned long cookie;
	bool done_inside;

	rcu_read_lock();
	cookie = get_state_synchronize_rcu();
	start_poll_synchronize_rcu_expedited();
	done_inside = kunit_rcu_spin_until(kunit_rcu_cookie_done, &cookie, KUNIT_RCU_HOLD_MS);
	rcu_read_unlock();

	KUNIT_EXPECT_FALSE_MSG(test, done_inside,
			       "cookie completed while a reader older than it was running");
	rcu_unexpedite_gp();
	synchronize_rcu();
	rcu_expedite_gp();
	KUNIT_EXPECT_TRUE_MSG(test, poll_state_synchronize_rcu(cookie),
			      "cookie not complete after a normal synchronize_rcu()");
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
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_cookie_done, &cookie,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "started grace period did not complete within %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
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
	done_inside = kunit_rcu_spin_until(rcu_kunit_full_done, rgos, KUNIT_RCU_HOLD_MS);
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
