/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kunit-rcu: helpers for KUnit tests of RCU's Linux-kernel requirements.
 *
 * The helpers raise interrupts, NMIs and other NMI-like entries on a
 * chosen CPU, run code inside a fake extended quiescent state (EQS),
 * record RCU and context-tracking state from any context, bound every
 * wait, and capture splats that a case provokes on purpose.
 *
 * Rule for all callbacks that run in irq, NMI, int3, #DB or BRK context
 * or inside a fake EQS: no KUNIT_EXPECT_*(), no sleeping, no printing.
 * Record with kunit_rcu_snap() and assert in the test thread afterwards.
 */
#ifndef _KUNIT_RCU_H
#define _KUNIT_RCU_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/types.h>

/* How long a reader is held while checking that a grace period waits. */
#define KUNIT_RCU_HOLD_MS		200

/*
 * How long kunit_rcu_expect_gp_held() holds its reader: past twice
 * jiffies_to_sched_qs (at least HZ/10 each), so that force-quiescent-state
 * scans, their urgent and heavy quiescent-state requests and resched IPIs
 * all happen while the reader runs.
 */
#define KUNIT_RCU_GP_HOLD_MS		500

/* Bound on anything that should happen "at once" (a handler running). */
#define KUNIT_RCU_PROMPT_MS		2000

/* Bound on a grace period or callback that nothing holds up. */
#define KUNIT_RCU_GP_TIMEOUT_MS		5000

/**
 * struct kunit_rcu_snap - RCU and context-tracking state at one point
 * @valid: the snapshot was taken
 * @cpu: CPU it was taken on
 * @preempt_count: preempt_count()
 * @reader_depth: RCU reader nesting (rcu_preempt_depth() with preemptible
 *	RCU, else the preemption-disable depth)
 * @dynticks: ct_dynticks(), the context-tracking counter RCU samples
 * @nesting: ct_dynticks_nesting()
 * @nmi_nesting: ct_dynticks_nmi_nesting()
 * @watching: rcu_is_watching()
 * @in_nmi: in_nmi()
 * @in_hardirq: in_hardirq()
 * @irqs_disabled: irqs_disabled()
 * @preemptible: preemptible()
 * @idle_task: the current task is an idle task
 * @sp: the stack pointer
 * @stack: which stack @sp is on, as the arch back end names it
 *	(x86: enum stack_type; 0 where the back end cannot tell)
 */
struct kunit_rcu_snap {
	bool valid;
	int cpu;
	unsigned int preempt_count;
	int reader_depth;
	int dynticks;
	long nesting;
	long nmi_nesting;
	bool watching;
	bool in_nmi;
	bool in_hardirq;
	bool irqs_disabled;
	bool preemptible;
	bool idle_task;
	unsigned long sp;
	int stack;
};

int kunit_rcu_reader_depth(void);
void kunit_rcu_snap(struct kunit_rcu_snap *s);

/* Time and bounded waits. */
u64 kunit_rcu_now_ms(void);
void kunit_rcu_delay_ms(unsigned int ms);
bool kunit_rcu_spin_until(bool (*done)(void *arg), void *arg, unsigned int ms);
bool kunit_rcu_wait_until(bool (*done)(void *arg), void *arg, unsigned int ms);
bool kunit_rcu_spin_flag(atomic_t *flag, unsigned int ms);
bool kunit_rcu_wait_flag(atomic_t *flag, unsigned int ms);
bool kunit_rcu_cookie_done(void *cookie);

/**
 * struct kunit_rcu_seq - ends of a normal and an expedited grace period
 * @normal: rcu_get_gp_seq() value a normal grace period ends at
 * @exp: rcu_exp_batches_completed() value an expedited one ends at
 */
struct kunit_rcu_seq {
	unsigned long normal;
	unsigned long exp;
};

void kunit_rcu_seq_snap(struct kunit_rcu_seq *s);
bool kunit_rcu_normal_done(void *seq);
bool kunit_rcu_exp_done(void *seq);
void kunit_rcu_start_exp(void);
void kunit_rcu_unexpedite(struct kunit *test);

struct task_struct;

/* CPUs and work on a chosen CPU. */
void kunit_rcu_avoid_cpu(struct kunit *test, int cpu);
int kunit_rcu_target_cpu(struct kunit *test);
int kunit_rcu_other_cpu(int cpu);
unsigned int kunit_rcu_kthreads(const char *prefix,
				bool (*fn)(struct task_struct *t, void *arg), void *arg);

struct kunit_rcu_work;
struct kunit_rcu_work *kunit_rcu_start_on_cpu(struct kunit *test, int cpu,
					      void (*fn)(void *arg), void *arg,
					      bool eqs);
bool kunit_rcu_finish(struct kunit *test, struct kunit_rcu_work *w, unsigned int ms);
bool kunit_rcu_run_on_cpu(struct kunit *test, int cpu, void (*fn)(void *arg),
			  void *arg, bool eqs, unsigned int ms);
void kunit_rcu_eqs_call(void (*fn)(void *arg), void *arg);

/* Interrupts and NMI-like entries. */
struct kunit_rcu_irq;
struct kunit_rcu_irq *kunit_rcu_irq_start(struct kunit *test, int cpu,
					  void (*fn)(void *arg), void *arg);
bool kunit_rcu_irq_finish(struct kunit *test, struct kunit_rcu_irq *ir, unsigned int ms);
bool kunit_rcu_irq_on_cpu(struct kunit *test, int cpu, void (*fn)(void *arg),
			  void *arg, unsigned int ms);

/**
 * enum kunit_rcu_entry - NMI-like exception entries a test can raise
 * @KUNIT_RCU_NMI: x86 self-NMI through the local APIC
 * @KUNIT_RCU_INT3: x86 int3 caught by a die notifier
 * @KUNIT_RCU_BRK: arm64 kernel BRK caught by a break hook
 * @KUNIT_RCU_KPROBE: x86 int3 planted by a kprobe (needs CONFIG_KPROBES)
 * @KUNIT_RCU_DEBUG: a hardware data breakpoint (x86 #DB) on a word the
 *	library writes, armed on every CPU through perf
 */
enum kunit_rcu_entry {
	KUNIT_RCU_NMI,
	KUNIT_RCU_INT3,
	KUNIT_RCU_BRK,
	KUNIT_RCU_KPROBE,
	KUNIT_RCU_DEBUG,
};

int kunit_rcu_entries_arm(struct kunit *test);
bool kunit_rcu_entry_supported(enum kunit_rcu_entry e);
enum kunit_rcu_entry kunit_rcu_nmi_like(unsigned int depth);
const char *kunit_rcu_entry_name(enum kunit_rcu_entry e);
const char *kunit_rcu_stack_name(int stack);
int kunit_rcu_raise(enum kunit_rcu_entry e, void (*fn)(void *arg), void *arg);

/* Arch back ends, called by the common code only. */
int kunit_rcu_arch_arm(void);
void kunit_rcu_arch_disarm(void);
bool kunit_rcu_arch_supported(enum kunit_rcu_entry e);
int kunit_rcu_arch_raise(enum kunit_rcu_entry e);
int kunit_rcu_arch_stack(unsigned long sp);
const char *kunit_rcu_arch_stack_name(int stack);
void kunit_rcu_entry_handler(void);

/* A reader held in some context while the test thread drives grace periods. */

/**
 * struct kunit_rcu_hold - a reader held open by kunit_rcu_hold_reader()
 * @in_reader: set once the reader has begun
 * @release: set by the test thread to end the reader
 * @released: the reader ended because it was released (not by its bound)
 * @in: state inside the reader
 * @out: state after the reader ended
 * @armed: set by kunit_rcu_expect_gp_held() once @seq is taken and grace
 *	periods are requested
 * @armed_ms: kunit_rcu_now_ms() when @armed was set
 * @seq: ends of the grace periods requested while the reader ran
 * @sampled: the reader sampled @seq just before it ended (@armed was set)
 * @held_ms: how long the reader ran after @armed_ms
 * @normal_ended: a normal grace period ended at @seq while the reader ran
 * @exp_ended: an expedited grace period ended at @seq while the reader ran
 * @ended: set after the reader ended and @out is taken
 */
struct kunit_rcu_hold {
	atomic_t in_reader;
	atomic_t release;
	bool released;
	struct kunit_rcu_snap in;
	struct kunit_rcu_snap out;
	atomic_t armed;
	u64 armed_ms;
	struct kunit_rcu_seq seq;
	bool sampled;
	u64 held_ms;
	bool normal_ended;
	bool exp_ended;
	atomic_t ended;
};

void kunit_rcu_hold_spin(struct kunit_rcu_hold *h);
void kunit_rcu_hold_ended(struct kunit_rcu_hold *h);
void kunit_rcu_hold_reader(void *hold);
void kunit_rcu_hold_reader_irqs_off(void *hold);
void kunit_rcu_expect_gp_held(struct kunit *test, struct kunit_rcu_hold *h,
			      const char *where);
bool kunit_rcu_try_gp_held(struct kunit *test, struct kunit_rcu_hold *h, const char *where);

/* Deepest nesting of NMI-like entries in a struct kunit_rcu_chain. */
#define KUNIT_RCU_CHAIN_MAX	3

/**
 * struct kunit_rcu_chain - NMI-like entries nested in each other, observed
 * @entry: the entries, outermost first
 * @depth: how many of @entry to nest (1..KUNIT_RCU_CHAIN_MAX)
 * @hold_reader: the innermost handler holds a reader (kunit_rcu_hold_reader())
 * @might_sleep: the innermost handler runs the scheduler's check of a
 *	function that might sleep (__might_sleep())
 * @level: handlers that ran
 * @raised: kunit_rcu_raise() result of each entry
 * @before: state before the outermost entry
 * @in: state on entry to each handler
 * @out: state in each handler after its inner entry returned
 * @after: state after the outermost entry returned
 * @hold: the held reader, with @hold_reader
 */
struct kunit_rcu_chain {
	enum kunit_rcu_entry entry[KUNIT_RCU_CHAIN_MAX];
	unsigned int depth;
	bool hold_reader;
	bool might_sleep;
	unsigned int level;
	int raised[KUNIT_RCU_CHAIN_MAX];
	struct kunit_rcu_snap before, in[KUNIT_RCU_CHAIN_MAX], out[KUNIT_RCU_CHAIN_MAX], after;
	struct kunit_rcu_hold hold;
};

void kunit_rcu_chain_raise(void *chain);
void kunit_rcu_expect_might_sleep(struct kunit *test, int cpu, enum kunit_rcu_entry e,
				  bool eqs);

/* Splats provoked on purpose. */
void kunit_rcu_expect_splat_begin(struct kunit *test, const char *needle,
				  const char *required);
bool kunit_rcu_expect_splat_end(struct kunit *test);

#endif /* _KUNIT_RCU_H */
