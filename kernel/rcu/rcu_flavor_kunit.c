// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the consolidated RCU flavors ("RCU requirements, part
 * 3", "Bottom-Half Flavor", "Sched Flavor"): since v4.20 the bh and sched
 * update-side APIs (synchronize_rcu_bh(), call_rcu_sched(), ...) are gone
 * and vanilla RCU's grace periods wait for their readers too.  So a
 * normal and an expedited grace period must each wait for every kind of
 * region the article counts as a reader, and the lockdep checks must
 * say which reader is held.
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/interrupt.h>
#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched/clock.h>

#include "kunit_rcu.h"

/* Readers lockdep-RCU reports as held, as a bit mask. */
#define FLAVOR_RCU	BIT(0)	/* rcu_read_lock_held() */
#define FLAVOR_BH	BIT(1)	/* rcu_read_lock_bh_held() */
#define FLAVOR_SCHED	BIT(2)	/* rcu_read_lock_sched_held() */
#define FLAVOR_ANY	BIT(3)	/* rcu_read_lock_any_held() */

/**
 * struct flavor_region - a region the article counts as an RCU reader
 * @name: how it is entered, for the case's parameter description
 * @enter: enter it
 * @exit: leave it
 * @held: the lockdep-RCU checks that must say "held" inside it
 */
struct flavor_region {
	const char *name;
	void (*enter)(void);
	void (*exit)(void);
	unsigned int held;
};

static void flavor_bh_lock(void) { rcu_read_lock_bh(); }
static void flavor_bh_unlock(void) { rcu_read_unlock_bh(); }
static void flavor_bh_disable(void) { local_bh_disable(); }
static void flavor_bh_enable(void) { local_bh_enable(); }
static void flavor_preempt_disable(void) { preempt_disable(); }
static void flavor_preempt_enable(void) { preempt_enable(); }
static void flavor_sched_lock(void) { rcu_read_lock_sched(); }
static void flavor_sched_unlock(void) { rcu_read_unlock_sched(); }
static void flavor_sched_lock_notrace(void) { rcu_read_lock_sched_notrace(); }
static void flavor_sched_unlock_notrace(void) { rcu_read_unlock_sched_notrace(); }
static void flavor_irq_disable(void) { local_irq_disable(); }
static void flavor_irq_enable(void) { local_irq_enable(); }

static const struct flavor_region flavor_regions[] = {
	{ "rcu_read_lock_bh()", flavor_bh_lock, flavor_bh_unlock,
	  FLAVOR_BH | FLAVOR_SCHED | FLAVOR_ANY },
	{ "local_bh_disable()", flavor_bh_disable, flavor_bh_enable,
	  FLAVOR_BH | FLAVOR_SCHED | FLAVOR_ANY },
	{ "preempt_disable()", flavor_preempt_disable, flavor_preempt_enable,
	  FLAVOR_SCHED | FLAVOR_ANY },
	{ "rcu_read_lock_sched()", flavor_sched_lock, flavor_sched_unlock,
	  FLAVOR_SCHED | FLAVOR_ANY },
	{ "rcu_read_lock_sched_notrace()", flavor_sched_lock_notrace,
	  flavor_sched_unlock_notrace, FLAVOR_SCHED | FLAVOR_ANY },
	{ "local_irq_disable()", flavor_irq_disable, flavor_irq_enable,
	  FLAVOR_BH | FLAVOR_SCHED | FLAVOR_ANY },
};

static void flavor_region_desc(const struct flavor_region *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(flavor_region, flavor_regions, flavor_region_desc);

static unsigned int flavor_held_now(void)
{
	return (rcu_read_lock_held() ? FLAVOR_RCU : 0) |
	       (rcu_read_lock_bh_held() ? FLAVOR_BH : 0) |
	       (rcu_read_lock_sched_held() ? FLAVOR_SCHED : 0) |
	       (rcu_read_lock_any_held() ? FLAVOR_ANY : 0);
}

/**
 * struct flavor_hold - a region held open in a kthread on another CPU
 * @region: the region
 * @hold: its handshake with kunit_rcu_expect_gp_held()
 * @outside: flavor_held_now() before the region, preemptible
 * @inside: flavor_held_now() inside it
 * @preemptible: preemptible() inside it
 */
struct flavor_hold {
	const struct flavor_region *region;
	struct kunit_rcu_hold hold;
	unsigned int outside;
	unsigned int inside;
	bool preemptible;
};

static void flavor_hold_fn(void *arg)
{
	struct flavor_hold *fh = arg;

	fh->outside = flavor_held_now();
	fh->region->enter();
	fh->inside = flavor_held_now();
	fh->preemptible = preemptible();
	kunit_rcu_hold_spin(&fh->hold);
	fh->region->exit();
	kunit_rcu_hold_ended(&fh->hold);
}

/*
 * Covers: BH-1, SCHED-1, SCHED-2
 *
 * One parameter per kind of reader: a kthread on another CPU enters the
 * region and spins in it; a normal and an expedited grace period
 * requested meanwhile both stay pending (each proved on its own
 * sequence) until the region ends by itself on release, then both end.
 * Preemption is off inside (also for the _notrace reader), and under
 * lockdep-RCU the *_held() checks say "held" for exactly the readers the
 * region is, and nothing outside it.
 */
static void rcu_flavor_region_holds_gp(struct kunit *test)
{
	const struct flavor_region *r = test->param_value;
	struct flavor_hold *fh = kunit_kzalloc(test, sizeof(*fh), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *w;

	KUNIT_ASSERT_NOT_NULL(test, fh);
	fh->region = r;
	w = kunit_rcu_start_on_cpu(test, cpu, flavor_hold_fn, fh, false);
	kunit_rcu_expect_gp_held(test, &fh->hold, r->name);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS));
	KUNIT_EXPECT_TRUE_MSG(test, fh->hold.released,
			      "%s: the region outlived its bound", r->name);
	KUNIT_EXPECT_FALSE_MSG(test, fh->preemptible, "%s: preemptible inside", r->name);
	if (!debug_lockdep_rcu_enabled())
		return;	/* The checks answer "held" for everything. */
	KUNIT_EXPECT_EQ_MSG(test, fh->inside, r->held,
			    "%s: *_held() inside (1: rcu, 2: bh, 4: sched, 8: any)", r->name);
	KUNIT_EXPECT_EQ_MSG(test, fh->outside, 0U,
			    "%s: *_held() outside any reader (1: rcu, 2: bh, 4: sched, 8: any)",
			    r->name);
}

/* BH-2: a tasklet that keeps its CPU in softirq processing until stopped. */
struct flavor_flood {
	struct tasklet_struct t;
	int cpu;
	atomic_t stop;
	atomic_t runs;			/* handler runs so far */
	atomic_t by_ksoftirqd;		/* of those, run by the CPU's ksoftirqd */
	bool wrong_cpu;
};

/* One handler run spins this long, then runs again unless stopped. */
#define FLAVOR_FLOOD_RUN_US	1000
/* Runs by ksoftirqd before the grace periods start: the flood is steady. */
#define FLAVOR_FLOOD_STEADY	20
/* Each grace period must end within this, while the flood goes on. */
#define FLAVOR_FLOOD_GP_MS	1000

static void flavor_flood_fn(struct tasklet_struct *t)
{
	struct flavor_flood *f = from_tasklet(f, t, t);
	u64 end = local_clock() + FLAVOR_FLOOD_RUN_US * NSEC_PER_USEC;

	atomic_inc(&f->runs);
	if (current == this_cpu_ksoftirqd())
		atomic_inc(&f->by_ksoftirqd);
	if (smp_processor_id() != f->cpu)
		f->wrong_cpu = true;
	while (local_clock() < end)
		cpu_relax();
	if (!atomic_read(&f->stop))
		tasklet_schedule(&f->t);	/* on this CPU again */
}

/* On the flood's CPU: tasklet_schedule() queues on the calling CPU. */
static void flavor_flood_start(void *arg)
{
	struct flavor_flood *f = arg;

	tasklet_schedule(&f->t);
}

/* Ends the flood on every path out of the case. */
static void flavor_flood_free(struct kunit_resource *res)
{
	struct flavor_flood *f = res->data;

	atomic_set(&f->stop, 1);
	tasklet_kill(&f->t);
}

static bool flavor_flood_steady(void *arg)
{
	struct flavor_flood *f = arg;

	return atomic_read(&f->by_ksoftirqd) >= FLAVOR_FLOOD_STEADY;
}

/*
 * Covers: BH-2
 *
 * A CPU stays in softirq processing (a tasklet that spins 1 ms and
 * reschedules itself, soon handed to ksoftirqd, as under a network
 * flood), and grace periods still complete: a normal one (expediting
 * off) and then an expedited one, each proved on its own sequence, end
 * within FLAVOR_FLOOD_GP_MS while the tasklet keeps running on that CPU
 * (its run count still grows after both ended).
 */
static void rcu_flavor_softirq_flood(struct kunit *test)
{
	struct flavor_flood *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int runs_before, runs_after, runs_later;
	struct kunit_rcu_seq seq;
	bool steady, normal, exp;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->cpu = kunit_rcu_target_cpu(test);
	tasklet_setup(&f->t, flavor_flood_fn);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL, flavor_flood_free,
							 GFP_KERNEL, f));
	kunit_rcu_unexpedite(test);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_run_on_cpu(test, f->cpu, flavor_flood_start, f, false,
						     KUNIT_RCU_PROMPT_MS));
	steady = kunit_rcu_wait_until(flavor_flood_steady, f, KUNIT_RCU_PROMPT_MS);
	runs_before = atomic_read(&f->runs);
	kunit_rcu_seq_snap(&seq);
	start_poll_synchronize_rcu();
	normal = kunit_rcu_wait_until(kunit_rcu_normal_done, &seq, FLAVOR_FLOOD_GP_MS);
	kunit_rcu_seq_snap(&seq);
	kunit_rcu_start_exp();
	exp = kunit_rcu_wait_until(kunit_rcu_exp_done, &seq, FLAVOR_FLOOD_GP_MS);
	runs_after = atomic_read(&f->runs);
	kunit_rcu_delay_ms(20);
	runs_later = atomic_read(&f->runs);
	atomic_set(&f->stop, 1);
	tasklet_kill(&f->t);

	KUNIT_ASSERT_TRUE_MSG(test, steady, "the tasklet on CPU %d never ran %d times in ksoftirqd",
			      f->cpu, FLAVOR_FLOOD_STEADY);
	KUNIT_EXPECT_FALSE_MSG(test, f->wrong_cpu, "the tasklet ran on a CPU other than %d",
			       f->cpu);
	kunit_info(test, "tasklet runs: %d before the grace periods, %d during, %d by ksoftirqd\n",
		   runs_before, runs_after - runs_before, atomic_read(&f->by_ksoftirqd));
	KUNIT_EXPECT_TRUE_MSG(test, normal,
			      "a normal grace period did not end within %d ms of a softirq flood",
			      FLAVOR_FLOOD_GP_MS);
	KUNIT_EXPECT_TRUE_MSG(test, exp,
			      "an expedited grace period did not end within %d ms of a softirq flood",
			      FLAVOR_FLOOD_GP_MS);
	KUNIT_EXPECT_GT_MSG(test, runs_later, runs_after,
			    "the flood stopped before the grace periods ended");
}

static struct kunit_case rcu_flavor_cases[] = {
	KUNIT_CASE_PARAM(rcu_flavor_region_holds_gp, flavor_region_gen_params),
	KUNIT_CASE(rcu_flavor_softirq_flood),
	{}
};

static struct kunit_suite rcu_flavor_suite = {
	.name = "rcu_flavor",
	.test_cases = rcu_flavor_cases,
};

kunit_test_suite(rcu_flavor_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's consolidated bh and sched flavors");
MODULE_LICENSE("GPL");
