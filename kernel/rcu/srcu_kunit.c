// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for SRCU's requirements ("RCU requirements, part 3",
 * "Sleepable RCU"): independent domains, sleeping readers, the index
 * cookie, readers on CPUs in an extended quiescent state, call_srcu(),
 * srcu_barrier() and the polled API.
 *
 * Tree SRCU has one grace-period sequence per domain (->srcu_gp_seq); an
 * expedited request only shortens the waits between its reader scans.
 * Each case runs with boot-time expediting undone (kunit_rcu_unexpedite()),
 * and asks for both kinds: call_srcu() and start_poll_synchronize_srcu()
 * are normal requests, synchronize_srcu_expedited() an expedited one.
 * synchronize_srcu() expedites by itself when the domain looks idle.
 *
 * Readers that sleep run in kthreads and wait for the test thread with
 * a bound; so does every update-side call that may wait for them.  Their
 * state is kzalloc()ed and freed only once every wait on it has ended:
 * on a broken kernel a late kthread or callback leaks it instead of
 * writing to freed memory.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/srcu.h>

#include "kunit_rcu.h"

/* How long a sleeping reader waits to be released before it gives up. */
#define SRCU_KUNIT_SLEEP_MS	(2 * KUNIT_RCU_GP_TIMEOUT_MS)

DEFINE_SRCU(srcu_kunit_global);
DEFINE_STATIC_SRCU(srcu_kunit_static);

/**
 * struct srcu_kunit_reader - an SRCU reader held open in a kthread
 * @ssp: its domain
 * @eqs: it runs inside a fake EQS: the notrace API, spinning, irqs off
 * @in_reader: set once the reader has begun
 * @release: set by the test thread to end it
 * @released: it ended because it was released, not by its bound
 * @idx: srcu_read_lock()'s index
 * @switches: voluntary context switches inside the reader
 * @in: state inside the reader
 */
struct srcu_kunit_reader {
	struct srcu_struct *ssp;
	bool eqs;
	atomic_t in_reader;
	atomic_t release;
	bool released;
	int idx;
	unsigned long switches;
	struct kunit_rcu_snap in;
};

static void srcu_kunit_reader_fn(void *arg)
{
	struct srcu_kunit_reader *r = arg;
	unsigned long nvcsw;

	if (r->eqs) {
		/*
		 * srcu_read_lock() calls lockdep, whose lock_acquire
		 * tracepoint WARNs in an EQS under LOCKDEP (6.1); the
		 * notrace API is the one for code RCU does not watch.
		 */
		r->idx = srcu_read_lock_notrace(r->ssp);
		kunit_rcu_snap(&r->in);
		atomic_set_release(&r->in_reader, 1);
		r->released = kunit_rcu_spin_flag(&r->release, KUNIT_RCU_GP_TIMEOUT_MS);
		srcu_read_unlock_notrace(r->ssp, r->idx);
		return;
	}
	r->idx = srcu_read_lock(r->ssp);
	nvcsw = current->nvcsw;
	kunit_rcu_snap(&r->in);
	atomic_set_release(&r->in_reader, 1);
	r->released = kunit_rcu_wait_flag(&r->release, SRCU_KUNIT_SLEEP_MS);
	r->switches = current->nvcsw - nvcsw;
	srcu_read_unlock(r->ssp, r->idx);
}

/* Starts @r on @cpu and waits, bounded, for it to begin. */
static struct kunit_rcu_work *srcu_kunit_start_reader(struct kunit *test,
						      struct srcu_kunit_reader *r, int cpu)
{
	struct kunit_rcu_work *w = kunit_rcu_start_on_cpu(test, cpu, srcu_kunit_reader_fn,
							  r, r->eqs);

	if (w && !kunit_rcu_wait_flag(&r->in_reader, KUNIT_RCU_PROMPT_MS))
		KUNIT_FAIL(test, "the SRCU reader did not begin within %d ms",
			   KUNIT_RCU_PROMPT_MS);
	return w;
}

/**
 * struct srcu_kunit_sync - a synchronous update-side call run in a kthread
 * @ssp: the domain
 * @sync: synchronize_srcu(), synchronize_srcu_expedited() or srcu_barrier()
 * @done: set when @sync returned
 * @cbs: callbacks that had run when @sync returned (srcu_barrier())
 * @count: the callback counter read into @cbs, or NULL
 * @go: if set, @sync waits (bounded) for it to become non-zero first
 */
struct srcu_kunit_sync {
	struct srcu_struct *ssp;
	void (*sync)(struct srcu_struct *ssp);
	atomic_t done;
	int cbs;
	atomic_t *count;
	atomic_t *go;
};

static void srcu_kunit_sync_fn(void *arg)
{
	struct srcu_kunit_sync *s = arg;

	if (s->go)
		kunit_rcu_wait_flag(s->go, KUNIT_RCU_PROMPT_MS);
	s->sync(s->ssp);
	if (s->count)
		s->cbs = atomic_read(s->count);
	atomic_set_release(&s->done, 1);
}

/**
 * struct srcu_kunit_waiters - every way to wait for one domain's readers
 * @sync: synchronize_srcu()
 * @exp: synchronize_srcu_expedited()
 * @work: their kthreads
 * @head: a call_srcu() callback
 * @cb_ran: set by it
 * @cookie: start_poll_synchronize_srcu()
 * @go: lets @sync and @exp call their function
 */
struct srcu_kunit_waiters {
	struct srcu_kunit_sync sync, exp;
	struct kunit_rcu_work *work[2];
	struct rcu_head head;
	atomic_t cb_ran;
	unsigned long cookie;
	atomic_t go;
};

static void srcu_kunit_cb(struct rcu_head *head)
{
	struct srcu_kunit_waiters *ws = container_of(head, struct srcu_kunit_waiters, head);

	atomic_set(&ws->cb_ran, 1);
}

/*
 * The kthreads of @ws's synchronous waits, on @cpu, waiting for
 * srcu_kunit_release_waiters(): a case that holds a CPU creates them
 * before the hold (kthread creation during a hold stalled the test thread).
 */
static void srcu_kunit_ready_waiters(struct kunit *test, struct srcu_kunit_waiters *ws,
				     struct srcu_struct *ssp, int cpu)
{
	ws->sync = (struct srcu_kunit_sync){ .ssp = ssp, .sync = synchronize_srcu,
					     .go = &ws->go };
	ws->exp = (struct srcu_kunit_sync){ .ssp = ssp, .sync = synchronize_srcu_expedited,
					    .go = &ws->go };
	ws->work[0] = kunit_rcu_start_on_cpu(test, cpu, srcu_kunit_sync_fn, &ws->sync, false);
	ws->work[1] = kunit_rcu_start_on_cpu(test, cpu, srcu_kunit_sync_fn, &ws->exp, false);
}

/* Every kind of wait of @ws begins now. */
static void srcu_kunit_release_waiters(struct srcu_kunit_waiters *ws)
{
	ws->cookie = start_poll_synchronize_srcu(ws->sync.ssp);
	call_srcu(ws->sync.ssp, &ws->head, srcu_kunit_cb);
	atomic_set_release(&ws->go, 1);
}

static void srcu_kunit_start_waiters(struct kunit *test, struct srcu_kunit_waiters *ws,
				     struct srcu_struct *ssp, int cpu)
{
	srcu_kunit_ready_waiters(test, ws, ssp, cpu);
	srcu_kunit_release_waiters(ws);
}

/* Which of @ws's waits have ended, as a bit mask, for the messages. */
static unsigned int srcu_kunit_ended(struct srcu_kunit_waiters *ws)
{
	return atomic_read_acquire(&ws->sync.done) |
	       atomic_read_acquire(&ws->exp.done) << 1 |
	       atomic_read(&ws->cb_ran) << 2 |
	       poll_state_synchronize_srcu(ws->sync.ssp, ws->cookie) << 3;
}

static bool srcu_kunit_all_ended(void *ws)
{
	return srcu_kunit_ended(ws) == 0xf;
}

#define SRCU_KUNIT_WAITS	"(1: synchronize_srcu, 2: _expedited, 4: call_srcu, 8: polled cookie)"

/*
 * The waits of @ws are all still waiting after KUNIT_RCU_HOLD_MS: a
 * reader holds them.
 */
static void srcu_kunit_expect_held(struct kunit *test, struct srcu_kunit_waiters *ws,
				   const char *where)
{
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	KUNIT_EXPECT_EQ_MSG(test, srcu_kunit_ended(ws), 0,
			    "%s: SRCU waits ended while the reader ran %s", where,
			    SRCU_KUNIT_WAITS);
}

/* The waits of @ws all end, bounded; their kthreads are reaped. */
static bool srcu_kunit_expect_ended(struct kunit *test, struct srcu_kunit_waiters *ws,
				    const char *where)
{
	bool ended = kunit_rcu_wait_until(srcu_kunit_all_ended, ws, KUNIT_RCU_GP_TIMEOUT_MS);

	KUNIT_EXPECT_TRUE_MSG(test, ended, "%s: SRCU waits %#x of 0xf ended within %d ms %s",
			      where, srcu_kunit_ended(ws), KUNIT_RCU_GP_TIMEOUT_MS,
			      SRCU_KUNIT_WAITS);
	ended &= kunit_rcu_finish(test, ws->work[0], KUNIT_RCU_PROMPT_MS);
	ended &= kunit_rcu_finish(test, ws->work[1], KUNIT_RCU_PROMPT_MS);
	return ended;
}

/* The released reader's kthread ends, and it ended by being released. */
static bool srcu_kunit_end_reader(struct kunit *test, struct srcu_kunit_reader *r,
				  struct kunit_rcu_work *w)
{
	atomic_set_release(&r->release, 1);
	if (!kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS))
		return false;
	KUNIT_EXPECT_TRUE_MSG(test, r->released,
			      "the reader ended by its own bound, not released");
	return true;
}

/**
 * struct srcu_kunit_state - what one case hands to kthreads and callbacks
 * @r: a reader
 * @ws: waits for it
 */
struct srcu_kunit_state {
	struct srcu_kunit_reader r;
	struct srcu_kunit_waiters ws;
};

/*
 * A reader of @ssp on @rcpu (in a fake EQS with @eqs) holds every kind
 * of wait started from @wcpu, and all end once it is released.
 */
static void srcu_kunit_reader_holds(struct kunit *test, struct srcu_struct *ssp,
				    int rcpu, int wcpu, bool eqs, const char *where)
{
	struct srcu_kunit_state *st = kzalloc(sizeof(*st), GFP_KERNEL);
	struct kunit_rcu_work *w;
	bool ended;

	KUNIT_ASSERT_NOT_NULL(test, st);
	kunit_rcu_unexpedite(test);
	st->r.ssp = ssp;
	st->r.eqs = eqs;
	srcu_kunit_ready_waiters(test, &st->ws, ssp, wcpu);
	w = srcu_kunit_start_reader(test, &st->r, rcpu);
	srcu_kunit_release_waiters(&st->ws);
	srcu_kunit_expect_held(test, &st->ws, where);
	ended = srcu_kunit_end_reader(test, &st->r, w);
	if (eqs)
		KUNIT_EXPECT_FALSE_MSG(test, st->r.in.watching,
				       "%s: RCU was watching inside the fake EQS", where);
	else
		KUNIT_EXPECT_GT_MSG(test, st->r.switches, 0UL, "%s: the reader never slept",
				    where);
	if (srcu_kunit_expect_ended(test, &st->ws, where) && ended)
		kfree(st);
}

/*
 * Covers: SRCU-2
 *
 * An SRCU reader that sleeps (it blocks in usleep_range(), a voluntary
 * context switch) holds up synchronize_srcu(), synchronize_srcu_expedited(),
 * a call_srcu() callback and a start_poll_synchronize_srcu() cookie of
 * its domain; all of them end once it ends.
 */
static void srcu_reader_sleeps(struct kunit *test)
{
	int cpu = raw_smp_processor_id();

	srcu_kunit_reader_holds(test, &srcu_kunit_static, cpu, cpu, false, "sleeping reader");
}

/*
 * Covers: SRCU-4
 *
 * An SRCU reader on a CPU that RCU does not watch (a fake idle EQS,
 * interrupts disabled) is legal: no splat, and its domain's grace
 * periods, normal and expedited, wait for it.
 */
static void srcu_reader_in_eqs(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);

	srcu_kunit_reader_holds(test, &srcu_kunit_static, cpu, kunit_rcu_other_cpu(cpu), true,
				"reader in an EQS");
}

struct srcu_kunit_cookie {
	struct srcu_struct *ssp;
	unsigned long cookie;
};

static bool srcu_kunit_cookie_done(void *arg)
{
	struct srcu_kunit_cookie *c = arg;

	return poll_state_synchronize_srcu(c->ssp, c->cookie);
}

/*
 * Covers: SRCU-1
 *
 * Domains are independent: while a reader sleeps in one domain and holds
 * its grace period, synchronize_srcu(), synchronize_srcu_expedited(), a
 * call_srcu() callback and a polled cookie of another domain all end
 * within KUNIT_RCU_PROMPT_MS; the first domain's cookie stays pending
 * until its reader ends.
 */
static void srcu_domains_independent(struct kunit *test)
{
	struct srcu_kunit_state *st = kzalloc(sizeof(*st), GFP_KERNEL);
	int cpu = raw_smp_processor_id();
	struct srcu_kunit_cookie held;
	struct kunit_rcu_work *w;
	bool ended, safe;

	KUNIT_ASSERT_NOT_NULL(test, st);
	kunit_rcu_unexpedite(test);
	st->r.ssp = &srcu_kunit_static;
	w = srcu_kunit_start_reader(test, &st->r, cpu);
	held = (struct srcu_kunit_cookie){ .ssp = st->r.ssp,
					   .cookie = start_poll_synchronize_srcu(st->r.ssp) };
	srcu_kunit_start_waiters(test, &st->ws, &srcu_kunit_global, cpu);
	ended = kunit_rcu_wait_until(srcu_kunit_all_ended, &st->ws, KUNIT_RCU_PROMPT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, ended,
			      "a reader of another domain held waits %#x of 0xf for %d ms %s",
			      srcu_kunit_ended(&st->ws), KUNIT_RCU_PROMPT_MS, SRCU_KUNIT_WAITS);
	KUNIT_EXPECT_FALSE_MSG(test, srcu_kunit_cookie_done(&held),
			       "the held domain's grace period ended while its reader ran");
	safe = srcu_kunit_end_reader(test, &st->r, w);
	safe &= srcu_kunit_expect_ended(test, &st->ws, "other domain");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(srcu_kunit_cookie_done, &held,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the held domain's grace period did not end within %d ms of its reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	if (safe)
		kfree(st);
}

static bool srcu_kunit_flipped(void *arg)
{
	struct srcu_kunit_cookie *c = arg;

	return READ_ONCE(c->ssp->srcu_idx) != c->cookie;
}

/* srcu_read_lock_held() can say "no" only where lockdep tracks readers. */
static bool srcu_kunit_held_is_exact(void)
{
	return IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC) && debug_lockdep_rcu_enabled();
}

/*
 * Covers: SRCU-3
 *
 * The index cookie: a reader begun before a grace period flips the
 * domain's index and one begun after it get different indexes; unlocked
 * in the order they began (not nested), each with its own index, the
 * grace period waits for the old reader only, and a later one for the
 * new reader.  srcu_read_lock_held() says yes inside, no outside.
 */
static void srcu_index_flip(struct kunit *test)
{
	struct srcu_kunit_sync *g = kzalloc(sizeof(*g), GFP_KERNEL);
	struct srcu_struct *ssp = &srcu_kunit_static;
	struct srcu_kunit_cookie flip, later;
	struct kunit_rcu_work *w;
	bool flipped, safe;
	int old, new;

	KUNIT_ASSERT_NOT_NULL(test, g);
	kunit_rcu_unexpedite(test);
	if (srcu_kunit_held_is_exact())
		KUNIT_EXPECT_FALSE(test, srcu_read_lock_held(ssp));
	old = srcu_read_lock(ssp);
	KUNIT_EXPECT_TRUE(test, srcu_read_lock_held(ssp));
	flip = (struct srcu_kunit_cookie){ .ssp = ssp, .cookie = READ_ONCE(ssp->srcu_idx) };
	*g = (struct srcu_kunit_sync){ .ssp = ssp, .sync = synchronize_srcu };
	w = kunit_rcu_start_on_cpu(test, raw_smp_processor_id(), srcu_kunit_sync_fn, g, false);
	flipped = kunit_rcu_wait_until(srcu_kunit_flipped, &flip, KUNIT_RCU_PROMPT_MS);
	new = srcu_read_lock(ssp);
	KUNIT_EXPECT_TRUE_MSG(test, flipped, "the grace period did not flip the index in %d ms",
			      KUNIT_RCU_PROMPT_MS);
	KUNIT_EXPECT_NE_MSG(test, old, new, "readers before and after the flip share an index");
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	KUNIT_EXPECT_FALSE_MSG(test, atomic_read_acquire(&g->done),
			       "synchronize_srcu() returned while a reader older than it ran");
	srcu_read_unlock(ssp, old);
	KUNIT_EXPECT_TRUE(test, srcu_read_lock_held(ssp));
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_flag(&g->done, KUNIT_RCU_GP_TIMEOUT_MS),
			      "synchronize_srcu() did not return within %d ms of the old reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	safe = kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS);
	later = (struct srcu_kunit_cookie){ .ssp = ssp };
	later.cookie = start_poll_synchronize_srcu(ssp);
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	KUNIT_EXPECT_FALSE_MSG(test, srcu_kunit_cookie_done(&later),
			       "a grace period ended while the reader after the flip ran");
	srcu_read_unlock(ssp, new);
	if (srcu_kunit_held_is_exact())
		KUNIT_EXPECT_FALSE(test, srcu_read_lock_held(ssp));
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(srcu_kunit_cookie_done, &later,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "the grace period did not end within %d ms of the new reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	if (safe)
		kfree(g);
}

/* Callbacks queued, one per CPU, on at most this many CPUs. */
#define SRCU_KUNIT_CB_CPUS	8

struct srcu_kunit_cb {
	struct rcu_head head;
	struct srcu_struct *ssp;
	atomic_t *ran;
};

static void srcu_kunit_count_cb(struct rcu_head *head)
{
	atomic_inc(container_of(head, struct srcu_kunit_cb, head)->ran);
}

static void srcu_kunit_queue_fn(void *arg)
{
	struct srcu_kunit_cb *cb = arg;

	call_srcu(cb->ssp, &cb->head, srcu_kunit_count_cb);
}

/**
 * struct srcu_kunit_barrier - state of srcu_barrier_waits_for_pending
 * @ssp: a domain of the case's own (init_srcu_struct())
 * @r: a reader of it
 * @barrier: srcu_barrier() in a kthread
 * @cbs: the callbacks
 * @ran: callbacks that ran
 */
struct srcu_kunit_barrier {
	struct srcu_struct ssp;
	struct srcu_kunit_reader r;
	struct srcu_kunit_sync barrier;
	struct srcu_kunit_cb cbs[SRCU_KUNIT_CB_CPUS];
	atomic_t ran;
};

/*
 * Covers: SRCU-5
 *
 * call_srcu() and srcu_barrier() on a domain of the case's own
 * (init_srcu_struct()): callbacks queued from every CPU while a reader
 * holds their grace period do not run, and srcu_barrier() does not
 * return, until the reader ends; when it returns every callback has run.
 * cleanup_srcu_struct() of the drained domain is clean (no splat).
 */
static void srcu_barrier_waits_for_pending(struct kunit *test)
{
	struct srcu_kunit_barrier *b = kzalloc(sizeof(*b), GFP_KERNEL);
	int cpu, n = 0, self = raw_smp_processor_id();
	struct kunit_rcu_work *rw, *bw;
	bool safe;

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, init_srcu_struct(&b->ssp), 0);
	kunit_rcu_unexpedite(test);
	b->r.ssp = &b->ssp;
	rw = srcu_kunit_start_reader(test, &b->r, self);
	for_each_online_cpu(cpu) {
		if (n == SRCU_KUNIT_CB_CPUS)
			break;
		b->cbs[n] = (struct srcu_kunit_cb){ .ssp = &b->ssp, .ran = &b->ran };
		if (!kunit_rcu_run_on_cpu(test, cpu, srcu_kunit_queue_fn, &b->cbs[n], false,
					  KUNIT_RCU_PROMPT_MS))
			break;
		n++;
	}
	b->barrier = (struct srcu_kunit_sync){ .ssp = &b->ssp, .sync = srcu_barrier,
					       .count = &b->ran };
	bw = kunit_rcu_start_on_cpu(test, self, srcu_kunit_sync_fn, &b->barrier, false);
	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	KUNIT_EXPECT_FALSE_MSG(test, atomic_read_acquire(&b->barrier.done),
			       "srcu_barrier() returned while its callbacks' grace period was held");
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&b->ran), 0,
			    "callbacks ran while a reader older than them ran");
	safe = srcu_kunit_end_reader(test, &b->r, rw);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_flag(&b->barrier.done, KUNIT_RCU_GP_TIMEOUT_MS),
			      "srcu_barrier() did not return within %d ms of the reader",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	safe &= kunit_rcu_finish(test, bw, KUNIT_RCU_PROMPT_MS);
	KUNIT_EXPECT_EQ_MSG(test, b->barrier.cbs, n,
			    "srcu_barrier() returned before every callback of %d CPUs ran", n);
	if (!safe || atomic_read(&b->ran) != n)
		return;	/* Something may still use the domain: leak it. */
	cleanup_srcu_struct(&b->ssp);
	kfree(b);
}

/*
 * Covers: SRCU-5
 *
 * SRCU's polled API on a DEFINE_SRCU() domain: cookies taken inside a
 * reader (get_state_synchronize_srcu(), start_poll_synchronize_srcu())
 * do not read as complete while it runs; start_poll's grace period then
 * ends with no other update-side call, and completes both; a cookie is
 * always complete after synchronize_srcu() and after
 * synchronize_srcu_expedited().
 */
static void srcu_poll_cookies(struct kunit *test)
{
	struct srcu_kunit_cookie got = { .ssp = &srcu_kunit_global };
	struct srcu_kunit_cookie started = got;
	bool early;
	int idx;

	kunit_rcu_unexpedite(test);
	idx = srcu_read_lock(got.ssp);
	got.cookie = get_state_synchronize_srcu(got.ssp);
	started.cookie = start_poll_synchronize_srcu(got.ssp);
	early = kunit_rcu_wait_until(srcu_kunit_cookie_done, &got, KUNIT_RCU_HOLD_MS) ||
		srcu_kunit_cookie_done(&started);
	srcu_read_unlock(got.ssp, idx);
	KUNIT_EXPECT_FALSE_MSG(test, early, "a cookie completed while a reader older than it ran");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(srcu_kunit_cookie_done, &started,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "start_poll_synchronize_srcu()'s grace period did not end in %d ms",
			      KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE(test, srcu_kunit_cookie_done(&got));

	got.cookie = get_state_synchronize_srcu(got.ssp);
	synchronize_srcu(got.ssp);
	KUNIT_EXPECT_TRUE_MSG(test, srcu_kunit_cookie_done(&got),
			      "cookie not complete after synchronize_srcu()");
	got.cookie = get_state_synchronize_srcu(got.ssp);
	synchronize_srcu_expedited(got.ssp);
	KUNIT_EXPECT_TRUE_MSG(test, srcu_kunit_cookie_done(&got),
			      "cookie not complete after synchronize_srcu_expedited()");
}

static struct kunit_case srcu_cases[] = {
	KUNIT_CASE(srcu_domains_independent),
	KUNIT_CASE(srcu_reader_sleeps),
	KUNIT_CASE(srcu_index_flip),
	KUNIT_CASE(srcu_reader_in_eqs),
	KUNIT_CASE(srcu_barrier_waits_for_pending),
	KUNIT_CASE(srcu_poll_cookies),
	{}
};

static struct kunit_suite srcu_suite = {
	.name = "srcu",
	.test_cases = srcu_cases,
};

kunit_test_suite(srcu_suite);

MODULE_DESCRIPTION("KUnit tests for SRCU's requirements");
MODULE_LICENSE("GPL");
