// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for RCU's requirements on module unloading and CPU hotplug
 * ("RCU requirements, part 3": Loadable Modules, Hotplug CPU): the
 * "stop call_rcu(), then rcu_barrier()" exit pattern, callbacks of a CPU
 * that goes offline, and grace periods and barriers from CPU-hotplug
 * callbacks.  Every CPU taken offline is brought back by a kunit
 * resource, also when a case fails; every wait is bounded.
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/srcu.h>

#include "rcu.h"
#include "kunit_rcu.h"

/* Callbacks queued per CPU, and on how many CPUs at most. */
#define HP_CBS_PER_CPU		8
#define HP_SLOTS		(NR_CPUS > 64 ? 64 : NR_CPUS)

/* Bound on taking a CPU offline or online (TCG is slow at it). */
#define HP_HOTPLUG_MS		10000

struct hp_cb {
	struct rcu_head head;
	atomic_t *calls;	/* total invocations */
	atomic_t ran;		/* invocations of this callback */
	int cpu;		/* where it ran last */
};

struct hp_batch {
	struct hp_cb cbs[HP_SLOTS][HP_CBS_PER_CPU];
	atomic_t calls;
	int queued;
};

static void hp_cb_fn(struct rcu_head *head)
{
	struct hp_cb *cb = container_of(head, struct hp_cb, head);

	WRITE_ONCE(cb->cpu, raw_smp_processor_id());
	atomic_inc(&cb->ran);
	atomic_inc(cb->calls);
}

struct hp_queue {
	struct hp_batch *b;
	int slot;
};

/* Runs on the CPU whose callback list gets the callbacks. */
static void hp_queue_fn(void *arg)
{
	struct hp_queue *q = arg;
	int i;

	for (i = 0; i < HP_CBS_PER_CPU; i++) {
		struct hp_cb *cb = &q->b->cbs[q->slot][i];

		cb->calls = &q->b->calls;
		call_rcu(&cb->head, hp_cb_fn);
	}
}

/* Every callback of slots [0, slots) ran exactly once. */
static void hp_expect_each_once(struct kunit *test, struct hp_batch *b, int slots,
				const char *when)
{
	int s, i;

	for (s = 0; s < slots; s++)
		for (i = 0; i < HP_CBS_PER_CPU; i++)
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&b->cbs[s][i].ran), 1,
					    "callback %d of slot %d %s", i, s, when);
}

static bool hp_all_called(void *arg)
{
	struct hp_batch *b = arg;

	return atomic_read(&b->calls) >= b->queued;
}

/* rcu_barrier() in a kthread, so that a hung barrier fails the case. */
static void hp_barrier_fn(void *arg)
{
	rcu_barrier();
}

static bool hp_barrier(struct kunit *test, int cpu)
{
	return kunit_rcu_run_on_cpu(test, cpu, hp_barrier_fn, NULL, false,
				    KUNIT_RCU_GP_TIMEOUT_MS);
}

struct hp_exit {
	struct hp_batch *b;
	struct hp_queue q[HP_SLOTS];
	int slots;
	int bcpu;			/* the barrier's CPU */
	struct kunit_rcu_hold hold;	/* the reader that holds their grace period */
	atomic_t flushed;		/* the barrier's CPU has no callbacks left */
	atomic_t go;			/* call rcu_barrier() */
	atomic_t returned;		/* rcu_barrier() returned */
	int at_return;			/* callbacks run when it returned */
};

/*
 * The module's last call_rcu()s: cross-calls queue callbacks on every
 * online CPU but the barrier's.
 */
static void hp_exit_queue(struct hp_exit *e)
{
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (e->slots >= ARRAY_SIZE(e->q) || cpu == e->bcpu)
			continue;
		e->q[e->slots] = (struct hp_queue) { .b = e->b, .slot = e->slots };
		smp_call_function_single(cpu, hp_queue_fn, &e->q[e->slots], 1);
		e->slots++;
	}
	cpus_read_unlock();
	e->b->queued = e->slots * HP_CBS_PER_CPU;
}

/*
 * The module's exit function, on a CPU whose callback list it first
 * drains: nothing queues callbacks there before it calls rcu_barrier()
 * (this kthread only sleeps), so only other CPUs' callbacks can make
 * that barrier wait.
 */
static void hp_exit_barrier_fn(void *arg)
{
	struct hp_exit *e = arg;

	rcu_barrier();
	atomic_set_release(&e->flushed, 1);
	if (!kunit_rcu_wait_flag(&e->go, KUNIT_RCU_GP_TIMEOUT_MS))
		return;
	rcu_barrier();
	e->at_return = atomic_read(&e->b->calls);
	atomic_set_release(&e->returned, 1);
}

/*
 * Covers: MOD-1
 *
 * The module-exit pattern: callbacks are queued on every online CPU but
 * the barrier's own (which has none pending: a barrier there ran first,
 * in the same kthread, before the reader began), the queueing stops, and
 * rcu_barrier() is called while a reader on another CPU holds the grace
 * period they all wait for.  The callbacks
 * stay pending and the barrier does not return while the reader runs;
 * when it returns, every callback on every CPU has run exactly once, and
 * none runs after it.
 */
static void rcu_hotplug_barrier_at_exit(struct kunit *test)
{
	struct hp_exit *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct kunit_rcu_work *rw, *bw;
	int bcpu, rcpu, ran_held;
	bool early;

	KUNIT_ASSERT_NOT_NULL(test, e);
	e->b = kunit_kzalloc(test, sizeof(*e->b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->b);
	bcpu = kunit_rcu_target_cpu(test);
	rcpu = kunit_rcu_other_cpu(bcpu);
	e->bcpu = bcpu;

	bw = kunit_rcu_start_on_cpu(test, bcpu, hp_exit_barrier_fn, e, false);
	KUNIT_ASSERT_TRUE_MSG(test, bw && kunit_rcu_wait_flag(&e->flushed, KUNIT_RCU_GP_TIMEOUT_MS),
			      "the first rcu_barrier() on CPU %d did not return within %d ms",
			      bcpu, KUNIT_RCU_GP_TIMEOUT_MS);
	rw = kunit_rcu_start_on_cpu(test, rcpu, kunit_rcu_hold_reader, &e->hold, false);
	if (!rw || !kunit_rcu_wait_flag(&e->hold.in_reader, KUNIT_RCU_PROMPT_MS)) {
		atomic_set_release(&e->hold.release, 1);
		atomic_set_release(&e->go, 1);
		kunit_rcu_finish(test, rw, KUNIT_RCU_PROMPT_MS);
		kunit_rcu_finish(test, bw, KUNIT_RCU_GP_TIMEOUT_MS);
		KUNIT_FAIL(test, "the reader did not begin within %d ms", KUNIT_RCU_PROMPT_MS);
		return;
	}
	hp_exit_queue(e);
	atomic_set_release(&e->go, 1);
	early = kunit_rcu_wait_flag(&e->returned, KUNIT_RCU_GP_HOLD_MS);
	ran_held = atomic_read(&e->b->calls);
	atomic_set_release(&e->hold.release, 1);
	kunit_rcu_finish(test, rw, KUNIT_RCU_PROMPT_MS);
	KUNIT_ASSERT_TRUE_MSG(test, kunit_rcu_finish(test, bw, KUNIT_RCU_GP_TIMEOUT_MS),
			      "rcu_barrier() did not return within %d ms of the reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);

	KUNIT_EXPECT_GE(test, e->slots, 1);
	KUNIT_EXPECT_TRUE_MSG(test, e->hold.released, "the reader ended by its bound");
	KUNIT_EXPECT_EQ_MSG(test, ran_held, 0,
			    "callbacks ran while a reader held their grace period");
	KUNIT_EXPECT_FALSE_MSG(test, early,
			       "rcu_barrier() on CPU %d returned while callbacks of other CPUs waited for a grace period",
			       bcpu);
	KUNIT_EXPECT_EQ_MSG(test, e->at_return, e->b->queued,
			    "callbacks run when rcu_barrier() returned on CPU %d", bcpu);
	hp_expect_each_once(test, e->b, e->slots, "when rcu_barrier() returned");
	/* None later: two more grace periods' worth of callback processing. */
	synchronize_rcu();
	synchronize_rcu();
	rcu_barrier();
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&e->b->calls), e->at_return,
			    "callbacks run later");
}

/* A CPU taken offline by a case, brought back however the case ends. */
static void hp_online_again(struct kunit_resource *res)
{
	int cpu = (long)res->data;

	if (!cpu_online(cpu))
		add_cpu(cpu);
}

static struct kunit_resource hp_cpu_res;

static int hp_offline(struct kunit *test, int cpu)
{
	int ret = remove_cpu(cpu);

	if (!ret)
		kunit_add_named_resource(test, NULL, hp_online_again, &hp_cpu_res,
					 "hp_offline_cpu", (void *)(long)cpu);
	return ret;
}

/* Offlines tried to catch callbacks that are still pending at the offline. */
#define HP_PENDING_TRIES	5

struct hp_pending {
	struct hp_batch *b;
	int cpu;			/* the CPU taken offline */
	int state;			/* the dynamic cpuhp state */
	int queued_on;			/* where the teardown callback queued them */
	atomic_t go;			/* queued: the barrier may start */
	atomic_t returned;		/* the overlapping rcu_barrier() returned */
	int at_return;			/* callbacks run when it returned */
};

static struct hp_pending *hp_pending;

/*
 * On the outgoing CPU, late on its way down (after the scheduler's own
 * synchronize_rcu() in sched_cpu_deactivate()): its last callbacks.
 */
static int hp_pending_teardown(unsigned int cpu)
{
	struct hp_pending *p = READ_ONCE(hp_pending);
	struct hp_queue q;

	if (!p || cpu != p->cpu)
		return 0;
	q = (struct hp_queue) { .b = p->b, .slot = 0 };
	p->queued_on = raw_smp_processor_id();
	hp_queue_fn(&q);
	p->b->queued = HP_CBS_PER_CPU;
	atomic_set_release(&p->go, 1);
	return 0;
}

static void hp_pending_remove(struct kunit_resource *res)
{
	struct hp_pending *p = res->data;

	WRITE_ONCE(hp_pending, NULL);
	cpuhp_remove_state_nocalls(p->state);
}

static struct kunit_resource hp_pending_res;

/* On another CPU: rcu_barrier() while the offline goes on. */
static void hp_pending_barrier_fn(void *arg)
{
	struct hp_pending *p = arg;

	if (!kunit_rcu_wait_flag(&p->go, HP_HOTPLUG_MS) || !p->b->queued)
		return;
	rcu_barrier();
	p->at_return = atomic_read(&p->b->calls);
	atomic_set_release(&p->returned, 1);
}

/* Callbacks of slot 0 that ran on a CPU other than @cpu. */
static int hp_ran_elsewhere(struct hp_batch *b, int cpu)
{
	int i, n = 0;

	for (i = 0; i < HP_CBS_PER_CPU; i++)
		if (atomic_read(&b->cbs[0][i].ran) && READ_ONCE(b->cbs[0][i].cpu) != cpu)
			n++;
	return n;
}

/*
 * Covers: HP-3
 *
 * A CPU's last callbacks, queued on it by a CPU-hotplug callback on its
 * way down, while an rcu_barrier() started then on another CPU overlaps
 * the rest of the offline.  Callbacks are invoked on the CPU that queued
 * them unless RCU migrates them, so one that ran on another CPU was still
 * pending when its CPU went offline; the offline is tried again (up to
 * HP_PENDING_TRIES times) until that happens.  Then every callback ran
 * exactly once, within a bound, while the CPU stayed offline; the
 * overlapping rcu_barrier() returned within a bound and only after all
 * of them; none ran again after the CPU came back.
 */
static void rcu_hotplug_offline_callbacks(struct kunit *test)
{
	struct hp_pending *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	int other = kunit_rcu_other_cpu(cpu);
	bool all = false, offline = false, barrier = false;
	int try, elsewhere = 0, ran = 0, state;

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->b = kunit_kzalloc(test, sizeof(*p->b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->b);
	p->cpu = cpu;
	state = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "kunit/rcu_hotplug:pending",
					  NULL, hp_pending_teardown);
	KUNIT_ASSERT_GE(test, state, 0);
	p->state = state;
	kunit_add_named_resource(test, NULL, hp_pending_remove, &hp_pending_res,
				 "hp_pending", p);

	for (try = 1; try <= HP_PENDING_TRIES; try++) {
		struct kunit_rcu_work *bw;
		int ret;

		memset(p->b, 0, sizeof(*p->b));
		atomic_set(&p->go, 0);
		atomic_set(&p->returned, 0);
		p->queued_on = -1;
		bw = kunit_rcu_start_on_cpu(test, other, hp_pending_barrier_fn, p, false);
		KUNIT_ASSERT_NOT_NULL(test, bw);
		WRITE_ONCE(hp_pending, p);
		ret = hp_offline(test, cpu);
		WRITE_ONCE(hp_pending, NULL);
		atomic_set_release(&p->go, 1);
		if (ret) {
			kunit_rcu_finish(test, bw, KUNIT_RCU_GP_TIMEOUT_MS);
			KUNIT_FAIL(test, "cannot take CPU %d offline: %d", cpu, ret);
			return;
		}
		all = kunit_rcu_wait_until(hp_all_called, p->b, KUNIT_RCU_GP_TIMEOUT_MS);
		ran = atomic_read(&p->b->calls);
		offline = !cpu_online(cpu);
		barrier = kunit_rcu_finish(test, bw, KUNIT_RCU_GP_TIMEOUT_MS);
		elsewhere = hp_ran_elsewhere(p->b, cpu);
		/* Back, and nothing left in flight before the batch is reused. */
		KUNIT_ASSERT_EQ_MSG(test, add_cpu(cpu), 0, "cannot bring CPU %d back", cpu);
		rcu_barrier();
		if (!all || !barrier || elsewhere)
			break;
	}
	kunit_info(test, "try %d: %d of %d callbacks ran elsewhere than CPU %d\n",
		   try, elsewhere, p->b->queued, cpu);
	KUNIT_EXPECT_EQ_MSG(test, p->queued_on, cpu,
			    "the teardown callback ran elsewhere than the outgoing CPU");
	KUNIT_EXPECT_EQ(test, p->b->queued, HP_CBS_PER_CPU);
	KUNIT_EXPECT_TRUE_MSG(test, all,
			      "%d of %d callbacks of outgoing CPU %d ran within %d ms of its offline",
			      ran, p->b->queued, cpu, KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, offline, "CPU %d came back while its callbacks waited", cpu);
	KUNIT_EXPECT_TRUE_MSG(test, barrier,
			      "rcu_barrier() overlapping CPU %d's offline did not return within %d ms",
			      cpu, KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p->returned), 1,
			    "the overlapping rcu_barrier() was not called");
	KUNIT_EXPECT_EQ_MSG(test, p->at_return, p->b->queued,
			    "callbacks run when the rcu_barrier() overlapping CPU %d's offline returned",
			    cpu);
	if (all && barrier)
		KUNIT_EXPECT_GT_MSG(test, elsewhere, 0,
				    "in %d offlines, CPU %d invoked all its last callbacks itself: none was pending to migrate",
				    HP_PENDING_TRIES, cpu);
	hp_expect_each_once(test, p->b, 1, "after the CPU came back");
}

struct hp_state {
	int cpu;
	int state;			/* the dynamic cpuhp state */
	bool stuck;			/* the hotplug did not finish: leave the state */
	atomic_t down, up;		/* which callbacks finished */
	bool norm[2], exp[2];		/* down, up: each kind of grace period ended */
};

static struct hp_state *hp_state;

/*
 * What a cpuhp callback may do: a normal and an expedited synchronous
 * grace period (each proved on its own sequence) and a barrier.
 */
static void hp_wait_all(struct hp_state *s, int up)
{
	struct kunit_rcu_seq seq;

	kunit_rcu_seq_snap(&seq);
	synchronize_rcu();
	s->norm[up] = kunit_rcu_normal_done(&seq);
	kunit_rcu_seq_snap(&seq);
	synchronize_rcu_expedited();
	s->exp[up] = kunit_rcu_exp_done(&seq);
	rcu_barrier();
}

static int hp_teardown(unsigned int cpu)
{
	struct hp_state *s = READ_ONCE(hp_state);

	if (!s || cpu != s->cpu)
		return 0;
	hp_wait_all(s, 0);
	atomic_set(&s->down, 1);
	return 0;
}

static int hp_startup(unsigned int cpu)
{
	struct hp_state *s = READ_ONCE(hp_state);

	if (!s || cpu != s->cpu)
		return 0;
	hp_wait_all(s, 1);
	atomic_set(&s->up, 1);
	return 0;
}

static void hp_remove_state(struct kunit_resource *res)
{
	struct hp_state *s = res->data;

	WRITE_ONCE(hp_state, NULL);
	/* Removing a state waits for the hotplug lock, which a stuck hotplug holds. */
	if (!s->stuck)
		cpuhp_remove_state_nocalls(s->state);
}

static struct kunit_resource hp_state_res;

static void hp_offline_fn(void *arg)
{
	struct hp_state *s = arg;

	if (!remove_cpu(s->cpu))
		add_cpu(s->cpu);
}

/*
 * Covers: HP-2, FUT-3
 *
 * CPU-hotplug callbacks (a dynamic online state, run on the way down and
 * on the way up) call synchronize_rcu(), synchronize_rcu_expedited() and
 * rcu_barrier(): the CPU goes offline and comes back within a bound (no
 * deadlock with the hotplug lock), and in each callback a normal grace
 * period (boot-time expediting undone) and an expedited one really
 * ended, each proved on its own sequence.
 */
static void rcu_hotplug_gp_in_cpuhp_callbacks(struct kunit *test)
{
	struct hp_state *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *w;
	int state;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->cpu = cpu;
	state = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "kunit/rcu_hotplug:online",
					  hp_startup, hp_teardown);
	KUNIT_ASSERT_GE(test, state, 0);
	s->state = state;
	kunit_add_named_resource(test, NULL, hp_remove_state, &hp_state_res, "hp_state", s);
	kunit_rcu_unexpedite(test);
	WRITE_ONCE(hp_state, s);
	w = kunit_rcu_start_on_cpu(test, kunit_rcu_other_cpu(cpu), hp_offline_fn, s, false);
	s->stuck = !kunit_rcu_finish(test, w, HP_HOTPLUG_MS);
	KUNIT_EXPECT_FALSE_MSG(test, s->stuck,
			       "CPU %d offline and online again did not finish in %d ms",
			       cpu, HP_HOTPLUG_MS);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&s->down), 1, "teardown callback did not finish");
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&s->up), 1, "startup callback did not finish");
	KUNIT_EXPECT_TRUE_MSG(test, s->norm[0] && s->exp[0],
			      "teardown callback: normal grace period %s, expedited %s",
			      s->norm[0] ? "ended" : "did not end",
			      s->exp[0] ? "ended" : "did not end");
	KUNIT_EXPECT_TRUE_MSG(test, s->norm[1] && s->exp[1],
			      "startup callback: normal grace period %s, expedited %s",
			      s->norm[1] ? "ended" : "did not end",
			      s->exp[1] ? "ended" : "did not end");
	KUNIT_EXPECT_TRUE(test, cpu_online(cpu));
}

/*
 * Per-CPU RCU kthreads (rcuc/N, rcuo*): RCU kthreads bound to one CPU.
 * Counts those bound to an online CPU or (with ->on_ghost) to one that is
 * not online, and records one such CPU.
 */
struct hp_percpu_kthreads {
	bool on_ghost;
	int cpu;
};

static bool hp_percpu_kthread(struct task_struct *t, void *arg)
{
	struct hp_percpu_kthreads *k = arg;
	int cpu;

	if (t->nr_cpus_allowed != 1)
		return false;
	cpu = cpumask_first(t->cpus_ptr);
	if (cpu_online(cpu) == k->on_ghost)
		return false;
	k->cpu = cpu;
	return true;
}

DEFINE_STATIC_SRCU(hp_srcu);

static void hp_srcu_cb(struct rcu_head *rh)
{
}

/* SRCU queues its per-CPU work on CPUs that were fully online only. */
static void hp_srcu_gp(void *arg)
{
	static struct rcu_head rh;

	call_srcu(&hp_srcu, &rh, hp_srcu_cb);
	synchronize_srcu(&hp_srcu);
	synchronize_srcu_expedited(&hp_srcu);
	srcu_barrier(&hp_srcu);
}

/*
 * Covers: FW-1
 * May skip: default, nopreempt, nohz
 *
 * Ghost CPUs, possible but never online (CONFIG=ghost: QEMU's
 * "-smp 2,maxcpus=8" on x86_64, "maxcpus=2" of 4 on arm64): RCU has
 * never counted one as fully online, no RCU kthread is bound to one
 * (CONFIG=ghost boots with rcutree.use_softirq=0, so the online CPUs
 * have their rcuc kthreads), and a normal grace period, an expedited
 * one, rcu_barrier() and SRCU's grace periods and barrier complete
 * without them.
 */
static void rcu_hotplug_ghost_cpus(struct kunit *test)
{
	struct hp_percpu_kthreads online = { .on_ghost = false, .cpu = -1 };
	struct hp_percpu_kthreads ghost = { .on_ghost = true, .cpu = -1 };
	struct kunit_rcu_seq seq;
	unsigned int on_ghosts;
	int cpu, ghosts = 0;

	for_each_possible_cpu(cpu)
		if (!cpu_online(cpu))
			ghosts++;
	if (!ghosts)
		kunit_skip(test, "every possible CPU is online (CONFIG=ghost has ghost CPUs)");
	kunit_info(test, "%u possible CPUs, %u online; RCU kthreads bound to online CPUs: %u\n",
		   num_possible_cpus(), num_online_cpus(),
		   kunit_rcu_kthreads("rcu", hp_percpu_kthread, &online));
	for_each_possible_cpu(cpu)
		KUNIT_EXPECT_EQ_MSG(test, rcu_cpu_beenfullyonline(cpu), cpu_online(cpu),
				    "RCU's view of CPU %d having been fully online", cpu);
	on_ghosts = kunit_rcu_kthreads("rcu", hp_percpu_kthread, &ghost);
	KUNIT_EXPECT_EQ_MSG(test, on_ghosts, 0, "RCU kthreads bound to ghost CPUs (one on CPU %d)",
			    ghost.cpu);

	/* Each kind proved on its own sequence: a _full cookie takes either. */
	kunit_rcu_unexpedite(test);
	kunit_rcu_seq_snap(&seq);
	start_poll_synchronize_rcu();
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_normal_done, &seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "a normal grace period did not end within %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	kunit_rcu_seq_snap(&seq);
	kunit_rcu_start_exp();
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_exp_done, &seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "an expedited grace period did not end within %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, hp_barrier(test, raw_smp_processor_id()),
			      "rcu_barrier() did not return within %d ms", KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_run_on_cpu(test, raw_smp_processor_id(), hp_srcu_gp,
							 NULL, false, KUNIT_RCU_GP_TIMEOUT_MS),
			      "SRCU grace periods and srcu_barrier() did not finish within %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
}

static struct kunit_case rcu_hotplug_cases[] = {
	KUNIT_CASE(rcu_hotplug_barrier_at_exit),
	KUNIT_CASE(rcu_hotplug_offline_callbacks),
	KUNIT_CASE(rcu_hotplug_gp_in_cpuhp_callbacks),
	KUNIT_CASE(rcu_hotplug_ghost_cpus),
	{}
};

static struct kunit_suite rcu_hotplug_suite = {
	.name = "rcu_hotplug",
	.test_cases = rcu_hotplug_cases,
};

kunit_test_suite(rcu_hotplug_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's module-unload and CPU-hotplug requirements");
MODULE_LICENSE("GPL");
