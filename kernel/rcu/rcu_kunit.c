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
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/cpumask.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <trace/events/rcu.h>

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
 * normal or expedited; the normal synchronize_rcu() (boot-time
 * expediting undone) ends a normal grace period.
 */
static void rcu_poll_full(struct kunit *test)
{
	struct rcu_gp_oldstate rgos[2], done;
	struct rcu_gp_oldstate *norm = &rgos[0], *exp = &rgos[1];
	struct kunit_rcu_seq seq;
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

	kunit_rcu_unexpedite(test);
	kunit_rcu_seq_snap(&seq);
	get_state_synchronize_rcu_full(norm);
	KUNIT_EXPECT_FALSE(test, same_state_synchronize_rcu_full(norm, &done));
	synchronize_rcu();
	KUNIT_EXPECT_TRUE(test, poll_state_synchronize_rcu_full(norm));
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_normal_done(&seq),
			      "synchronize_rcu() returned before a normal grace period ended");
}

/**
 * struct rcu_kunit_cond_kind - a cond_synchronize_*() variant
 * @name: the function, for the parameter description
 * @expedited: it waits for an expedited grace period, else a normal one
 * @full: its cookie is a struct rcu_gp_oldstate
 */
struct rcu_kunit_cond_kind {
	const char *name;
	bool expedited;
	bool full;
};

static const struct rcu_kunit_cond_kind rcu_kunit_cond_kinds[] = {
	{ "cond_synchronize_rcu()", false, false },
	{ "cond_synchronize_rcu_full()", false, true },
	{ "cond_synchronize_rcu_expedited()", true, false },
	{ "cond_synchronize_rcu_expedited_full()", true, true },
};

static void rcu_kunit_cond_desc(const struct rcu_kunit_cond_kind *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rcu_kunit_cond, rcu_kunit_cond_kinds, rcu_kunit_cond_desc);

/**
 * struct rcu_kunit_cond - a cond_synchronize_*() call in another kthread
 * @kind: the variant
 * @cookie: its cookie, without @kind->full
 * @full: its cookie, with @kind->full
 * @go: the cookie is set: call it
 * @returned: it returned
 */
struct rcu_kunit_cond {
	const struct rcu_kunit_cond_kind *kind;
	unsigned long cookie;
	struct rcu_gp_oldstate full;
	atomic_t go;
	atomic_t returned;
};

static void rcu_kunit_cond_fn(void *arg)
{
	struct rcu_kunit_cond *c = arg;

	if (!kunit_rcu_wait_flag(&c->go, KUNIT_RCU_PROMPT_MS))
		return;
	if (c->kind->expedited && c->kind->full)
		cond_synchronize_rcu_expedited_full(&c->full);
	else if (c->kind->expedited)
		cond_synchronize_rcu_expedited(c->cookie);
	else if (c->kind->full)
		cond_synchronize_rcu_full(&c->full);
	else
		cond_synchronize_rcu(c->cookie);
	atomic_set_release(&c->returned, 1);
}

/*
 * Covers: POLL-1
 *
 * The cond_synchronize_*() variants, given a cookie that is not complete
 * yet, wait for the grace period it needs: taken inside a reader of the
 * test thread, the cookie keeps a call in a kthread on another CPU from
 * returning while that reader runs; after it returns the cookie reads as
 * complete (a _full one, or a normal one after a normal grace period),
 * and a grace period of the variant's own kind ended (normal
 * ones with boot-time expediting undone, each on its own sequence).
 */
static void rcu_poll_cond_waits(struct kunit *test)
{
	const struct rcu_kunit_cond_kind *k = test->param_value;
	struct rcu_kunit_cond *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_work *w;
	struct kunit_rcu_seq seq;
	bool early, done;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->kind = k;
	if (!k->expedited)
		kunit_rcu_unexpedite(test);
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_kunit_cond_fn, c, false);
	KUNIT_ASSERT_NOT_NULL(test, w);

	rcu_read_lock();
	kunit_rcu_seq_snap(&seq);
	if (k->full)
		get_state_synchronize_rcu_full(&c->full);
	else
		c->cookie = get_state_synchronize_rcu();
	atomic_set_release(&c->go, 1);
	early = kunit_rcu_spin_flag(&c->returned, KUNIT_RCU_GP_HOLD_MS);
	rcu_read_unlock();

	KUNIT_EXPECT_FALSE_MSG(test, early,
			       "%s returned while a reader older than its cookie ran", k->name);
	KUNIT_ASSERT_TRUE_MSG(test, kunit_rcu_finish(test, w, KUNIT_RCU_GP_TIMEOUT_MS) &&
			      atomic_read(&c->returned),
			      "%s did not return within %d ms of the reader", k->name,
			      KUNIT_RCU_GP_TIMEOUT_MS);
	/* An expedited grace period does not complete a normal-only cookie. */
	done = k->full ? poll_state_synchronize_rcu_full(&c->full) :
			 k->expedited || poll_state_synchronize_rcu(c->cookie);
	KUNIT_EXPECT_TRUE_MSG(test, done, "%s returned before its cookie completed", k->name);
	KUNIT_EXPECT_TRUE_MSG(test, k->expedited ? kunit_rcu_exp_done(&seq) :
					  kunit_rcu_normal_done(&seq),
			      "%s returned before %s grace period ended", k->name,
			      k->expedited ? "an expedited" : "a normal");
}

/*
 * PERF-3, PERF-4: many callers of one update-side primitive at once, and
 * how many operations RCU ran for them.  The callers arrive while a
 * reader holds the operation in progress, so none of them can be served
 * by it: a kernel that serves each caller with an operation of its own
 * needs RCU_KUNIT_SHARERS more; sharing needs one or two (the next one
 * serves everyone waiting), and requests from the rest of the kernel may
 * add a few (5 normal grace periods seen once on arm64 with NO_HZ_FULL).
 */
#define RCU_KUNIT_SHARERS	12
#define RCU_KUNIT_SHARED_MAX	(RCU_KUNIT_SHARERS / 2)

#ifdef CONFIG_RCU_TRACE
/* rcu_barrier() operations that did the work ("Inc1"), not early exits. */
static atomic_t rcu_kunit_barrier_ops;

static void rcu_kunit_probe_barrier(void *data, const char *rcuname, const char *s,
				    int cpu, int cnt, unsigned long done)
{
	if (!strcmp(s, "Inc1"))
		atomic_inc(&rcu_kunit_barrier_ops);
}
#endif /* CONFIG_RCU_TRACE */

static unsigned long rcu_kunit_normal_gps(void)
{
	return rcu_seq_ctr(rcu_get_gp_seq());
}

static unsigned long rcu_kunit_exp_gps(void)
{
	return rcu_seq_ctr(rcu_exp_batches_completed());
}

static unsigned long rcu_kunit_barriers(void)
{
#ifdef CONFIG_RCU_TRACE
	return atomic_read(&rcu_kunit_barrier_ops);
#else
	return 0;
#endif
}

/*
 * PERF-2: each caller queues RCU_KUNIT_BATCH callbacks with call_rcu(),
 * all callers' RCU_KUNIT_SHARERS * RCU_KUNIT_BATCH of them behind the
 * held reader, and waits (bounded) until every one has run.
 */
#define RCU_KUNIT_BATCH		16

static atomic_t rcu_kunit_cbs_pending;

struct rcu_kunit_cb {
	struct rcu_head rh;
};

static void rcu_kunit_cb_fn(struct rcu_head *rh)
{
	kfree(container_of(rh, struct rcu_kunit_cb, rh));
	atomic_dec(&rcu_kunit_cbs_pending);
}

static bool rcu_kunit_cbs_done(void *unused)
{
	return !atomic_read(&rcu_kunit_cbs_pending);
}

static void rcu_kunit_call_rcu_batch(void)
{
	struct rcu_kunit_cb *cb;
	int i;

	for (i = 0; i < RCU_KUNIT_BATCH; i++) {
		cb = kmalloc(sizeof(*cb), GFP_KERNEL);
		if (!cb)
			return;	/* fewer callbacks, so fewer grace periods if any */
		atomic_inc(&rcu_kunit_cbs_pending);
		call_rcu(&cb->rh, rcu_kunit_cb_fn);
	}
	kunit_rcu_wait_until(rcu_kunit_cbs_done, NULL, KUNIT_RCU_GP_TIMEOUT_MS);
}

/**
 * struct rcu_kunit_share_kind - an update-side primitive whose callers share work
 * @name: the primitive, for the parameter description
 * @call: call it
 * @ops: how many of its operations have completed so far
 * @normal: undo boot-time expediting for it
 * @barrier: count rcu_barrier() operations (needs the rcu_barrier tracepoint)
 */
struct rcu_kunit_share_kind {
	const char *name;
	void (*call)(void);
	unsigned long (*ops)(void);
	bool normal;
	bool barrier;
};

static const struct rcu_kunit_share_kind rcu_kunit_share_kinds[] = {
	{ "call_rcu()", rcu_kunit_call_rcu_batch, rcu_kunit_normal_gps, true, false },
	{ "synchronize_rcu()", synchronize_rcu, rcu_kunit_normal_gps, true, false },
	{ "synchronize_rcu_expedited()", synchronize_rcu_expedited, rcu_kunit_exp_gps,
	  false, false },
	{ "rcu_barrier()", rcu_barrier, rcu_kunit_barriers, false, true },
};

static void rcu_kunit_share_desc(const struct rcu_kunit_share_kind *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rcu_kunit_share, rcu_kunit_share_kinds, rcu_kunit_share_desc);

/**
 * struct rcu_kunit_sharers - callers started together
 * @kind: what they call
 * @go: start calling
 * @entered: callers about to call
 */
struct rcu_kunit_sharers {
	const struct rcu_kunit_share_kind *kind;
	atomic_t go;
	atomic_t entered;
};

static void rcu_kunit_sharer_fn(void *arg)
{
	struct rcu_kunit_sharers *sh = arg;

	if (kunit_rcu_wait_flag(&sh->go, KUNIT_RCU_PROMPT_MS)) {
		atomic_inc(&sh->entered);
		sh->kind->call();
	}
}

static bool rcu_kunit_all_entered(void *arg)
{
	struct rcu_kunit_sharers *sh = arg;

	return atomic_read(&sh->entered) == RCU_KUNIT_SHARERS;
}

/*
 * Covers: PERF-2, PERF-3, PERF-4
 *
 * A reader on one CPU holds grace periods while RCU_KUNIT_SHARERS
 * kthreads on another CPU call one of call_rcu() (RCU_KUNIT_BATCH
 * callbacks each, then wait until every caller's callbacks have run),
 * synchronize_rcu() (normal: boot-time expediting undone),
 * synchronize_rcu_expedited() or rcu_barrier(); then the reader ends.
 * All return within a bound, every callback has run, and
 * RCU ran at least one and at most RCU_KUNIT_SHARED_MAX operations of
 * that kind meanwhile (normal grace periods on their sequence, expedited
 * ones on theirs, barrier operations that did not exit early, from the
 * rcu_barrier tracepoint).
 */
static void rcu_perf_callers_share(struct kunit *test)
{
	const struct rcu_kunit_share_kind *k = test->param_value;
	struct rcu_kunit_sharers *sh = kunit_kzalloc(test, sizeof(*sh), GFP_KERNEL);
	struct kunit_rcu_hold *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	struct kunit_rcu_work *w[RCU_KUNIT_SHARERS], *rw;
	int i, cpu = kunit_rcu_target_cpu(test), done = 0;
	unsigned long before, after;
	bool entered;

	KUNIT_ASSERT_NOT_NULL(test, sh);
	KUNIT_ASSERT_NOT_NULL(test, h);
	sh->kind = k;
#ifdef CONFIG_RCU_TRACE
	if (k->barrier) {
		atomic_set(&rcu_kunit_barrier_ops, 0);
		KUNIT_ASSERT_EQ_MSG(test, register_trace_rcu_barrier(rcu_kunit_probe_barrier, NULL),
				    0, "cannot hook the rcu_barrier tracepoint");
	}
#else
	if (k->barrier)
		kunit_skip(test, "needs CONFIG_RCU_TRACE for the rcu_barrier tracepoint");
#endif
	if (k->normal)
		kunit_rcu_unexpedite(test);
	for (i = 0; i < RCU_KUNIT_SHARERS; i++)
		w[i] = kunit_rcu_start_on_cpu(test, kunit_rcu_other_cpu(cpu),
					      rcu_kunit_sharer_fn, sh, false);
	rw = kunit_rcu_start_on_cpu(test, cpu, kunit_rcu_hold_reader, h, false);
	KUNIT_ASSERT_TRUE_MSG(test, rw && kunit_rcu_wait_flag(&h->in_reader,
							      KUNIT_RCU_PROMPT_MS),
			      "the reader on CPU %d did not start", cpu);
	before = k->ops();
	atomic_set_release(&sh->go, 1);
	entered = kunit_rcu_wait_until(rcu_kunit_all_entered, sh, KUNIT_RCU_PROMPT_MS / 2);
	/* Let the last ones take their snapshots before the reader ends. */
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS / 4);
	atomic_set_release(&h->release, 1);
	for (i = 0; i < RCU_KUNIT_SHARERS; i++)
		done += kunit_rcu_finish(test, w[i], KUNIT_RCU_GP_TIMEOUT_MS);
	after = k->ops();
	kunit_rcu_finish(test, rw, KUNIT_RCU_PROMPT_MS);
#ifdef CONFIG_RCU_TRACE
	if (k->barrier) {
		unregister_trace_rcu_barrier(rcu_kunit_probe_barrier, NULL);
		tracepoint_synchronize_unregister();
	}
#endif

	KUNIT_ASSERT_TRUE_MSG(test, entered && h->released,
			      "%d of %d callers started while the reader ran",
			      atomic_read(&sh->entered), RCU_KUNIT_SHARERS);
	KUNIT_EXPECT_EQ_MSG(test, done, RCU_KUNIT_SHARERS,
			    "%s: callers that returned within %d ms", k->name,
			    KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rcu_kunit_cbs_pending), 0,
			    "%s: call_rcu() callbacks not run", k->name);
	KUNIT_EXPECT_GE_MSG(test, after - before, 1UL, "%s: no operation ran", k->name);
	KUNIT_EXPECT_LE_MSG(test, after - before, (unsigned long)RCU_KUNIT_SHARED_MAX,
			    "%s: operations for %d concurrent callers", k->name,
			    RCU_KUNIT_SHARERS);
}

/* The kernel's built-in parameters: the __param section. */
extern const struct kernel_param __start___param[], __stop___param[];

/* The value of the built-in int parameter @name, or -1 if there is none. */
static int rcu_kunit_int_param(const char *name)
{
	const struct kernel_param *kp;

	for (kp = __start___param; kp < __stop___param; kp++)
		if (!strcmp(kp->name, name))
			return *(int *)kp->arg;
	return -1;
}

/*
 * Covers: FUT-5
 *
 * rcutree.rcu_fanout_leaf=<n> (CONFIG=ghost boots with 2) shapes RCU's
 * combining tree the way Documentation/RCU/Design/Data-Structures
 * describes it: leaves of n CPUs each, interior nodes of RCU_FANOUT
 * (CONFIG_RCU_FANOUT) children each, as few levels as cover nr_cpu_ids.
 * rcu_num_lvls, num_rcu_lvl[] and rcu_num_nodes must give that shape,
 * worked out here from the parameter's value and nr_cpu_ids.  Without
 * the parameter, its default (CONFIG_RCU_FANOUT_LEAF) gives a one-node
 * tree on these guests.
 */
static void rcu_fut_fanout_leaf(struct kunit *test)
{
	int leaf = rcu_kunit_int_param("rcutree.rcu_fanout_leaf");
	int lvls = 1, nodes = 0, want, i;
	unsigned long span;

	KUNIT_ASSERT_GE_MSG(test, leaf, 2, "rcutree.rcu_fanout_leaf missing or out of range");
	for (span = leaf; span < nr_cpu_ids; span *= RCU_FANOUT)
		lvls++;
	kunit_info(test, "%u CPU ids, leaf fanout %d, fanout %d: %d level(s), %d node(s)\n",
		   nr_cpu_ids, leaf, RCU_FANOUT, rcu_num_lvls, rcu_num_nodes);
	KUNIT_ASSERT_EQ_MSG(test, rcu_num_lvls, lvls, "levels");
	/* From the leaves up, each level's nodes cover RCU_FANOUT times more CPUs. */
	for (i = lvls - 1, span = leaf; i >= 0; i--, span *= RCU_FANOUT) {
		want = DIV_ROUND_UP(nr_cpu_ids, span);
		KUNIT_EXPECT_EQ_MSG(test, num_rcu_lvl[i], want, "nodes at level %d of %d", i, lvls);
		nodes += want;
	}
	KUNIT_EXPECT_EQ_MSG(test, rcu_num_nodes, nodes, "rcu_node structures");
}

static struct kunit_case rcu_core_cases[] = {
	KUNIT_CASE(rcu_poll_get_state),
	KUNIT_CASE(rcu_poll_start),
	KUNIT_CASE(rcu_poll_full),
	KUNIT_CASE_PARAM(rcu_poll_cond_waits, rcu_kunit_cond_gen_params),
	KUNIT_CASE_PARAM(rcu_perf_callers_share, rcu_kunit_share_gen_params),
	KUNIT_CASE(rcu_fut_fanout_leaf),
	{}
};

static struct kunit_suite rcu_core_suite = {
	.name = "rcu_core",
	.test_cases = rcu_core_cases,
};

kunit_test_suite(rcu_core_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's Linux-kernel requirements");
MODULE_LICENSE("GPL");
