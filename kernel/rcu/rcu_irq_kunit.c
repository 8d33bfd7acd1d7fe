// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for RCU's requirements on interrupts, NMIs and extended
 * quiescent states ("RCU requirements, part 3": Interrupts and NMIs,
 * Energy efficiency).  Interrupts, NMI-like entries and fake extended
 * quiescent states come from lib/kunit-rcu/; handlers only record, the
 * test thread asserts.
 *
 * NMI-like entries: x86 raises a self-NMI (int3 nested inside it); arm64
 * raises a kernel BRK, which enters RCU through ct_nmi_enter() like an
 * NMI but leaves in_nmi() false.
 */

#include <kunit/test.h>
#include <linux/context_tracking.h>
#include <linux/delay.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "kunit_rcu.h"

/* Deepest nesting of NMI-like entries tried. */
#define RCU_IRQ_NEST_DEPTH	3

/* Attempts at interrupting an idle CPU. */
#define RCU_IRQ_IDLE_TRIES	10

struct rcu_irq_eqs_hold {
	struct kunit_rcu_hold hold;
	struct kunit_rcu_snap before, after;
	int raised;
};

static void rcu_irq_hold_in_nmi(void *arg)
{
	struct rcu_irq_eqs_hold *e = arg;

	kunit_rcu_snap(&e->before);
	e->raised = kunit_rcu_raise(kunit_rcu_nmi_like(0), kunit_rcu_hold_reader, &e->hold);
	kunit_rcu_snap(&e->after);
}

/*
 * Covers: IRQ-1
 *
 * A reader in a hardirq handler holds up normal and expedited grace
 * periods started on another CPU until the handler leaves it, both when
 * the interrupt arrives from idle (RCU must start watching on irq entry)
 * and in a task's irq-disabled region.
 */
static void rcu_irq_reader_in_hardirq(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	struct kunit_rcu_hold *h = NULL;
	struct kunit_rcu_work *w;
	struct kunit_rcu_irq *ir;
	int i;

	/*
	 * The guest is idle but for this test: its other CPUs sit in idle,
	 * mostly inside its extended quiescent state.  Retry until the
	 * interrupt lands there: from an EQS the handler's NMI nesting is
	 * small (1 once RCU watches; 3 when it nests in another interrupt
	 * from idle, e.g. during that one's softirq processing: retried,
	 * this case wants the outermost), from anywhere else it is
	 * DYNTICK_IRQ_NONIDLE plus the irq.
	 */
	for (i = 0; i < RCU_IRQ_IDLE_TRIES; i++) {
		h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, h);
		ir = kunit_rcu_irq_start(test, cpu, kunit_rcu_hold_reader, h);
		kunit_rcu_expect_gp_held(test, h, "reader in a hardirq handler");
		KUNIT_ASSERT_TRUE(test, kunit_rcu_irq_finish(test, ir, KUNIT_RCU_PROMPT_MS));
		if (h->in.idle_task && h->in.nmi_nesting == 1)
			break;
		msleep(20);
	}
	KUNIT_EXPECT_TRUE_MSG(test, h->in.idle_task && h->in.nmi_nesting < DYNTICK_IRQ_NONIDLE,
			      "CPU %d: no interrupt of %d came from its idle EQS", cpu,
			      RCU_IRQ_IDLE_TRIES);
	KUNIT_EXPECT_EQ(test, h->in.nmi_nesting, 1);
	KUNIT_EXPECT_TRUE(test, h->in.in_hardirq);
	KUNIT_EXPECT_TRUE(test, h->in.watching);
	KUNIT_EXPECT_TRUE(test, h->released);

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	w = kunit_rcu_start_on_cpu(test, cpu, kunit_rcu_hold_reader_irqs_off, h, false);
	kunit_rcu_expect_gp_held(test, h, "reader with interrupts disabled");
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS));
	KUNIT_EXPECT_TRUE(test, h->in.irqs_disabled);
	KUNIT_EXPECT_TRUE(test, h->released);
}

struct rcu_irq_cb {
	struct rcu_head head;
	unsigned long cookie;
	atomic_t calls;
	bool gp_done;		/* at callback time */
	bool reader_held;	/* at callback time: the older reader still ran */
	atomic_t *reader_in, *reader_out;
};

struct rcu_irq_call {
	struct kunit_rcu_hold hold;
	atomic_t reader_out;
	struct rcu_irq_cb cb[2];	/* [0] from hardirq, [1] irqs disabled */
};

static void rcu_irq_cb_fn(struct rcu_head *head)
{
	struct rcu_irq_cb *cb = container_of(head, struct rcu_irq_cb, head);

	cb->gp_done = poll_state_synchronize_rcu(cb->cookie);
	cb->reader_held = !atomic_read(cb->reader_out);
	atomic_inc(&cb->calls);
}

static void rcu_irq_queue_cb(void *arg)
{
	struct rcu_irq_cb *cb = arg;

	cb->cookie = get_state_synchronize_rcu();
	call_rcu(&cb->head, rcu_irq_cb_fn);
}

static void rcu_irq_hold_then_mark(void *arg)
{
	struct rcu_irq_call *c = arg;

	kunit_rcu_hold_reader(&c->hold);
	atomic_set_release(&c->reader_out, 1);
}

static bool rcu_irq_both_called(void *arg)
{
	struct rcu_irq_call *c = arg;

	return atomic_read(&c->cb[0].calls) && atomic_read(&c->cb[1].calls);
}

/*
 * Covers: IRQ-2
 *
 * call_rcu() from a hardirq handler and from an irq-disabled region:
 * each callback runs exactly once, not while a reader that began before
 * the call_rcu() still runs, and only once a full grace period (a
 * cookie taken at call time) has elapsed.
 */
static void rcu_irq_call_rcu(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test), reader_cpu = kunit_rcu_other_cpu(cpu);
	struct kunit_rcu_work *w;
	struct rcu_irq_call *c;
	unsigned long flags;
	int i;

	/* Freed only once both callbacks ran: a lost callback must not free under RCU. */
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	for (i = 0; i < 2; i++)
		c->cb[i].reader_out = &c->reader_out;
	w = kunit_rcu_start_on_cpu(test, reader_cpu, rcu_irq_hold_then_mark, c, false);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_wait_flag(&c->hold.in_reader, KUNIT_RCU_PROMPT_MS));

	KUNIT_EXPECT_TRUE(test, kunit_rcu_irq_on_cpu(test, cpu, rcu_irq_queue_cb, &c->cb[0],
						     KUNIT_RCU_PROMPT_MS));
	local_irq_save(flags);
	rcu_irq_queue_cb(&c->cb[1]);
	local_irq_restore(flags);

	kunit_rcu_delay_ms(KUNIT_RCU_HOLD_MS);
	atomic_set_release(&c->hold.release, 1);
	kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS);
	if (!kunit_rcu_wait_until(rcu_irq_both_called, c, KUNIT_RCU_GP_TIMEOUT_MS)) {
		KUNIT_FAIL(test, "callbacks not invoked within %d ms: hardirq %d, irqs-off %d",
			   KUNIT_RCU_GP_TIMEOUT_MS, atomic_read(&c->cb[0].calls),
			   atomic_read(&c->cb[1].calls));
		return;	/* c is leaked on purpose */
	}
	rcu_barrier();
	for (i = 0; i < 2; i++) {
		const char *from = i ? "irq-disabled code" : "a hardirq handler";

		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->cb[i].calls), 1,
				    "callback queued from %s: invocations", from);
		KUNIT_EXPECT_FALSE_MSG(test, c->cb[i].reader_held,
				       "callback from %s ran under an older reader", from);
		KUNIT_EXPECT_TRUE_MSG(test, c->cb[i].gp_done,
				      "callback from %s ran before a full grace period", from);
	}
	kfree(c);
}

struct rcu_irq_half {
	struct kunit_rcu_snap s[4];
};

static void rcu_irq_half_fn(void *arg)
{
	struct rcu_irq_half *hi = arg;
	unsigned long flags;

	local_irq_save(flags);
	kunit_rcu_snap(&hi->s[0]);
	ct_irq_enter();			/* an interrupt that never returns ... */
	kunit_rcu_snap(&hi->s[1]);
	ct_idle_enter();		/* ... and the next idle entry */
	kunit_rcu_snap(&hi->s[2]);
	ct_idle_exit();
	kunit_rcu_snap(&hi->s[3]);
	local_irq_restore(flags);
}

/*
 * Covers: IRQ-3
 *
 * A half-interrupt (irq entry with no matching exit, as an upcall to
 * user mode makes) followed by the next idle entry: 6.1 warns, then
 * resets the irq nesting, so the idle entry is a real extended quiescent
 * state and the idle exit restores the usual task-context counters.
 */
static void rcu_irq_half_interrupt(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_irq_half *hi = kunit_kzalloc(test, sizeof(*hi), GFP_KERNEL);
	struct kunit_rcu_snap *s;

	KUNIT_ASSERT_NOT_NULL(test, hi);
	s = hi->s;
	kunit_rcu_expect_splat_begin(test, "kernel/context_tracking.c", NULL);
	kunit_rcu_run_on_cpu(test, cpu, rcu_irq_half_fn, hi, false, KUNIT_RCU_PROMPT_MS);
	kunit_rcu_expect_splat_end(test);

	KUNIT_EXPECT_TRUE(test, s[0].watching);
	KUNIT_EXPECT_EQ(test, s[0].nmi_nesting, DYNTICK_IRQ_NONIDLE);
	KUNIT_EXPECT_EQ(test, s[1].nmi_nesting, DYNTICK_IRQ_NONIDLE + 2);
	KUNIT_EXPECT_EQ(test, s[1].dynticks, s[0].dynticks);
	/* The idle entry after the half-interrupt. */
	KUNIT_EXPECT_FALSE(test, s[2].watching);
	KUNIT_EXPECT_EQ(test, s[2].nesting, 0);
	KUNIT_EXPECT_EQ(test, s[2].nmi_nesting, 0);
	KUNIT_EXPECT_EQ(test, s[2].dynticks, s[0].dynticks + RCU_DYNTICKS_IDX);
	/* The idle exit. */
	KUNIT_EXPECT_TRUE(test, s[3].watching);
	KUNIT_EXPECT_EQ(test, s[3].nesting, s[0].nesting);
	KUNIT_EXPECT_EQ(test, s[3].nmi_nesting, DYNTICK_IRQ_NONIDLE);
	KUNIT_EXPECT_EQ(test, s[3].dynticks, s[0].dynticks + 2 * RCU_DYNTICKS_IDX);
}

/*
 * Covers: IRQ-4
 *
 * An NMI-like entry taken from an extended quiescent state: RCU watches
 * inside it, a reader there holds up normal and expedited grace periods
 * (the entry is no quiescent state), and the CPU is back in its EQS,
 * counter moved by exactly one entry and exit, once the entry returns.
 */
static void rcu_irq_nmi_from_eqs(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_irq_eqs_hold *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct kunit_rcu_work *w;

	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_EQ(test, kunit_rcu_entries_arm(test), 0);
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_irq_hold_in_nmi, e, true);
	kunit_rcu_expect_gp_held(test, &e->hold, kunit_rcu_entry_name(kunit_rcu_nmi_like(0)));
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS));

	KUNIT_ASSERT_EQ(test, e->raised, 0);
	KUNIT_EXPECT_FALSE(test, e->before.watching);
	KUNIT_EXPECT_TRUE(test, e->hold.in.watching);
	KUNIT_EXPECT_EQ(test, e->hold.in.nmi_nesting, 1);
	KUNIT_EXPECT_EQ(test, e->hold.in.dynticks, e->before.dynticks + RCU_DYNTICKS_IDX);
	KUNIT_EXPECT_GE(test, e->hold.in.reader_depth, 1);
	KUNIT_EXPECT_TRUE(test, e->hold.out.watching);
	if (IS_ENABLED(CONFIG_X86))
		KUNIT_EXPECT_TRUE(test, e->hold.in.in_nmi);
	KUNIT_EXPECT_FALSE(test, e->after.watching);
	KUNIT_EXPECT_EQ(test, e->after.nmi_nesting, 0);
	KUNIT_EXPECT_EQ(test, e->after.dynticks, e->before.dynticks + 2 * RCU_DYNTICKS_IDX);
}

struct rcu_irq_nest {
	unsigned int depth;
	int raised[RCU_IRQ_NEST_DEPTH];
	struct kunit_rcu_snap eqs, in[RCU_IRQ_NEST_DEPTH], out[RCU_IRQ_NEST_DEPTH], end;
};

static void rcu_irq_nest_fn(void *arg)
{
	struct rcu_irq_nest *n = arg;
	unsigned int d = n->depth++;

	kunit_rcu_snap(&n->in[d]);
	if (d + 1 < RCU_IRQ_NEST_DEPTH)
		n->raised[d + 1] = kunit_rcu_raise(kunit_rcu_nmi_like(d + 1), rcu_irq_nest_fn, n);
	kunit_rcu_snap(&n->out[d]);
}

static void rcu_irq_nest_eqs(void *arg)
{
	struct rcu_irq_nest *n = arg;

	kunit_rcu_snap(&n->eqs);
	n->raised[0] = kunit_rcu_raise(kunit_rcu_nmi_like(0), rcu_irq_nest_fn, n);
	kunit_rcu_snap(&n->end);
}

/*
 * Covers: IRQ-5
 *
 * NMI-like entries nested one, two and three deep from an extended
 * quiescent state: only the outermost moves the counter; the NMI
 * nesting steps 1, 3, 5 and unwinds exactly; each outer handler is
 * still watched after its inner one returned; the EQS is back at the end.
 */
static void rcu_irq_nmi_nesting(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_irq_nest *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	int d;

	KUNIT_ASSERT_NOT_NULL(test, n);
	KUNIT_ASSERT_EQ(test, kunit_rcu_entries_arm(test), 0);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_run_on_cpu(test, cpu, rcu_irq_nest_eqs, n, true,
						     KUNIT_RCU_PROMPT_MS));

	for (d = 0; d < RCU_IRQ_NEST_DEPTH; d++) {
		const char *name = kunit_rcu_entry_name(kunit_rcu_nmi_like(d));

		KUNIT_ASSERT_EQ_MSG(test, n->raised[d], 0, "%s at depth %d not taken", name, d + 1);
		KUNIT_EXPECT_TRUE_MSG(test, n->in[d].watching, "%s depth %d entry", name, d + 1);
		KUNIT_EXPECT_TRUE_MSG(test, n->out[d].watching, "%s depth %d after inner exit",
				      name, d + 1);
		KUNIT_EXPECT_EQ_MSG(test, n->in[d].nmi_nesting, 2 * d + 1, "%s depth %d entry",
				    name, d + 1);
		KUNIT_EXPECT_EQ_MSG(test, n->out[d].nmi_nesting, 2 * d + 1,
				    "%s depth %d after inner exit", name, d + 1);
		KUNIT_EXPECT_EQ_MSG(test, n->in[d].dynticks, n->eqs.dynticks + RCU_DYNTICKS_IDX,
				    "%s depth %d entry", name, d + 1);
		KUNIT_EXPECT_EQ_MSG(test, n->out[d].dynticks, n->eqs.dynticks + RCU_DYNTICKS_IDX,
				    "%s depth %d after inner exit", name, d + 1);
		if (IS_ENABLED(CONFIG_X86))
			KUNIT_EXPECT_TRUE_MSG(test, n->in[d].in_nmi, "%s depth %d", name, d + 1);
	}
	KUNIT_EXPECT_FALSE(test, n->eqs.watching);
	KUNIT_EXPECT_FALSE(test, n->end.watching);
	KUNIT_EXPECT_EQ(test, n->end.nmi_nesting, 0);
	KUNIT_EXPECT_EQ(test, n->end.dynticks, n->eqs.dynticks + 2 * RCU_DYNTICKS_IDX);
}

struct rcu_irq_sample {
	atomic_t busy, go_eqs, eqs_done, finish;
};

static void rcu_irq_nop(void *arg)
{
}

static void rcu_irq_busy_then_eqs(void *arg)
{
	struct rcu_irq_sample *sm = arg;

	preempt_disable();
	atomic_set_release(&sm->busy, 1);
	if (kunit_rcu_spin_flag(&sm->go_eqs, KUNIT_RCU_PROMPT_MS))
		kunit_rcu_eqs_call(rcu_irq_nop, NULL);
	atomic_set_release(&sm->eqs_done, 1);
	kunit_rcu_spin_flag(&sm->finish, KUNIT_RCU_PROMPT_MS);
	preempt_enable();
}

/*
 * Covers: EN-5
 *
 * Sampling a CPU's context-tracking counter twice tells whether it went
 * through an extended quiescent state in between: the samples are equal
 * while it stays busy (interrupts from a busy task do not count), and
 * differ by exactly one EQS entry and exit after it went through one.
 */
static void rcu_irq_eqs_sampling(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_irq_sample *sm = kunit_kzalloc(test, sizeof(*sm), GFP_KERNEL);
	struct kunit_rcu_work *w;
	int busy1, busy2, after;

	KUNIT_ASSERT_NOT_NULL(test, sm);
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_irq_busy_then_eqs, sm, false);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_wait_flag(&sm->busy, KUNIT_RCU_PROMPT_MS));
	busy1 = ct_dynticks_cpu_acquire(cpu);
	msleep(50);		/* a dozen ticks or so hit the busy CPU */
	busy2 = ct_dynticks_cpu_acquire(cpu);
	atomic_set_release(&sm->go_eqs, 1);
	kunit_rcu_wait_flag(&sm->eqs_done, KUNIT_RCU_PROMPT_MS);
	after = ct_dynticks_cpu_acquire(cpu);
	atomic_set_release(&sm->finish, 1);
	kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS);

	KUNIT_EXPECT_TRUE_MSG(test, busy1 & RCU_DYNTICKS_IDX, "busy CPU %d not watched", cpu);
	KUNIT_EXPECT_EQ_MSG(test, busy2, busy1, "CPU %d stayed busy, yet its counter moved", cpu);
	KUNIT_EXPECT_TRUE_MSG(test, after & RCU_DYNTICKS_IDX, "CPU %d not watched after its EQS",
			      cpu);
	KUNIT_EXPECT_EQ_MSG(test, after, busy2 + 2 * RCU_DYNTICKS_IDX,
			    "CPU %d went through one EQS", cpu);
}

/* How long the busy CPU holds a normal grace period before its passages. */
#define RCU_IRQ_BUSY_MS		300
/* Time between two passages of the busy CPU through an EQS. */
#define RCU_IRQ_PASSAGE_MS	20

struct rcu_irq_passage {
	struct kunit_rcu_seq seq;	/* the normal grace period requested */
	atomic_t busy, go;
	bool held;			/* not ended while the CPU only spun */
	bool ended;			/* ended after a passage, the CPU still busy */
	int passages;
	u64 ms;				/* from the first passage to the end */
};

/*
 * Preemption disabled from start to end: this CPU reports no quiescent
 * state itself (its tick sees a preempt-disabled region, nothing switches
 * context), so only RCU's comparison of two samples of its counter can
 * end the grace period.  Interrupts stay enabled: the grace-period
 * kthread's timers may be queued here.
 */
static void rcu_irq_busy_passages(void *arg)
{
	struct rcu_irq_passage *pa = arg;
	u64 start;

	preempt_disable();
	atomic_set_release(&pa->busy, 1);
	if (!kunit_rcu_spin_flag(&pa->go, KUNIT_RCU_PROMPT_MS))
		goto out;
	pa->held = !kunit_rcu_spin_until(kunit_rcu_normal_done, &pa->seq, RCU_IRQ_BUSY_MS);
	if (!pa->held)
		goto out;
	start = kunit_rcu_now_ms();
	do {
		kunit_rcu_eqs_call(rcu_irq_nop, NULL);
		pa->passages++;
		pa->ended = kunit_rcu_spin_until(kunit_rcu_normal_done, &pa->seq,
						 RCU_IRQ_PASSAGE_MS);
	} while (!pa->ended && kunit_rcu_now_ms() < start + KUNIT_RCU_PROMPT_MS);
	pa->ms = kunit_rcu_now_ms() - start;
out:
	preempt_enable();
}

/*
 * Covers: EN-5
 *
 * RCU's own use of the samples: a CPU that spins in the kernel with
 * preemption disabled holds a normal grace period requested meanwhile
 * (RCU_IRQ_BUSY_MS), and once it passes through an extended quiescent
 * state (a fake one, RCU_IRQ_PASSAGE_MS apart, each a few instructions
 * long) the grace period ends within KUNIT_RCU_PROMPT_MS while the CPU
 * is still spinning: the grace-period kthread saw its counter move since
 * its snapshot.  Expedited grace periods need the CPU to take their IPI
 * and are not part of this.
 */
static void rcu_irq_eqs_passage_ends_gp(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_irq_passage *pa = kunit_kzalloc(test, sizeof(*pa), GFP_KERNEL);
	struct kunit_rcu_work *w;
	bool busy;

	KUNIT_ASSERT_NOT_NULL(test, pa);
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_irq_busy_passages, pa, false);
	KUNIT_ASSERT_NOT_NULL(test, w);
	busy = kunit_rcu_wait_flag(&pa->busy, KUNIT_RCU_PROMPT_MS);
	kunit_rcu_seq_snap(&pa->seq);
	start_poll_synchronize_rcu();
	atomic_set_release(&pa->go, 1);
	KUNIT_ASSERT_TRUE_MSG(test, kunit_rcu_finish(test, w, RCU_IRQ_BUSY_MS +
						     3 * KUNIT_RCU_PROMPT_MS),
			      "CPU %d did not finish spinning", cpu);
	KUNIT_ASSERT_TRUE_MSG(test, busy, "CPU %d did not begin spinning within %d ms", cpu,
			      KUNIT_RCU_PROMPT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, pa->held,
			      "a normal grace period ended while CPU %d spun with preemption disabled",
			      cpu);
	if (!pa->held)
		return;
	kunit_info(test, "%d passage(s) through an EQS, %llu ms\n", pa->passages, pa->ms);
	KUNIT_EXPECT_TRUE_MSG(test, pa->ended,
			      "the normal grace period did not end within %llu ms of CPU %d's first passage through an EQS (%d passages), the CPU still spinning",
			      pa->ms, cpu, pa->passages);
}

static void rcu_irq_reader_fn(void *arg)
{
	rcu_read_lock();
	rcu_read_unlock();
}

/*
 * Covers: EN-2
 *
 * A reader on a CPU in an extended quiescent state is illegal, and
 * PROVE_RCU says so: rcu_read_lock()'s own check reports it "used
 * illegally while idle" in a "suspicious RCU usage" splat.  Lockdep's
 * lock tracepoint warns too, whatever RCU does: that warning is
 * tolerated but does not satisfy the case.
 */
static void rcu_irq_reader_in_eqs_diagnosed(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);

	if (!IS_ENABLED(CONFIG_PROVE_RCU))
		kunit_skip(test, "needs CONFIG_PROVE_RCU");
	kunit_rcu_expect_splat_begin(test, "suspicious RCU usage|at include/trace/events/lock.h:",
				     "used illegally while idle");
	kunit_rcu_run_on_cpu(test, cpu, rcu_irq_reader_fn, NULL, true, KUNIT_RCU_PROMPT_MS);
	kunit_rcu_expect_splat_end(test);
}

static void rcu_irq_nonidle_fn(void *arg)
{
	struct rcu_irq_eqs_hold *e = arg;

	kunit_rcu_snap(&e->before);
	RCU_NONIDLE(kunit_rcu_hold_reader(&e->hold));
	kunit_rcu_snap(&e->after);
}

/*
 * Covers: EN-4
 *
 * RCU_NONIDLE() (ct_irq_enter_irqson() underneath) lets idle-path code
 * run a reader legally: RCU watches inside it, no splat, and the reader
 * holds up grace periods; outside it the CPU is in its EQS again.
 */
static void rcu_irq_nonidle_reader(struct kunit *test)
{
	int cpu = kunit_rcu_target_cpu(test);
	struct rcu_irq_eqs_hold *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct kunit_rcu_work *w;

	KUNIT_ASSERT_NOT_NULL(test, e);
	w = kunit_rcu_start_on_cpu(test, cpu, rcu_irq_nonidle_fn, e, true);
	kunit_rcu_expect_gp_held(test, &e->hold, "reader in RCU_NONIDLE()");
	KUNIT_ASSERT_TRUE(test, kunit_rcu_finish(test, w, KUNIT_RCU_PROMPT_MS));

	KUNIT_EXPECT_TRUE(test, e->hold.released);
	KUNIT_EXPECT_FALSE(test, e->before.watching);
	KUNIT_EXPECT_TRUE(test, e->hold.in.watching);
	KUNIT_EXPECT_EQ(test, e->hold.in.nmi_nesting, 1);
	KUNIT_EXPECT_EQ(test, e->hold.in.dynticks, e->before.dynticks + RCU_DYNTICKS_IDX);
	KUNIT_EXPECT_GE(test, e->hold.in.reader_depth, 1);
	KUNIT_EXPECT_FALSE(test, e->after.watching);
}

static struct kunit_case rcu_irq_cases[] = {
	KUNIT_CASE(rcu_irq_reader_in_hardirq),
	KUNIT_CASE(rcu_irq_call_rcu),
	KUNIT_CASE(rcu_irq_half_interrupt),
	KUNIT_CASE(rcu_irq_nmi_from_eqs),
	KUNIT_CASE(rcu_irq_nmi_nesting),
	KUNIT_CASE(rcu_irq_eqs_sampling),
	KUNIT_CASE(rcu_irq_eqs_passage_ends_gp),
	KUNIT_CASE(rcu_irq_reader_in_eqs_diagnosed),
	KUNIT_CASE(rcu_irq_nonidle_reader),
	{}
};

static struct kunit_suite rcu_irq_suite = {
	.name = "rcu_irq",
	.test_cases = rcu_irq_cases,
};

kunit_test_suite(rcu_irq_suite);

MODULE_DESCRIPTION("KUnit tests for RCU's interrupt, NMI and idle requirements");
MODULE_LICENSE("GPL");
