// SPDX-License-Identifier: GPL-2.0
/*
 * kunit-rcu: state snapshots, bounded waits, work on a chosen CPU, fake
 * extended quiescent states, interrupts, NMI-like entries and expected
 * splats for the KUnit suites of RCU's Linux-kernel requirements.
 */

#include <kunit/resource.h>
#include <linux/completion.h>
#include <linux/context_tracking.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/kmsg_dump.h>
#include <linux/kthread.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "kunit_rcu.h"
#include "rcu.h"

/* Spinning loops read the clock once every this many iterations. */
#define KUNIT_RCU_CLOCK_EVERY	1024

/**
 * kunit_rcu_reader_depth() - RCU reader nesting as the implementation counts it
 *
 * ->rcu_read_lock_nesting with preemptible RCU, the preemption-disable
 * depth otherwise.
 *
 * Return: the depth.
 */
int kunit_rcu_reader_depth(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))
		return rcu_preempt_depth();
	return preempt_count() & PREEMPT_MASK;
}

/**
 * kunit_rcu_snap() - record RCU and context-tracking state
 * @s: where to record it
 *
 * Safe in any context, including NMI-like handlers and a fake extended
 * quiescent state: it neither sleeps, nor prints, nor uses RCU.
 */
void kunit_rcu_snap(struct kunit_rcu_snap *s)
{
	s->cpu = raw_smp_processor_id();
	s->preempt_count = preempt_count();
	s->reader_depth = kunit_rcu_reader_depth();
	s->dynticks = ct_dynticks();
	s->nesting = ct_dynticks_nesting();
	s->nmi_nesting = ct_dynticks_nmi_nesting();
	s->watching = rcu_is_watching();
	s->in_nmi = in_nmi();
	s->in_hardirq = in_hardirq();
	s->irqs_disabled = irqs_disabled();
	s->preemptible = preemptible();
	s->idle_task = is_idle_task(current);
	s->sp = (unsigned long)__builtin_frame_address(0);
	s->stack = kunit_rcu_arch_stack(s->sp);
	s->valid = true;
}

/**
 * kunit_rcu_now_ms() - a millisecond clock usable in any context
 *
 * Based on ktime_get_mono_fast_ns(), so it advances with interrupts
 * disabled, in NMIs and in a fake extended quiescent state, where
 * jiffies may stand still.
 *
 * Return: milliseconds since boot.
 */
u64 kunit_rcu_now_ms(void)
{
	return div_u64(ktime_get_mono_fast_ns(), NSEC_PER_MSEC);
}

/**
 * kunit_rcu_spin_until() - busy-wait for a condition, bounded
 * @done: the condition
 * @arg: its argument
 * @ms: bound in milliseconds
 *
 * Never sleeps: usable in readers, with interrupts disabled and in
 * NMI-like handlers.
 *
 * Return: whether @done(@arg) became true within @ms.
 */
bool kunit_rcu_spin_until(bool (*done)(void *arg), void *arg, unsigned int ms)
{
	u64 end = kunit_rcu_now_ms() + ms;
	unsigned int i = 0;

	while (!done(arg)) {
		/*
		 * Read the clock seldom: under QEMU TCG it is the HPET, whose
		 * every read takes QEMU's big lock and slows the other vCPUs.
		 */
		if (!(++i % KUNIT_RCU_CLOCK_EVERY) && kunit_rcu_now_ms() > end)
			return done(arg);
		cpu_relax();
	}
	return true;
}

/*
 * Sleeps for @min_us to @max_us on a timer pinned to this CPU.
 * usleep_range()'s timer is not pinned: with NO_HZ_COMMON the timer
 * code may queue it on another, busy housekeeping CPU (always, from a
 * nohz_full CPU), and when a case holds that CPU with interrupts
 * disabled the test thread sleeps until the hold ends by its bound.
 * Seen under CONFIG=nohz: every irq-disabled hold ran to its 2 s bound.
 */
static void kunit_rcu_sleep_us(unsigned int min_us, unsigned int max_us)
{
	ktime_t t = ns_to_ktime((u64)min_us * NSEC_PER_USEC);

	set_current_state(TASK_UNINTERRUPTIBLE);
	schedule_hrtimeout_range(&t, (u64)(max_us - min_us) * NSEC_PER_USEC,
				 HRTIMER_MODE_REL_PINNED);
}

/**
 * kunit_rcu_wait_until() - sleep-wait for a condition, bounded
 * @done: the condition
 * @arg: its argument
 * @ms: bound in milliseconds
 *
 * Return: whether @done(@arg) became true within @ms.
 */
bool kunit_rcu_wait_until(bool (*done)(void *arg), void *arg, unsigned int ms)
{
	u64 end = kunit_rcu_now_ms() + ms;

	might_sleep();
	while (!done(arg)) {
		if (kunit_rcu_now_ms() > end)
			return done(arg);
		kunit_rcu_sleep_us(500, 1000);
	}
	return true;
}

/**
 * kunit_rcu_delay_ms() - let time pass in the test thread without jiffies
 * @ms: how long
 *
 * msleep() counts jiffies, which stand still while the CPU that keeps
 * time (with a periodic tick, always the boot CPU) is held in a handler
 * or with interrupts disabled.  This sleeps in short steps of an hrtimer
 * pinned to this CPU and bounds the total with the monotonic clock.
 */
void kunit_rcu_delay_ms(unsigned int ms)
{
	u64 end = kunit_rcu_now_ms() + ms;

	might_sleep();
	while (kunit_rcu_now_ms() <= end)
		kunit_rcu_sleep_us(100, 200);
}

static bool kunit_rcu_flag_set(void *flag)
{
	return atomic_read_acquire(flag);
}

/**
 * kunit_rcu_spin_flag() - busy-wait until an atomic flag is non-zero, bounded
 * @flag: the flag
 * @ms: bound in milliseconds
 *
 * Return: whether @flag became non-zero within @ms.
 */
bool kunit_rcu_spin_flag(atomic_t *flag, unsigned int ms)
{
	return kunit_rcu_spin_until(kunit_rcu_flag_set, flag, ms);
}

/**
 * kunit_rcu_wait_flag() - sleep-wait until an atomic flag is non-zero, bounded
 * @flag: the flag
 * @ms: bound in milliseconds
 *
 * Return: whether @flag became non-zero within @ms.
 */
bool kunit_rcu_wait_flag(atomic_t *flag, unsigned int ms)
{
	return kunit_rcu_wait_until(kunit_rcu_flag_set, flag, ms);
}

static struct cpumask kunit_rcu_kthreadd_saved;
static bool kunit_rcu_kthreadd_moved;

static void kunit_rcu_kthreadd_back(struct kunit_resource *res)
{
	if (kunit_rcu_kthreadd_moved) {
		set_cpus_allowed_ptr(kthreadd_task, &kunit_rcu_kthreadd_saved);
		kunit_rcu_kthreadd_moved = false;
	}
}

/**
 * kunit_rcu_avoid_cpu() - keep the calling task and kthread creation off one CPU
 * @test: the case; kthreadd's CPUs come back when it ends (a kunit resource)
 * @cpu: the CPU a case is about to hold in a handler, with interrupts
 *	disabled or in a fake user mode
 *
 * The calling task (the test thread) may run on any other online CPU,
 * so that a CPU stuck in a synchronous cross-call to the held one (a
 * TLB flush, for example) does not stop the test thread too.  The
 * restriction ends with the test thread.  kthreadd, and so each new
 * kthread until its first run, is kept off @cpu for the rest of the
 * case: kthread_create() waits for both, and either one woken onto the
 * held CPU's run queue would wait there until it is released (seen with
 * two CPUs, or with nohz_full= where kthreads keep to the housekeeping
 * CPUs: the test thread stalled for the whole bound of the hold).
 */
void kunit_rcu_avoid_cpu(struct kunit *test, int cpu)
{
	cpumask_var_t others;

	if (!alloc_cpumask_var(&others, GFP_KERNEL))
		return;
	cpumask_andnot(others, cpu_online_mask, cpumask_of(cpu));
	set_cpus_allowed_ptr(current, others);
	if (!kunit_rcu_kthreadd_moved &&
	    cpumask_andnot(others, kthreadd_task->cpus_ptr, cpumask_of(cpu)) &&
	    kunit_alloc_resource(test, NULL, kunit_rcu_kthreadd_back, GFP_KERNEL, NULL)) {
		cpumask_copy(&kunit_rcu_kthreadd_saved, kthreadd_task->cpus_ptr);
		kunit_rcu_kthreadd_moved = true;
		set_cpus_allowed_ptr(kthreadd_task, others);
	}
	free_cpumask_var(others);
}

/**
 * kunit_rcu_target_cpu() - pick a CPU to hold, and keep the caller off it
 * @test: the case, skipped with fewer than two CPUs online
 *
 * For a case that holds a CPU in a handler or with interrupts disabled
 * while the test thread drives grace periods.  The target is the second
 * online CPU: the first one (the boot CPU) keeps time with a periodic
 * tick, and holding it would stop jiffies and, with a broadcast tick,
 * everybody's timers.  The caller then avoids the target
 * (kunit_rcu_avoid_cpu()).
 *
 * Return: the target CPU.  With fewer than two CPUs online this call
 * does not come back: @test is skipped.
 */
int kunit_rcu_target_cpu(struct kunit *test)
{
	int cpu = cpumask_next(cpumask_first(cpu_online_mask), cpu_online_mask);

	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "needs a second online CPU");
	kunit_rcu_avoid_cpu(test, cpu);
	return cpu;
}

/**
 * kunit_rcu_other_cpu() - an online CPU other than @cpu
 * @cpu: the CPU to avoid
 *
 * Return: the next online CPU after @cpu, or -ENODEV with only one online.
 */
int kunit_rcu_other_cpu(int cpu)
{
	int other = cpumask_next_wrap(cpu, cpu_online_mask, cpu, false);

	return other < nr_cpu_ids && other != cpu ? other : -ENODEV;
}

/**
 * kunit_rcu_kthreads() - visit the kthreads whose name starts with @prefix
 * @prefix: start of the name ("rcu" for all of RCU's kthreads)
 * @fn: called for each of them, or NULL to count only; it runs inside an
 *	RCU reader and must not sleep; it returns whether to count the kthread
 * @arg: argument of @fn
 *
 * Return: how many kthreads matched @prefix and were counted by @fn.
 */
unsigned int kunit_rcu_kthreads(const char *prefix,
				bool (*fn)(struct task_struct *t, void *arg), void *arg)
{
	struct task_struct *g, *t;
	size_t len = strlen(prefix);
	unsigned int n = 0;

	rcu_read_lock();
	for_each_process_thread(g, t)
		if ((t->flags & PF_KTHREAD) && !strncmp(t->comm, prefix, len) &&
		    (!fn || fn(t, arg)))
			n++;
	rcu_read_unlock();
	return n;
}

/**
 * kunit_rcu_eqs_call() - run a function inside a fake extended quiescent state
 * @fn: the function; it must not use RCU, sleep or print
 * @arg: its argument
 *
 * With interrupts disabled throughout, enters idle for RCU
 * (ct_idle_enter()), calls @fn and leaves again (ct_idle_exit()).  @fn
 * may raise NMI-like entries with kunit_rcu_raise() or call
 * ct_irq_enter()/ct_irq_exit() itself.
 */
void kunit_rcu_eqs_call(void (*fn)(void *arg), void *arg)
{
	unsigned long flags;

	local_irq_save(flags);
	ct_idle_enter();
	fn(arg);
	ct_idle_exit();
	local_irq_restore(flags);
}

struct kunit_rcu_work {
	refcount_t ref;
	void (*fn)(void *arg);
	void *arg;
	bool eqs;
	int cpu;
	struct completion done;
};

static void kunit_rcu_work_put(struct kunit_rcu_work *w)
{
	if (refcount_dec_and_test(&w->ref))
		kfree(w);
}

static int kunit_rcu_work_thread(void *data)
{
	struct kunit_rcu_work *w = data;

	if (w->eqs)
		kunit_rcu_eqs_call(w->fn, w->arg);
	else
		w->fn(w->arg);
	complete(&w->done);
	kunit_rcu_work_put(w);
	return 0;
}

/**
 * kunit_rcu_start_on_cpu() - start a function in a kthread bound to a CPU
 * @test: the test case (fails on error)
 * @cpu: the CPU
 * @fn: the function
 * @arg: its argument, which must stay valid until kunit_rcu_finish()
 * @eqs: run @fn inside a fake extended quiescent state
 *	(kunit_rcu_eqs_call())
 *
 * Return: a handle for kunit_rcu_finish(), or NULL (the case has failed).
 */
struct kunit_rcu_work *kunit_rcu_start_on_cpu(struct kunit *test, int cpu,
					      void (*fn)(void *arg), void *arg,
					      bool eqs)
{
	struct kunit_rcu_work *w = kzalloc(sizeof(*w), GFP_KERNEL);
	struct task_struct *t;

	if (!w) {
		KUNIT_FAIL(test, "no memory for work on CPU %d", cpu);
		return NULL;
	}
	refcount_set(&w->ref, 2);
	w->fn = fn;
	w->arg = arg;
	w->eqs = eqs;
	w->cpu = cpu;
	init_completion(&w->done);
	t = kthread_run_on_cpu(kunit_rcu_work_thread, w, cpu, "kunit_rcu/%u");
	if (IS_ERR(t)) {
		KUNIT_FAIL(test, "cannot start a kthread on CPU %d: %ld", cpu, PTR_ERR(t));
		kfree(w);
		return NULL;
	}
	return w;
}

/**
 * kunit_rcu_finish() - wait, bounded, for work started on a CPU
 * @test: the test case; it fails if the work does not finish in time
 * @w: the handle (NULL is accepted: the start failed)
 * @ms: bound in milliseconds
 *
 * Return: whether the work finished within @ms.
 */
bool kunit_rcu_finish(struct kunit *test, struct kunit_rcu_work *w, unsigned int ms)
{
	bool done;

	if (!w)
		return false;
	done = wait_for_completion_timeout(&w->done, msecs_to_jiffies(ms));
	if (!done)
		KUNIT_FAIL(test, "work on CPU %d did not finish within %u ms%s",
			   w->cpu, ms, w->eqs ? " (in a fake EQS)" : "");
	kunit_rcu_work_put(w);
	return done;
}

/**
 * kunit_rcu_run_on_cpu() - run a function in a kthread bound to a CPU, bounded
 * @test: the test case; it fails if the function does not finish in time
 * @cpu: the CPU
 * @fn: the function
 * @arg: its argument
 * @eqs: run @fn inside a fake extended quiescent state
 * @ms: bound in milliseconds
 *
 * Return: whether @fn finished within @ms.
 */
bool kunit_rcu_run_on_cpu(struct kunit *test, int cpu, void (*fn)(void *arg),
			  void *arg, bool eqs, unsigned int ms)
{
	return kunit_rcu_finish(test, kunit_rcu_start_on_cpu(test, cpu, fn, arg, eqs), ms);
}

struct kunit_rcu_irq {
	struct irq_work work;
	void (*fn)(void *arg);
	void *arg;
	int cpu;
	atomic_t done;
};

static void kunit_rcu_irq_fn(struct irq_work *work)
{
	struct kunit_rcu_irq *ir = container_of(work, struct kunit_rcu_irq, work);

	ir->fn(ir->arg);
	atomic_set_release(&ir->done, 1);
}

/**
 * kunit_rcu_irq_start() - run a function in a hardirq handler on a CPU
 * @test: the test case (fails on error)
 * @cpu: the CPU (the current one too: a self-interrupt)
 * @fn: the function, called in hardirq context
 * @arg: its argument, which must stay valid until kunit_rcu_irq_finish()
 *
 * Uses a hard irq_work, which an IPI (or, for the current CPU, a
 * self-interrupt) delivers.
 *
 * Return: a handle for kunit_rcu_irq_finish(), or NULL (the case has failed).
 */
struct kunit_rcu_irq *kunit_rcu_irq_start(struct kunit *test, int cpu,
					  void (*fn)(void *arg), void *arg)
{
	struct kunit_rcu_irq *ir = kzalloc(sizeof(*ir), GFP_KERNEL);

	if (!ir) {
		KUNIT_FAIL(test, "no memory for an interrupt on CPU %d", cpu);
		return NULL;
	}
	ir->work = IRQ_WORK_INIT_HARD(kunit_rcu_irq_fn);
	ir->fn = fn;
	ir->arg = arg;
	ir->cpu = cpu;
	irq_work_queue_on(&ir->work, cpu);
	return ir;
}

/**
 * kunit_rcu_irq_finish() - wait, bounded, for a handler started by kunit_rcu_irq_start()
 * @test: the test case; it fails if the handler does not finish in time
 * @ir: the handle (NULL is accepted: the start failed)
 * @ms: bound in milliseconds
 *
 * Return: whether the handler ran and finished within @ms.
 */
bool kunit_rcu_irq_finish(struct kunit *test, struct kunit_rcu_irq *ir, unsigned int ms)
{
	if (!ir)
		return false;
	if (!kunit_rcu_wait_flag(&ir->done, ms)) {
		/* Still queued or running: leak it rather than free it under the handler. */
		KUNIT_FAIL(test, "interrupt handler on CPU %d did not finish within %u ms",
			   ir->cpu, ms);
		return false;
	}
	irq_work_sync(&ir->work);
	kfree(ir);
	return true;
}

/**
 * kunit_rcu_irq_on_cpu() - run a function in a hardirq handler on a CPU, bounded
 * @test: the test case; it fails if the handler does not finish in time
 * @cpu: the CPU
 * @fn: the function, called in hardirq context
 * @arg: its argument
 * @ms: bound in milliseconds
 *
 * Return: whether the handler ran and finished within @ms.
 */
bool kunit_rcu_irq_on_cpu(struct kunit *test, int cpu, void (*fn)(void *arg),
			  void *arg, unsigned int ms)
{
	return kunit_rcu_irq_finish(test, kunit_rcu_irq_start(test, cpu, fn, arg), ms);
}

/*
 * NMI-like entries.  kunit_rcu_raise() pushes a call on a per-CPU stack
 * and makes the arch code raise the entry on this CPU; the entry's
 * handler runs the innermost call that has not run yet.  A call's
 * function may raise a further entry: that is how nesting is tested.
 */
#define KUNIT_RCU_MAX_DEPTH	4

struct kunit_rcu_call {
	void (*fn)(void *arg);
	void *arg;
	bool started;
	bool done;
};

static bool kunit_rcu_call_done(void *call)
{
	return READ_ONCE(((struct kunit_rcu_call *)call)->done);
}

static DEFINE_PER_CPU(struct kunit_rcu_call *, kunit_rcu_calls[KUNIT_RCU_MAX_DEPTH]);
static DEFINE_PER_CPU(int, kunit_rcu_depth);
static bool kunit_rcu_armed;
/* kunit_rcu_raise() calls past their check of kunit_rcu_armed, not yet returned. */
static atomic_t kunit_rcu_raising = ATOMIC_INIT(0);

/**
 * kunit_rcu_entry_handler() - run the pending call of an NMI-like entry
 *
 * Called by the arch back end from the entry's handler.
 */
void kunit_rcu_entry_handler(void)
{
	int depth = __this_cpu_read(kunit_rcu_depth);
	struct kunit_rcu_call *c;

	if (depth <= 0)
		return;
	c = __this_cpu_read(kunit_rcu_calls[depth - 1]);
	if (!c || c->started)
		return;
	c->started = true;
	c->fn(c->arg);
	WRITE_ONCE(c->done, true);
}

static bool kunit_rcu_none_raising(void *unused)
{
	return !atomic_read(&kunit_rcu_raising);
}

/*
 * No new raise once disarmed; a raise already past its check (a kthread
 * whose case gave up on it) keeps the handlers until it has returned: an
 * int3 nobody claims is a fatal exception.  If it never returns, the
 * handlers stay installed.
 */
static void kunit_rcu_entries_free(struct kunit_resource *res)
{
	WRITE_ONCE(kunit_rcu_armed, false);
	smp_mb();	/* Pairs with kunit_rcu_raise(): disarmed before the count is read. */
	if (!kunit_rcu_wait_until(kunit_rcu_none_raising, NULL, KUNIT_RCU_GP_TIMEOUT_MS)) {
		pr_err("kunit-rcu: an NMI-like entry still being raised: handlers left installed\n");
		return;
	}
	kunit_rcu_arch_disarm();
}

static struct kunit_resource kunit_rcu_entries_res;

/**
 * kunit_rcu_entries_arm() - install the handlers of the NMI-like entries
 * @test: the test case; the handlers are removed when it ends, however
 *	it ends
 *
 * Return: 0, or a negative errno (the case has failed).
 */
int kunit_rcu_entries_arm(struct kunit *test)
{
	int ret = kunit_rcu_arch_arm();

	if (ret) {
		KUNIT_FAIL(test, "cannot install the entry handlers: %d", ret);
		return ret;
	}
	WRITE_ONCE(kunit_rcu_armed, true);
	ret = kunit_add_named_resource(test, NULL, kunit_rcu_entries_free,
				       &kunit_rcu_entries_res, "kunit_rcu_entries", NULL);
	if (ret) {
		kunit_rcu_entries_free(NULL);
		KUNIT_FAIL(test, "cannot track the entry handlers: %d", ret);
	}
	return ret;
}

/**
 * kunit_rcu_entry_supported() - whether this arch can raise an entry
 * @e: the entry
 *
 * Return: true if kunit_rcu_raise(@e, ...) works here.
 */
bool kunit_rcu_entry_supported(enum kunit_rcu_entry e)
{
	return kunit_rcu_arch_supported(e);
}

/**
 * kunit_rcu_nmi_like() - the NMI-like entry to use at a nesting depth
 * @depth: 0 for the outermost entry
 *
 * x86: an NMI outside, int3 nested in it (NMIs do not nest).  arm64: a
 * kernel BRK at every depth; it stands in for the NMI, since the virt
 * machine under TCG delivers no pseudo-NMI in this setup.
 *
 * Return: the entry.
 */
enum kunit_rcu_entry kunit_rcu_nmi_like(unsigned int depth)
{
	if (kunit_rcu_arch_supported(KUNIT_RCU_NMI))
		return depth ? KUNIT_RCU_INT3 : KUNIT_RCU_NMI;
	return KUNIT_RCU_BRK;
}

/**
 * kunit_rcu_entry_name() - printable name of an entry
 * @e: the entry
 *
 * Return: its name.
 */
const char *kunit_rcu_entry_name(enum kunit_rcu_entry e)
{
	switch (e) {
	case KUNIT_RCU_NMI:
		return "NMI";
	case KUNIT_RCU_INT3:
		return "int3";
	case KUNIT_RCU_BRK:
		return "BRK";
	case KUNIT_RCU_KPROBE:
		return "kprobe";
	case KUNIT_RCU_DEBUG:
		return "#DB";
	}
	return "?";
}

/**
 * kunit_rcu_stack_name() - printable name of a stack recorded by kunit_rcu_snap()
 * @stack: &kunit_rcu_snap.stack
 *
 * Return: its name; call it in the test thread, not in a handler.
 */
const char *kunit_rcu_stack_name(int stack)
{
	return kunit_rcu_arch_stack_name(stack);
}

/**
 * kunit_rcu_raise() - raise an NMI-like entry on this CPU and run @fn in it
 * @e: the entry
 * @fn: called in the entry's handler; no KUNIT_EXPECT_*(), sleeping or
 *	printing there
 * @arg: its argument
 *
 * Synchronous: returns after the handler ran @fn, or after a bound for
 * an NMI that is never delivered.  Call it with preemption disabled, for
 * example inside kunit_rcu_eqs_call() or from another entry's @fn.
 *
 * Return: 0 if @fn ran, -EOPNOTSUPP, -EBUSY (nested too deep, or the
 * handlers are not installed) or -ETIMEDOUT.
 */
int kunit_rcu_raise(enum kunit_rcu_entry e, void (*fn)(void *arg), void *arg)
{
	struct kunit_rcu_call c = { .fn = fn, .arg = arg };
	int depth = __this_cpu_read(kunit_rcu_depth);
	int ret;

	if (!kunit_rcu_arch_supported(e))
		return -EOPNOTSUPP;
	atomic_inc(&kunit_rcu_raising);
	smp_mb__after_atomic();	/* Pairs with kunit_rcu_entries_free(). */
	if (!READ_ONCE(kunit_rcu_armed) || depth >= KUNIT_RCU_MAX_DEPTH) {
		atomic_dec(&kunit_rcu_raising);
		return -EBUSY;
	}
	__this_cpu_write(kunit_rcu_calls[depth], &c);
	__this_cpu_write(kunit_rcu_depth, depth + 1);
	barrier();
	ret = kunit_rcu_arch_raise(e);
	if (!ret)
		kunit_rcu_spin_until(kunit_rcu_call_done, &c, KUNIT_RCU_PROMPT_MS);
	barrier();
	/* A handler only ever runs on this CPU: nothing can use @c after this. */
	__this_cpu_write(kunit_rcu_calls[depth], NULL);
	__this_cpu_write(kunit_rcu_depth, depth);
	atomic_dec(&kunit_rcu_raising);
	if (ret)
		return ret;
	return READ_ONCE(c.done) ? 0 : -ETIMEDOUT;
}

static void kunit_rcu_chain_handler(void *arg)
{
	struct kunit_rcu_chain *c = arg;
	unsigned int l = c->level++;

	kunit_rcu_snap(&c->in[l]);
	if (l + 1 < c->depth)
		c->raised[l + 1] = kunit_rcu_raise(c->entry[l + 1], kunit_rcu_chain_handler, c);
	else if (c->hold_reader)
		kunit_rcu_hold_reader(&c->hold);
	else if (c->might_sleep)
		__might_sleep(__FILE__, __LINE__);
	kunit_rcu_snap(&c->out[l]);
}

/**
 * kunit_rcu_chain_raise() - raise a chain of nested NMI-like entries here
 * @chain: a struct kunit_rcu_chain; ->entry, ->depth and ->hold_reader set
 *
 * Raises ->entry[0]; its handler raises ->entry[1], and so on, each
 * handler recording the state on entry and after its inner entry
 * returned.  Meant for kunit_rcu_run_on_cpu() or kunit_rcu_start_on_cpu(),
 * in task context or in a fake extended quiescent state; disables
 * preemption around the chain.
 */
void kunit_rcu_chain_raise(void *chain)
{
	struct kunit_rcu_chain *c = chain;

	preempt_disable();
	kunit_rcu_snap(&c->before);
	c->raised[0] = kunit_rcu_raise(c->entry[0], kunit_rcu_chain_handler, c);
	kunit_rcu_snap(&c->after);
	preempt_enable();
}

/* Released, or armed by kunit_rcu_expect_gp_held(). */
static bool kunit_rcu_hold_armed_or_released(void *arg)
{
	struct kunit_rcu_hold *h = arg;

	return atomic_read_acquire(&h->release) || atomic_read_acquire(&h->armed);
}

/**
 * kunit_rcu_hold_spin() - the inside of a held reader, any kind
 * @h: the reader's handshake
 *
 * Call it inside the reader (rcu_read_lock(), a bh-, preempt- or
 * irq-disabled region, in any context): signals ->in_reader and spins
 * until the test thread sets ->release, or KUNIT_RCU_PROMPT_MS pass
 * before it is released or armed, or KUNIT_RCU_PROMPT_MS pass after it
 * was armed (a test thread that arms it late still gets its full hold).
 * Then, still inside, it records whether the grace periods that
 * kunit_rcu_expect_gp_held() requested meanwhile ended.  End the reader
 * and call kunit_rcu_hold_ended().
 */
void kunit_rcu_hold_spin(struct kunit_rcu_hold *h)
{
	atomic_set_release(&h->in_reader, 1);
	if (kunit_rcu_spin_until(kunit_rcu_hold_armed_or_released, h, KUNIT_RCU_PROMPT_MS))
		h->released = kunit_rcu_spin_flag(&h->release, KUNIT_RCU_PROMPT_MS);
	if (atomic_read_acquire(&h->armed)) {
		h->held_ms = kunit_rcu_now_ms() - h->armed_ms;
		h->normal_ended = kunit_rcu_normal_done(&h->seq);
		h->exp_ended = kunit_rcu_exp_done(&h->seq);
		h->sampled = true;
	}
}

/**
 * kunit_rcu_hold_ended() - a held reader has ended
 * @h: the reader's handshake
 */
void kunit_rcu_hold_ended(struct kunit_rcu_hold *h)
{
	kunit_rcu_snap(&h->out);
	atomic_set_release(&h->ended, 1);
}

/**
 * kunit_rcu_hold_reader() - hold an RCU reader open until released
 * @hold: a struct kunit_rcu_hold
 *
 * Meant to run in any context (task, hardirq, NMI-like handler, a
 * fake EQS after ct_irq_enter()): begins a reader, records the state
 * in it, holds it (kunit_rcu_hold_spin()), then ends the reader and
 * records the state after it.  Pair it with kunit_rcu_expect_gp_held().
 */
void kunit_rcu_hold_reader(void *hold)
{
	struct kunit_rcu_hold *h = hold;

	rcu_read_lock();
	kunit_rcu_snap(&h->in);
	kunit_rcu_hold_spin(h);
	rcu_read_unlock();
	kunit_rcu_hold_ended(h);
}

/**
 * kunit_rcu_hold_reader_irqs_off() - kunit_rcu_hold_reader() with interrupts disabled
 * @hold: a struct kunit_rcu_hold
 */
void kunit_rcu_hold_reader_irqs_off(void *hold)
{
	unsigned long flags;

	local_irq_save(flags);
	kunit_rcu_hold_reader(hold);
	local_irq_restore(flags);
}

/**
 * kunit_rcu_cookie_done() - kunit_rcu_*_until() condition: a polled cookie completed
 * @cookie: an unsigned long cookie from get_state_synchronize_rcu() and friends
 *
 * Return: poll_state_synchronize_rcu() of it.
 */
bool kunit_rcu_cookie_done(void *cookie)
{
	return poll_state_synchronize_rcu(*(unsigned long *)cookie);
}

/**
 * kunit_rcu_seq_snap() - note where RCU's two grace-period sequences must get
 * @s: filled with the values of the normal (rcu_get_gp_seq()) and the
 *	expedited (rcu_exp_batches_completed()) sequence that a grace
 *	period of each kind, starting after this call, ends at
 *
 * A _full polled state reads as complete once either kind of grace
 * period passed it, so it cannot show that a normal grace period ended;
 * these can, one kind each: kunit_rcu_normal_done(), kunit_rcu_exp_done().
 */
void kunit_rcu_seq_snap(struct kunit_rcu_seq *s)
{
	unsigned long normal = rcu_get_gp_seq(), exp = rcu_exp_batches_completed();

	s->normal = rcu_seq_snap(&normal);
	s->exp = rcu_seq_snap(&exp);
}

/**
 * kunit_rcu_normal_done() - kunit_rcu_*_until() condition: a normal grace period ended
 * @seq: a struct kunit_rcu_seq from kunit_rcu_seq_snap()
 *
 * Return: whether a normal grace period that started after the snapshot
 * has ended.
 */
bool kunit_rcu_normal_done(void *seq)
{
	struct kunit_rcu_seq *s = seq;

	return ULONG_CMP_GE(rcu_get_gp_seq(), s->normal);
}

/**
 * kunit_rcu_exp_done() - kunit_rcu_*_until() condition: an expedited grace period ended
 * @seq: a struct kunit_rcu_seq from kunit_rcu_seq_snap()
 *
 * Return: whether an expedited grace period that started after the
 * snapshot has ended.
 */
bool kunit_rcu_exp_done(void *seq)
{
	struct kunit_rcu_seq *s = seq;

	return ULONG_CMP_GE(rcu_exp_batches_completed(), s->exp);
}

static void kunit_rcu_exp_fn(struct work_struct *work)
{
	synchronize_rcu_expedited();
}

static DECLARE_WORK(kunit_rcu_exp_work, kunit_rcu_exp_fn);

/**
 * kunit_rcu_start_exp() - make an expedited grace period start, without waiting
 *
 * start_poll_synchronize_rcu_expedited() is no such thing: its worker
 * stops as soon as its (polled, normal) cookie is complete, so a normal
 * grace period that ends first leaves the expedited sequence where it was.
 * This queues synchronize_rcu_expedited() on the calling CPU's workqueue
 * (not an unbound one, whose worker may wake an idle CPU that a case
 * watches), which runs it after this call (a run in progress is followed
 * by another), so that kunit_rcu_exp_done() on an earlier
 * kunit_rcu_seq_snap() becomes true only through an expedited grace
 * period.
 */
void kunit_rcu_start_exp(void)
{
	queue_work_on(raw_smp_processor_id(), system_wq, &kunit_rcu_exp_work);
}

static void kunit_rcu_expedite_again(struct kunit_resource *res)
{
	rcu_expedite_gp();
}

/**
 * kunit_rcu_unexpedite() - let the calling case's grace periods be normal ones
 * @test: the case; boot-time expediting comes back when it ends, on
 *	every path (a kunit resource)
 *
 * Built-in suites run before rcu_end_inkernel_boot(), while every
 * synchronize_rcu() and synchronize_srcu() is expedited.  After this call
 * they take the normal path.
 */
void kunit_rcu_unexpedite(struct kunit *test)
{
	if (!kunit_alloc_resource(test, NULL, kunit_rcu_expedite_again, GFP_KERNEL, test)) {
		KUNIT_FAIL(test, "no memory to restore expediting");
		return;
	}
	rcu_unexpedite_gp();
}

/**
 * kunit_rcu_expect_gp_held() - a held reader must hold up grace periods
 * @test: the test case
 * @h: the reader, held by kunit_rcu_hold_reader() on another CPU
 * @where: what holds it, for the failure messages
 *
 * Waits (bounded) for the reader to begin, requests a normal and an
 * expedited grace period, lets the reader run for KUNIT_RCU_GP_HOLD_MS
 * more and releases it.  The reader itself, just before it ends, samples
 * whether either grace period ended (each on its own sequence: a normal
 * grace period is not taken for ended because an expedited one did), so
 * the verdict does not depend on when this thread runs: neither may have
 * ended, and each must end within KUNIT_RCU_GP_TIMEOUT_MS of the reader.
 * The reader is released on every path.
 */
void kunit_rcu_expect_gp_held(struct kunit *test, struct kunit_rcu_hold *h,
			      const char *where)
{
	if (!kunit_rcu_try_gp_held(test, h, where))
		KUNIT_ASSERT_FAILURE(test,
				     "%s: the reader ended before grace periods were requested",
				     where);
}

/**
 * kunit_rcu_try_gp_held() - kunit_rcu_expect_gp_held(), if the reader was armed
 * @test: the test case
 * @h: the reader, held by kunit_rcu_hold_reader() on another CPU
 * @where: what holds it, for the failure messages
 *
 * As kunit_rcu_expect_gp_held(), except when the reader ended by its
 * bound before this thread requested the grace periods (this thread was
 * kept off its CPU for KUNIT_RCU_PROMPT_MS): then nothing was tested and
 * the case does not fail here, so that the caller may hold a reader again.
 *
 * Return: false if the reader was never armed, true otherwise.
 */
bool kunit_rcu_try_gp_held(struct kunit *test, struct kunit_rcu_hold *h, const char *where)
{
	if (!kunit_rcu_wait_flag(&h->in_reader, KUNIT_RCU_PROMPT_MS)) {
		atomic_set(&h->release, 1);
		KUNIT_FAIL(test, "%s: the reader did not begin within %d ms",
			   where, KUNIT_RCU_PROMPT_MS);
		return true;
	}
	kunit_rcu_seq_snap(&h->seq);
	start_poll_synchronize_rcu();
	kunit_rcu_start_exp();
	h->armed_ms = kunit_rcu_now_ms();
	atomic_set_release(&h->armed, 1);
	kunit_rcu_delay_ms(KUNIT_RCU_GP_HOLD_MS);
	atomic_set_release(&h->release, 1);
	if (!kunit_rcu_wait_flag(&h->ended, KUNIT_RCU_PROMPT_MS)) {
		KUNIT_FAIL(test, "%s: the reader did not end within %d ms of its release",
			   where, KUNIT_RCU_PROMPT_MS);
		return true;
	}
	if (!h->sampled)
		return false;
	KUNIT_EXPECT_GE_MSG(test, h->held_ms, (u64)KUNIT_RCU_GP_HOLD_MS,
			    "%s: the reader ran too briefly after the grace-period requests",
			    where);
	KUNIT_EXPECT_FALSE_MSG(test, h->normal_ended,
			       "%s: a normal grace period ended while the reader ran (%llu ms)",
			       where, h->held_ms);
	KUNIT_EXPECT_FALSE_MSG(test, h->exp_ended,
			       "%s: an expedited grace period ended while the reader ran (%llu ms)",
			       where, h->held_ms);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_normal_done, &h->seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "%s: no normal grace period ended within %d ms of the reader",
			      where, KUNIT_RCU_GP_TIMEOUT_MS);
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_wait_until(kunit_rcu_exp_done, &h->seq,
							 KUNIT_RCU_GP_TIMEOUT_MS),
			      "%s: no expedited grace period ended within %d ms of the reader",
			      where, KUNIT_RCU_GP_TIMEOUT_MS);
	return true;
}

/*
 * Expected splats.  The tooling excuses a splat whose first line matches
 * the expression printed in "kunit-rcu: expect splat: <expression>", up
 * to "kunit-rcu: expect splat end"; the case itself reads the kernel log
 * written since the window opened, so a missing diagnosis fails it.  The
 * log, not the console tracepoint: a tracepoint probe may not run in NMI
 * context, where some of the provoked splats are printed.
 */
static const char *kunit_rcu_needle;
static const char *kunit_rcu_required;
static u64 kunit_rcu_splat_seq;
static struct kunit_resource kunit_rcu_splat_res;

/* Does @buf contain one of the '|'-separated texts of @needle? */
static bool kunit_rcu_needle_in(const char *needle, const char *buf, size_t len)
{
	char alt[64];

	while (*needle) {
		size_t n = strcspn(needle, "|");

		if (n && n < sizeof(alt)) {
			memcpy(alt, needle, n);
			alt[n] = '\0';
			if (strnstr(buf, alt, len))
				return true;
		}
		needle += n + !!needle[n];
	}
	return false;
}

/* Is one of @required's texts in a log line printed since @seq? */
static bool kunit_rcu_log_has(const char *required, u64 seq)
{
	struct kmsg_dump_iter iter;
	size_t len;
	bool found = false;
	char *line = kmalloc(PAGE_SIZE, GFP_KERNEL);

	if (!line)
		return false;
	kmsg_dump_rewind(&iter);
	iter.cur_seq = max(iter.cur_seq, seq);
	while (!found && kmsg_dump_get_line(&iter, false, line, PAGE_SIZE, &len))
		found = kunit_rcu_needle_in(required, line, len);
	kfree(line);
	return found;
}

/* Ends the window on every path, so that the tooling stops excusing splats. */
static void kunit_rcu_splat_free(struct kunit_resource *res)
{
	WRITE_ONCE(kunit_rcu_required, NULL);
	WRITE_ONCE(kunit_rcu_needle, NULL);
	/* Not quoting the needle: the tooling would take this line for the splat. */
	pr_info("kunit-rcu: expect splat end\n");
}

/**
 * kunit_rcu_expect_splat_begin() - declare a splat the case provokes on purpose
 * @test: the test case
 * @needle: a text in the first line of each splat expected, or several
 *	separated by '|'; the tooling reads it as a regular expression, so
 *	keep it free of other regex specials than '.' and '|' (each text
 *	shorter than 64 characters)
 * @required: the diagnosis the case is about, or several separated by
 *	'|': a text that must appear anywhere in the kernel log (the splat's
 *	body included) before kunit_rcu_expect_splat_end(); NULL: one of
 *	@needle
 *
 * Until kunit_rcu_expect_splat_end(), or the end of the case on any
 * path, splats whose first line contains @needle do not fail the run; any
 * other splat still does.  A splat that @needle excuses but that is not
 * @required (a side warning of the same fault) does not satisfy the case.
 * The splat may be printed in any context, NMI included.
 */
void kunit_rcu_expect_splat_begin(struct kunit *test, const char *needle,
				  const char *required)
{
	struct kmsg_dump_iter iter;
	int ret;

	KUNIT_ASSERT_NULL_MSG(test, READ_ONCE(kunit_rcu_needle), "nested expected splats");
	ret = kunit_add_named_resource(test, NULL, kunit_rcu_splat_free,
				       &kunit_rcu_splat_res, "kunit_rcu_splat", NULL);
	if (ret) {
		KUNIT_FAIL(test, "cannot track the expected splat: %d", ret);
		return;
	}
	/* Only now: every path from here ends the window (kunit_rcu_splat_free()). */
	WRITE_ONCE(kunit_rcu_needle, needle);
	WRITE_ONCE(kunit_rcu_required, required ?: needle);
	pr_info("kunit-rcu: expect splat: %s\n", needle);
	/* After the line above, which quotes the needle. */
	kmsg_dump_rewind(&iter);
	kunit_rcu_splat_seq = iter.next_seq;
}

/**
 * kunit_rcu_expect_splat_end() - end the declared splat and check it came
 * @test: the test case; it fails if the splat did not appear
 *
 * Return: whether the splat appeared.
 */
bool kunit_rcu_expect_splat_end(struct kunit *test)
{
	bool seen;

	if (!READ_ONCE(kunit_rcu_needle)) {
		KUNIT_FAIL(test, "no expected splat was declared");
		return false;
	}
	seen = kunit_rcu_log_has(READ_ONCE(kunit_rcu_required), kunit_rcu_splat_seq);
	kunit_destroy_named_resource(test, "kunit_rcu_splat");
	KUNIT_EXPECT_TRUE_MSG(test, seen, "the diagnosis declared above did not appear");
	return seen;
}

/* When kunit_rcu_expect_might_sleep() last made the check report. */
static unsigned long kunit_rcu_might_sleep_jiffies;

/**
 * kunit_rcu_expect_might_sleep() - the scheduler catches sleeping in an entry
 * @test: the test case; it fails unless the report comes
 * @cpu: where to raise the entry
 * @e: the NMI-like entry
 * @eqs: raise it from a fake extended quiescent state, not task context
 *
 * The handler of @e calls __might_sleep(), the check behind might_sleep()
 * and every sleeping primitive, and the case declares the report that
 * check must print, "BUG: sleeping function called from invalid context".
 * The check reports at most once a second (HZ jiffies): this waits that
 * long after its previous report.  Needs CONFIG_DEBUG_ATOMIC_SLEEP (the
 * case is skipped without it).
 */
void kunit_rcu_expect_might_sleep(struct kunit *test, int cpu, enum kunit_rcu_entry e,
				  bool eqs)
{
	struct kunit_rcu_chain *c;
	u64 bound = kunit_rcu_now_ms() + 3 * MSEC_PER_SEC;

	if (!IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP))
		kunit_skip(test, "needs CONFIG_DEBUG_ATOMIC_SLEEP");
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->entry[0] = e;
	c->depth = 1;
	c->might_sleep = true;
	while (kunit_rcu_might_sleep_jiffies &&
	       time_before_eq(jiffies, kunit_rcu_might_sleep_jiffies + HZ) &&
	       kunit_rcu_now_ms() < bound)
		kunit_rcu_delay_ms(20);

	kunit_rcu_expect_splat_begin(test, "sleeping function called from invalid context", NULL);
	KUNIT_ASSERT_TRUE(test, kunit_rcu_run_on_cpu(test, cpu, kunit_rcu_chain_raise, c, eqs,
						     KUNIT_RCU_PROMPT_MS));
	kunit_rcu_might_sleep_jiffies = jiffies;
	KUNIT_ASSERT_EQ_MSG(test, c->raised[0], 0, "%s from %s not taken",
			    kunit_rcu_entry_name(e), eqs ? "EQS" : "task");
	KUNIT_EXPECT_TRUE_MSG(test, kunit_rcu_expect_splat_end(test),
			      "%s from %s: might_sleep() in its handler was not reported",
			      kunit_rcu_entry_name(e), eqs ? "EQS" : "task");
}
