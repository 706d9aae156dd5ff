/*
 * later-clock.c: preloaded in front of libfaketime by scripts/test-later.sh, so that a run
 * "a year later" moves the clocks and breaks nothing else. It puts right two things libfaketime
 * 0.9.10 (Debian 12) gets wrong (docs/testing.md, "A year later"):
 *
 * 1. timerfd deadlines. libfaketime fakes the monotonic clocks too, consistently wherever it
 *    knows the clock (clock_gettime, clock_nanosleep, pthread_cond_timedwait), but it cannot know
 *    a timerfd's: it moves every absolute deadline by the wall clock's offset alone. libdispatch
 *    arms its timers that way on CLOCK_MONOTONIC and CLOCK_BOOTTIME, so they land 57 years out:
 *    Task.sleep, DispatchQueue.asyncAfter and every timeout built on them never fire unless
 *    something else wakes the queue, and an idle worker asked to stop by SIGTERM never exits.
 *    Here each timerfd is remembered with its clock: an absolute deadline on a monotonic clock
 *    moves from the faked monotonic time to the kernel's by their difference now, a relative one
 *    goes to the kernel as it is, and an absolute wall-clock one still goes through libfaketime,
 *    which is right for that clock.
 *
 * 2. Clock reads in a signal handler. libfaketime stops faking while it waits in a blocking
 *    call it wraps (epoll_wait, poll, select, the sleeps), so a handler that reads the clock
 *    meanwhile gets the real time. PostgreSQL does exactly that for every timeout
 *    (statement_timeout, lock_timeout, deadlock_timeout: SIGALRM during WaitLatch's epoll_wait),
 *    finds the deadline a year away, and re-arms for a year: no timeout ever fires. These calls
 *    take relative timeouts, which the moved clock does not change (its rate is 1), so here they
 *    go straight to the C library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define TRACKED_FDS 65536

/* The clock each timerfd was made on, plus one (0: not a timerfd made since the preload). */
static _Atomic int timer_clocks[TRACKED_FDS];

int timerfd_create(int clockid, int flags) {
    int fd = (int)syscall(SYS_timerfd_create, clockid, flags);
    if (fd >= 0 && fd < TRACKED_FDS) atomic_store(&timer_clocks[fd], clockid + 1);
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    int clock = (fd >= 0 && fd < TRACKED_FDS) ? atomic_load(&timer_clocks[fd]) - 1 : -1;
    if (!(flags & TFD_TIMER_ABSTIME))
        return (int)syscall(SYS_timerfd_settime, fd, flags, value, old);
    if (clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME) {
        struct timespec faked, real;
        clock_gettime(clock, &faked);
        syscall(SYS_clock_gettime, clock, &real);
        long long shift = (faked.tv_sec - real.tv_sec) * 1000000000LL + (faked.tv_nsec - real.tv_nsec);
        long long deadline = value->it_value.tv_sec * 1000000000LL + value->it_value.tv_nsec - shift;
        struct itimerspec moved = *value;
        if (value->it_value.tv_sec || value->it_value.tv_nsec) {  /* zero disarms: leave it zero */
            if (deadline < 1) deadline = 1;                      /* already due: fire at once */
            moved.it_value.tv_sec = deadline / 1000000000LL;
            moved.it_value.tv_nsec = deadline % 1000000000LL;
        }
        return (int)syscall(SYS_timerfd_settime, fd, flags, &moved, old);
    }
    static int (*faked)(int, int, const struct itimerspec *, struct itimerspec *);
    if (!faked) faked = (int (*)(int, int, const struct itimerspec *, struct itimerspec *))dlsym(RTLD_NEXT, "timerfd_settime");
    return faked(fd, flags, value, old);
}

/* The C library's own definition of a symbol, past libfaketime's. */
static void *libc_symbol(const char *name) {
    static void *libc;
    if (!libc) libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    return dlsym(libc, name);
}

#define STRAIGHT_TO_LIBC(type, name, parameters, arguments)                 \
    type name parameters {                                                  \
        static type (*real) parameters;                                     \
        if (!real) real = (type (*) parameters)libc_symbol(#name);          \
        return real arguments;                                              \
    }

STRAIGHT_TO_LIBC(int, epoll_wait, (int fd, struct epoll_event *events, int count, int timeout), (fd, events, count, timeout))
STRAIGHT_TO_LIBC(int, epoll_pwait, (int fd, struct epoll_event *events, int count, int timeout, const sigset_t *mask),
                 (fd, events, count, timeout, mask))
STRAIGHT_TO_LIBC(int, poll, (struct pollfd *fds, nfds_t count, int timeout), (fds, count, timeout))
STRAIGHT_TO_LIBC(int, ppoll, (struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask),
                 (fds, count, timeout, mask))
STRAIGHT_TO_LIBC(int, select, (int count, fd_set *reads, fd_set *writes, fd_set *errors, struct timeval *timeout),
                 (count, reads, writes, errors, timeout))
STRAIGHT_TO_LIBC(int, pselect, (int count, fd_set *reads, fd_set *writes, fd_set *errors, const struct timespec *timeout, const sigset_t *mask),
                 (count, reads, writes, errors, timeout, mask))
STRAIGHT_TO_LIBC(int, nanosleep, (const struct timespec *duration, struct timespec *left), (duration, left))
STRAIGHT_TO_LIBC(int, usleep, (useconds_t microseconds), (microseconds))
STRAIGHT_TO_LIBC(unsigned int, sleep, (unsigned int seconds), (seconds))
