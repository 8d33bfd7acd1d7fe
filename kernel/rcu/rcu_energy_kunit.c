// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the "Energy efficiency" requirements of "RCU
 * requirements, part 3" that need a tickless kernel: idle CPUs and
 * nohz_full user execution are extended quiescent states that grace
 * periods complete around without waking anybody.  Under a periodic
 * tick (CONFIG=default, nopreempt) they skip, saying so; CONFIG=nohz
 * (NO_HZ_FULL, nohz_full=2-3) runs them.  The EN cases that need no
 * tickless kernel are in rcu_irq_kunit.c.
 */

#include <kunit/test.h>
#include <linux/context_tracking.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/tick.h>

#include "kunit_rcu.h"

/* Grace-period pairs tried while waiting for an idle CPU to stay asleep. */
#define RCU_ENERGY_IDLE_TRIES	30

/*
 * A normal and an expedited grace period, started together, each bounded
 * and each proved on its own sequence; true if both ended.
 */
static bool rcu_energy_gp_pair(void)
{
	struct kunit_rcu_seq seq;

	kunit_rcu_seq_snap(&seq);
	start_poll_synchronize_rcu();
	kunit_rcu_start_exp();
	return kunit_rcu_wait_until(kunit_rcu_normal_done, &seq, KUNIT_RCU_GP_TIMEOUT_MS) &&
	       kunit_rcu_wait_until(kunit_rcu_exp_done, &seq, KUNIT_RCU_GP_TIMEOUT_MS);
}

/* The first online nohz_full CPU, or -1. */
static int rcu_energy_nohz_full_cpu(void)
{
	int cpu;

	for_each_online_cpu(cpu)
		if (tick_nohz_full_cpu(cpu))
			return cpu;
	return -1;
}

/*
 * Covers: EN-1
 * May skip: default, nopreempt, ghost
 *
 * An idle CPU whose tick is stopped sits in an extended quiescent
 * state, and the grace-period machinery credits it from its
 * context-tracking counter instead of waking it: a normal and an
 * expedited grace period complete while that CPU's counter stays
 * unchanged (any interrupt taken from idle would move it).  Its own
 * timers may wake it now and then, so a few pairs are tried; one
 * undisturbed pair is required.
 *
 * The CPU watched is a nohz_full one where there is one: RCU's kthreads
 * and unbound work stay on the housekeeping CPUs, so only RCU reaching
 * out to it (an IPI, a forced tick) can wake it.  An idle housekeeping
 * CPU is where the scheduler wakes the grace-period kthread itself
 * (CONFIG=nohz, x86_64: woken during 30 of 30 normal grace periods).
 */
static void rcu_energy_idle_cpu_not_woken(struct kunit *test)
{
	int cpu = rcu_energy_nohz_full_cpu(), before, after, i, quiet = -1;

	if (!IS_ENABLED(CONFIG_NO_HZ_COMMON))
		kunit_skip(test, "an idle CPU takes every tick without NO_HZ: see CONFIG=nohz");
	if (cpu < 0)
		cpu = kunit_rcu_target_cpu(test);
	else
		kunit_rcu_avoid_cpu(test, cpu);
	for (i = 0; i < RCU_ENERGY_IDLE_TRIES && quiet < 0; i++) {
		msleep(20);
		before = ct_dynticks_cpu_acquire(cpu);
		if (before & RCU_DYNTICKS_IDX)
			continue;	/* not idle just now */
		KUNIT_ASSERT_TRUE_MSG(test, rcu_energy_gp_pair(),
				      "grace periods did not end within %d ms with CPU %d idle",
				      KUNIT_RCU_GP_TIMEOUT_MS, cpu);
		after = ct_dynticks_cpu_acquire(cpu);
		if (after == before)
			quiet = i;
	}
	KUNIT_EXPECT_GE_MSG(test, quiet, 0,
			    "idle CPU %d was woken during each of %d grace-period pairs",
			    cpu, RCU_ENERGY_IDLE_TRIES);
}

struct rcu_energy_user {
	atomic_t in_user, left, release;
	bool released;
	int state_in;
	struct kunit_rcu_snap before, in, after;
};

/*
 * A kthread "returns to user mode" the way the entry code does it on a
 * nohz_full CPU, and stays there with interrupts off until released.
 * It borrows init_mm: context tracking wants user tasks to have an mm.
 */
static void rcu_energy_user_fn(void *arg)
{
#ifdef CONFIG_CONTEXT_TRACKING_USER
	struct rcu_energy_user *u = arg;

	kthread_use_mm(&init_mm);
	kunit_rcu_snap(&u->before);
	local_irq_disable();
	ct_user_enter(CONTEXT_USER);
	kunit_rcu_snap(&u->in);
	u->state_in = __ct_state();
	atomic_set_release(&u->in_user, 1);
	u->released = kunit_rcu_spin_flag(&u->release, 3 * KUNIT_RCU_PROMPT_MS);
	ct_user_exit(CONTEXT_USER);
	atomic_set_release(&u->left, 1);
	local_irq_enable();
	kunit_rcu_snap(&u->after);
	kthread_unuse_mm(&init_mm);
#endif
}

/*
 * Covers: EN-3
 * May skip: default, nopreempt, ghost
 *
 * On a nohz_full CPU, user-mode execution is an extended quiescent
 * state: after ct_user_enter() (what the entry code calls on the way
 * out to user mode) RCU is not watching and the context is USER, and
 * normal and expedited grace periods complete while the CPU stays
 * there; ct_user_exit() makes RCU watch again, the counter having
 * moved by exactly one entry and exit.
 */
static void rcu_energy_nohz_full_user(struct kunit *test)
{
	struct rcu_energy_user *u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	struct kunit_rcu_work *w;
	bool gps_done;
	int cpu;

	KUNIT_ASSERT_NOT_NULL(test, u);
	if (!IS_ENABLED(CONFIG_NO_HZ_FULL) || !IS_ENABLED(CONFIG_CONTEXT_TRACKING_USER))
		kunit_skip(test, "needs NO_HZ_FULL and a nohz_full= CPU: see CONFIG=nohz");
	cpu = rcu_energy_nohz_full_cpu();
	if (cpu < 0)
		kunit_skip(test, "no nohz_full CPU online: boot with nohz_full=");
	kunit_rcu_avoid_cpu(test, cpu);

	w = kunit_rcu_start_on_cpu(test, cpu, rcu_energy_user_fn, u, false);
	if (!kunit_rcu_wait_flag(&u->in_user, KUNIT_RCU_PROMPT_MS))
		KUNIT_FAIL(test, "CPU %d never reached user mode", cpu);
	gps_done = rcu_energy_gp_pair() && !atomic_read(&u->left);
	atomic_set_release(&u->release, 1);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, 4 * KUNIT_RCU_PROMPT_MS));

	KUNIT_EXPECT_TRUE_MSG(test, gps_done,
			      "grace periods did not end while CPU %d stayed in user mode", cpu);
	KUNIT_EXPECT_TRUE_MSG(test, u->released, "CPU %d left user mode on its own bound", cpu);
	KUNIT_EXPECT_TRUE(test, u->before.watching);
	KUNIT_EXPECT_FALSE_MSG(test, u->in.watching, "RCU watches a nohz_full CPU in user mode");
	KUNIT_EXPECT_EQ(test, u->state_in, CONTEXT_USER);
	KUNIT_EXPECT_EQ(test, u->in.dynticks, u->before.dynticks + RCU_DYNTICKS_IDX);
	KUNIT_EXPECT_TRUE(test, u->after.watching);
	KUNIT_EXPECT_EQ(test, u->after.dynticks, u->before.dynticks + 2 * RCU_DYNTICKS_IDX);
}

static struct kunit_case rcu_energy_cases[] = {
	KUNIT_CASE(rcu_energy_idle_cpu_not_woken),
	KUNIT_CASE(rcu_energy_nohz_full_user),
	{}
};

static struct kunit_suite rcu_energy_suite = {
	.name = "rcu_energy",
	.test_cases = rcu_energy_cases,
};

kunit_test_suite(rcu_energy_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's tickless energy-efficiency requirements");
MODULE_LICENSE("GPL");
