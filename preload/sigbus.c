/*
 * sigbus.c - a trace file cut under the recorder must not kill the program.
 *
 * The trace is mapped MAP_SHARED (writer.c). When another process cuts the
 * file (log rotation with copytruncate, `: > trace.bin`), the next store
 * into a page past the new end raises SIGBUS, which kills a program that
 * has no handler for it. So memtrace installs a SIGBUS handler when it
 * creates the trace file: a fault whose address is in the trace's mapping
 * (mt_writer_fault) stops that trace and returns, and the store completes
 * in the anonymous memory that replaced the mapping; every other SIGBUS
 * goes to what the program set, with its semantics.
 *
 * The program's disposition is kept here as the program set it: sigaction
 * and signal for SIGBUS are interposed once memtrace's
 * handler is in place, record the program's action, and answer with it, so
 * the program sees its own handler and memtrace's stays in front. A program
 * that sets SIGBUS without them (a raw rt_sigaction) is noticed when the
 * next window of the trace is mapped (mt_sigbus_recheck): its handler
 * becomes the one chained to.
 *
 * Chaining: a handler is called as the kernel would call it (SA_SIGINFO or
 * not, its sa_mask added, SIGBUS unblocked for SA_NODEFER, SA_RESETHAND
 * resetting the kept action first). SIG_DFL: the real disposition goes back
 * to SIG_DFL (memtrace's handler out of the way), then a fault returns to
 * fault again and a kill(SIGBUS) is raised again, so the program ends as it
 * would have, core dump included. SIG_IGN ignores a sent SIGBUS; a fault
 * cannot be ignored (the kernel kills), which SIG_DFL's path gives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include "mt.h"

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction;
static _Atomic int installed;        /* memtrace's handler is SIGBUS's */

/* The program's action, double buffered: the handler reads a whole one. */
static struct sigaction prog[2];
static _Atomic int prog_cur;
static atomic_flag prog_lock = ATOMIC_FLAG_INIT;

static int call_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn f = __atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE);

	if (!f && mt_real_dlsym) {
		f = (sigaction_fn)mt_real_dlsym(RTLD_NEXT, "sigaction");
		if (f && mt_is_own((void *)f))
			f = NULL;
		if (f)
			__atomic_store_n(&real_sigaction, f, __ATOMIC_RELEASE);
	}
	return (f ? f : __sigaction)(sig, act, old);
}

static void prog_get(struct sigaction *a)
{
	*a = prog[atomic_load_explicit(&prog_cur, memory_order_acquire)];
}

static void prog_set(const struct sigaction *a)
{
	/* a sigaction interrupted by a handler that calls sigaction: the
	   inner one waits for nobody, the outer one's is lost (as it would
	   be overwritten anyway) */
	if (atomic_flag_test_and_set_explicit(&prog_lock, memory_order_acquire))
		return;
	int next = !atomic_load_explicit(&prog_cur, memory_order_relaxed);
	prog[next] = *a;
	atomic_store_explicit(&prog_cur, next, memory_order_release);
	atomic_flag_clear_explicit(&prog_lock, memory_order_release);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc);

static void ours(struct sigaction *a)
{
	memset(a, 0, sizeof *a);
	a->sa_sigaction = on_sigbus;
	a->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&a->sa_mask);
}

/* SIGBUS back to the default, memtrace's handler out of the way. */
static void to_default(void)
{
	struct sigaction d;

	memset(&d, 0, sizeof d);
	d.sa_handler = SIG_DFL;
	sigemptyset(&d.sa_mask);
	atomic_store(&installed, 0);
	call_sigaction(SIGBUS, &d, NULL);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int e = errno, fault = si && si->si_code > 0;   /* the kernel's, not a kill */
	struct sigaction a;

	if (fault && mt_writer_fault(si->si_addr)) {
		errno = e;
		return;
	}
	prog_get(&a);
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction d;

		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		prog_set(&d);
	}
	if (!(a.sa_flags & SA_SIGINFO) && (a.sa_handler == SIG_DFL ||
					   (a.sa_handler == SIG_IGN && fault))) {
		to_default();
		errno = e;
		if (!fault)
			raise(sig);     /* delivered when this handler returns */
		return;
	}
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN)
		return;
	sigset_t m = a.sa_mask;
	if (a.sa_flags & SA_NODEFER) {
		sigset_t u;

		sigemptyset(&u);
		sigaddset(&u, sig);
		pthread_sigmask(SIG_UNBLOCK, &u, NULL);
	}
	pthread_sigmask(SIG_BLOCK, &m, NULL);
	errno = e;
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
}

void mt_sigbus_install(void)
{
	struct sigaction a, old;

	if (atomic_load(&installed))
		return;
	ours(&a);
	if (call_sigaction(SIGBUS, &a, &old) == 0) {
		prog_set(&old);
		atomic_store(&installed, 1);
	}
}

void mt_sigbus_recheck(void)
{
	struct sigaction a, now;

	if (!atomic_load(&installed) || call_sigaction(SIGBUS, NULL, &now) != 0)
		return;
	if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigbus)
		return;
	prog_set(&now);
	ours(&a);
	call_sigaction(SIGBUS, &a, NULL);
}

/* --- the program's calls ------------------------------------------------------- */

MT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig != SIGBUS || !atomic_load(&installed))
		return call_sigaction(sig, act, old);
	if (old)
		prog_get(old);
	if (act)
		prog_set(act);
	return 0;
}

typedef sighandler_t (*signal_fn)(int, sighandler_t);

/* signal() as glibc's: BSD semantics (SA_RESTART, the signal blocked in
   its handler). Other signals go to the next signal(). */
MT_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	static signal_fn next;
	struct sigaction a, old;

	if (sig != SIGBUS || !atomic_load(&installed)) {
		signal_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
		if (!f && mt_real_dlsym && (f = (signal_fn)mt_real_dlsym(RTLD_NEXT, "signal")) &&
		    !mt_is_own((void *)f))
			__atomic_store_n(&next, f, __ATOMIC_RELEASE);
		if (f && !mt_is_own((void *)f))
			return f(sig, h);
	}
	if (h == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&a, 0, sizeof a);
	a.sa_handler = h;
	a.sa_flags = SA_RESTART;
	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, sig);
	if (sigaction(sig, &a, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
