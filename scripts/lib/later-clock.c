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
 *    call it wraps (epoll_wait, poll, select, nanosleep and the like), so a handler that reads
 *    the clock meanwhile gets the real time. PostgreSQL does exactly that for every timeout
 *    (statement_timeout, lock_timeout, deadlock_timeout: SIGALRM during WaitLatch's epoll_wait),
 *    finds the deadline a year away, and re-arms for a year: no timeout ever fires. These calls
 *    take relative timeouts, which the moved clock does not change (its rate is 1), so here they
 *    go straight to the C library. (clock_nanosleep, sem_timedwait and pthread_cond_timedwait take
 *    absolute deadlines that libfaketime must move, so they stay with it; nothing in the suites
 *    reads the clock in a handler while waiting in them.)
 *
 * Not covered: a timerfd made before this library loaded or copied with dup (its clock unknown:
 * it goes through libfaketime as before), and POSIX timer_settime on a monotonic clock
 * (libfaketime moves those wrongly too; no server or worker here uses them).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
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
#define NS 1000000000LL

/* The clock each timerfd was made on, plus one (0: not a timerfd made since the preload). */
static _Atomic int timer_clocks[TRACKED_FDS];

/* Resolved once, at load: libfaketime's timerfd_settime, and the C library's own definitions of
 * the calls that go past libfaketime. */
static int (*faked_timerfd_settime)(int, int, const struct itimerspec *, struct itimerspec *);
static int (*libc_epoll_wait)(int, struct epoll_event *, int, int);
static int (*libc_epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
static int (*libc_poll)(struct pollfd *, nfds_t, int);
static int (*libc_ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
static int (*libc_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*libc_pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
static int (*libc_nanosleep)(const struct timespec *, struct timespec *);
static int (*libc_usleep)(useconds_t);
static unsigned int (*libc_sleep)(unsigned int);

__attribute__((constructor)) static void resolve(void) {
    faked_timerfd_settime = dlsym(RTLD_NEXT, "timerfd_settime");
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    libc_epoll_wait = dlsym(libc, "epoll_wait");
    libc_epoll_pwait = dlsym(libc, "epoll_pwait");
    libc_poll = dlsym(libc, "poll");
    libc_ppoll = dlsym(libc, "ppoll");
    libc_select = dlsym(libc, "select");
    libc_pselect = dlsym(libc, "pselect");
    libc_nanosleep = dlsym(libc, "nanosleep");
    libc_usleep = dlsym(libc, "usleep");
    libc_sleep = dlsym(libc, "sleep");
}

int timerfd_create(int clockid, int flags) {
    int fd = (int)syscall(SYS_timerfd_create, clockid, flags);
    if (fd >= 0 && fd < TRACKED_FDS) atomic_store(&timer_clocks[fd], clockid + 1);
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    int clock = (fd >= 0 && fd < TRACKED_FDS) ? atomic_load(&timer_clocks[fd]) - 1 : -1;
    int monotonic = clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME;
    /* Relative, disarming, or not a valid time (the kernel says EFAULT or EINVAL): as it is. */
    if (!(flags & TFD_TIMER_ABSTIME) || !value || (!value->it_value.tv_sec && !value->it_value.tv_nsec)
        || value->it_value.tv_sec < 0 || value->it_value.tv_nsec < 0 || value->it_value.tv_nsec >= NS)
        return (int)syscall(SYS_timerfd_settime, fd, flags, value, old);
    if (!monotonic) return faked_timerfd_settime(fd, flags, value, old);
    struct timespec faked, real;
    clock_gettime(clock, &faked);
    syscall(SYS_clock_gettime, clock, &real);
    long long shift = (faked.tv_sec - real.tv_sec) * NS + (faked.tv_nsec - real.tv_nsec);
    struct itimerspec moved = *value;
    if (value->it_value.tv_sec < LLONG_MAX / NS - 1) {  /* further out stays as far out */
        long long deadline = value->it_value.tv_sec * NS + value->it_value.tv_nsec - shift;
        if (deadline < 1) deadline = 1;                 /* already due: fire at once */
        moved.it_value.tv_sec = deadline / NS;
        moved.it_value.tv_nsec = deadline % NS;
    }
    return (int)syscall(SYS_timerfd_settime, fd, flags, &moved, old);
}

int epoll_wait(int fd, struct epoll_event *events, int count, int timeout) {
    return libc_epoll_wait(fd, events, count, timeout);
}
int epoll_pwait(int fd, struct epoll_event *events, int count, int timeout, const sigset_t *mask) {
    return libc_epoll_pwait(fd, events, count, timeout, mask);
}
int poll(struct pollfd *fds, nfds_t count, int timeout) {
    return libc_poll(fds, count, timeout);
}
int ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask) {
    return libc_ppoll(fds, count, timeout, mask);
}
int select(int count, fd_set *reads, fd_set *writes, fd_set *errors, struct timeval *timeout) {
    return libc_select(count, reads, writes, errors, timeout);
}
int pselect(int count, fd_set *reads, fd_set *writes, fd_set *errors, const struct timespec *timeout, const sigset_t *mask) {
    return libc_pselect(count, reads, writes, errors, timeout, mask);
}
int nanosleep(const struct timespec *duration, struct timespec *left) {
    return libc_nanosleep(duration, left);
}
int usleep(useconds_t microseconds) {
    return libc_usleep(microseconds);
}
unsigned int sleep(unsigned int seconds) {
    return libc_sleep(seconds);
}
