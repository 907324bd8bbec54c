/* threadpool.c -- the intra-op thread pool.
 *
 * A pool owns n-1 worker threads; the caller of mlrt_parallel_for is the nth.
 * A loop's items are cut into n equal ranges, one per thread (the caller's first),
 * each handed out in chunks from an atomic counter of its own: a thread runs the
 * chunks of its own range, then takes what is left of the others'.  So the same
 * thread computes the same part of a node's output run after run, and mostly the part
 * of the next node that reads it (both cut by output position, say): the bytes stay
 * in that core's cache.  Handed out from one counter, the chunks fell to either
 * thread at random, and about half the lines a kernel wrote or read had to come from
 * the other core's cache, at less than half the speed of its own (SqueezeNet ran 10%
 * slower on 2 threads, a 1 x 1 conv followed by a MaxPool 20%).  One loop runs on a pool
 * at a time: a caller that finds the pool busy (another run() on another thread)
 * runs its loop alone rather than wait, so concurrent runs never deadlock.
 *
 * Between loops a worker spins briefly (SPIN pauses, some tens of microseconds)
 * before it sleeps, and so does the caller waiting for the last worker: the loops of
 * one model run follow each other closely, and a wake-up through the kernel costs
 * more than many small loops take.  A worker whose loop ends while a plan runs on the
 * pool (`hot`, counted by mlrt_threadpool_hold) spins longer, up to HOT_SPIN_NS: a
 * plan's serial nodes (a Concat, a small pool) leave gaps between its parallel ones,
 * and runs called back to back leave gaps between plans, that are longer than SPIN and
 * far shorter than a sleep and a wake-up.  Workers of an idle session sleep within
 * HOT_SPIN_NS of its last run.
 *
 * The caller waits only for workers that joined the loop.  A worker joins by counting
 * itself in `active` and then finding the loop still `open`; the caller closes it once
 * every chunk is taken and waits for `active` to drain.  (Both steps are sequentially
 * consistent, so a worker is either seen by the caller or sees the loop closed.)  So
 * a worker the scheduler has not run yet -- the cores taken by another process, or by
 * another runtime's spinning threads -- costs the loop nothing: the caller does its
 * share and returns.
 *
 * The caller waits for those workers by spinning, yielding the processor now and then,
 * for up to WAIT_SPIN_NS before it sleeps: a caller that sleeps is woken by a worker,
 * and the kernel tends to wake a thread onto the waker's processor.  After an idle pause
 * (the scheduler's load figures decayed) caller and worker could so end up sharing one
 * core, taking turns, for tens of milliseconds, a run at half speed or less.  The yield
 * lets a worker that shares the caller's processor finish.  For the same reason a pool
 * made with mlrt_threadpool_create_pinned keeps each worker to a processor of its own
 * (the session default, as onnxruntime does at its default thread count): a waking
 * worker cannot then be put beside the caller, and the caller, free, is moved off a
 * pinned worker's processor by the scheduler.
 *
 * A process forked from one with pools (onnx's checker runs in such a child) has the
 * pools' memory but none of their threads: there a pool runs every loop on the caller
 * alone, and destroying it frees nothing (joining threads that do not exist, or
 * destroying a condition variable the parent's workers were waiting on, would block
 * forever). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* pthread_attr_setaffinity_np, sched_getaffinity */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

/* The next item of one thread's range, on a cache line of its own. */
struct range_slot {
    _Alignas(64) atomic_int_fast64_t next;
};

struct worker_arg {
    struct mlrt_threadpool *pool;
    int32_t index; /* the worker's range: 1 .. n_threads - 1 (the caller's is 0) */
};

struct mlrt_threadpool {
    int32_t n_threads;
    pthread_t *workers;
    pthread_mutex_t busy;      /* held by the thread that owns the current loop */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t done;
    _Atomic uint64_t generation;
    atomic_bool stop;
    atomic_int hot;            /* plans running on the pool: workers spin longer */
    _Atomic int64_t cooled;    /* when the last of them ended (mlrt_now_ns) */
    /* the current loop */
    mlrt_range_fn fn;
    void *arg;
    int64_t n, chunk, share;   /* share: the items of each thread's own range */
    struct range_slot *ranges; /* n_threads: the next item of each range */
    struct worker_arg *args;   /* n_threads: what each worker is started with */
    atomic_bool open;          /* workers may still join the current loop */
    atomic_int active;         /* workers that joined it and have not left */
    int64_t epoch;             /* fork_epoch when the pool was made */
};

/* forks of this process so far, counted in the child: a pool made before a fork is
 * not this process's (its workers stayed in the parent) */
static _Atomic int64_t fork_epoch;
static pthread_once_t fork_watch = PTHREAD_ONCE_INIT;
#ifdef _WIN32
static void watch_forks(void) {} /* (no fork) */
#else
static void forked_child(void) { atomic_fetch_add(&fork_epoch, 1); }
static void watch_forks(void) { pthread_atfork(NULL, NULL, forked_child); }
#endif

static inline bool inherited(const mlrt_threadpool *p) { return p->epoch != atomic_load(&fork_epoch); }

#define SPIN 2000
#define HOT_SPIN_NS 500000
#define WAIT_SPIN_NS 2000000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void mlrt_threadpool_hold(mlrt_threadpool *p, int delta) {
    if (!p || p->n_threads <= 1) return;
    if (atomic_fetch_add(&p->hot, delta) + delta == 0) atomic_store(&p->cooled, mlrt_now_ns());
}

/* Spin until a new loop starts (true) or the spin runs out (false): HOT_SPIN_NS from the
 * end of this worker's loop where a plan was running then (or is now), else from the end
 * of the pool's last plan.  (Whether a plan runs was asked only after SPIN: a worker
 * whose loop was the run's last, a classifier's Gemm say, found the plan ended by then
 * and slept, and the next run's first loop waited some 50 us for its wake-up; that
 * was 4% of MobileNetV2's runs back to back on two threads, 8% of ResNet-18's.) */
static bool spin_for_loop(mlrt_threadpool *p, uint64_t seen) {
    int64_t start = mlrt_now_ns();
    bool hot = atomic_load(&p->hot) != 0;
    for (int i = 0; i < SPIN; ++i) {
        if (atomic_load(&p->generation) != seen || atomic_load(&p->stop)) return true;
        cpu_relax();
    }
    int64_t until = hot || atomic_load(&p->hot) ? start + HOT_SPIN_NS : atomic_load(&p->cooled) + HOT_SPIN_NS;
    for (;;) {
        for (int i = 0; i < 256; ++i) {
            if (atomic_load(&p->generation) != seen || atomic_load(&p->stop)) return true;
            cpu_relax();
        }
        if (mlrt_now_ns() > until) return false;
    }
}

/* Thread `self` runs chunks of its own range, then of the others' (in turn from the
 * next one), until none is left. */
static void run_chunks(mlrt_threadpool *p, int32_t self) {
    for (int32_t k = 0; k < p->n_threads; ++k) {
        int32_t r = (self + k) % p->n_threads;
        int64_t last = (r + 1) * p->share < p->n ? (r + 1) * p->share : p->n;
        for (;;) {
            int64_t begin = atomic_fetch_add(&p->ranges[r].next, p->chunk);
            if (begin >= last) break;
            int64_t end = begin + p->chunk < last ? begin + p->chunk : last;
            p->fn(p->arg, begin, end);
        }
    }
}

/* The caller's wait for the workers that joined the loop (see the top of the file). */
static void wait_for_workers(mlrt_threadpool *p) {
    for (int i = 0; i < SPIN; ++i) {
        if (atomic_load(&p->active) == 0) return;
        cpu_relax();
    }
    int64_t until = mlrt_now_ns() + WAIT_SPIN_NS;
    do {
        for (int i = 0; i < 256; ++i) {
            if (atomic_load(&p->active) == 0) return;
            cpu_relax();
        }
        sched_yield();
    } while (mlrt_now_ns() < until);
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->active) > 0) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

static void *worker_main(void *arg) {
    mlrt_threadpool *p = ((struct worker_arg *)arg)->pool;
    int32_t self = ((struct worker_arg *)arg)->index;
    uint64_t seen = 0;
    for (;;) {
        if (!spin_for_loop(p, seen)) {
            pthread_mutex_lock(&p->lock);
            while (!atomic_load(&p->stop) && atomic_load(&p->generation) == seen) pthread_cond_wait(&p->wake, &p->lock);
            pthread_mutex_unlock(&p->lock);
        }
        if (atomic_load(&p->stop)) break;
        seen = atomic_load(&p->generation);
        atomic_fetch_add(&p->active, 1);
        if (atomic_load(&p->open)) run_chunks(p, self);
        if (atomic_fetch_sub(&p->active, 1) == 1) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
    return NULL;
}

/* A thread attribute keeping worker `index` to the index-th processor in `allowed`. */
static bool pinned_attr(pthread_attr_t *attr, const void *allowed, int32_t index) {
#ifdef __linux__
    const cpu_set_t *set = allowed;
    for (int cpu = 0, k = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, set) || k++ != index) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (pthread_attr_init(attr) != 0) return false;
        if (pthread_attr_setaffinity_np(attr, sizeof one, &one) == 0) return true;
        pthread_attr_destroy(attr);
        return false;
    }
#else
    (void)attr, (void)allowed, (void)index;
#endif
    return false;
}

static mlrt_threadpool *create(int32_t n_threads, bool pinned) {
    if (n_threads < 1) n_threads = 1;
    if (n_threads > 256) n_threads = 256;
    pthread_once(&fork_watch, watch_forks);
    mlrt_threadpool *p = calloc(1, sizeof *p);
    if (!p) { mlrt_fail(MLRT_ERR_OUT_OF_MEMORY, "cannot allocate a thread pool"); return NULL; }
    p->n_threads = 1;
    p->epoch = atomic_load(&fork_epoch);
    pthread_mutex_init(&p->busy, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->workers = calloc((size_t)n_threads, sizeof *p->workers);
    p->args = calloc((size_t)n_threads, sizeof *p->args);
    p->ranges = mlrt_aligned_alloc(64, (size_t)n_threads * sizeof *p->ranges);
    if (!p->workers || !p->args || !p->ranges) { mlrt_threadpool_destroy(p); return NULL; }
#ifdef __linux__
    cpu_set_t allowed;
    if (pinned) pinned = sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) >= n_threads;
#else
    int allowed = 0;
    pinned = false;
#endif
    for (int32_t i = 1; i < n_threads; ++i) {
        pthread_attr_t attr;
        bool with_attr = pinned && pinned_attr(&attr, &allowed, i);
        p->args[i] = (struct worker_arg){p, i};
        int failed = pthread_create(&p->workers[i], with_attr ? &attr : NULL, worker_main, &p->args[i]);
        if (with_attr) pthread_attr_destroy(&attr);
        if (failed) break;
        p->n_threads++;
    }
    return p;
}

mlrt_threadpool *mlrt_threadpool_create(int32_t n_threads) { return create(n_threads, false); }
mlrt_threadpool *mlrt_threadpool_create_pinned(int32_t n_threads) { return create(n_threads, true); }

void mlrt_threadpool_destroy(mlrt_threadpool *p) {
    if (!p || inherited(p)) return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stop, true);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int32_t i = 1; i < p->n_threads; ++i) pthread_join(p->workers[i], NULL);
    free(p->workers);
    free(p->args);
    mlrt_aligned_free(p->ranges);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->busy);
    free(p);
}

int32_t mlrt_threadpool_size(const mlrt_threadpool *p) { return p ? p->n_threads : 1; }

void mlrt_parallel_for(const mlrt_context *ctx, int64_t n, int64_t grain, mlrt_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    mlrt_threadpool *p = ctx ? ctx->pool : NULL;
    if (!p || p->n_threads == 1 || n <= grain || inherited(p) || pthread_mutex_trylock(&p->busy) != 0) {
        fn(arg, 0, n);
        return;
    }
    int64_t chunk = n / (p->n_threads * 4);
    if (chunk < grain) chunk = grain;
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = chunk;
    p->share = (n + p->n_threads - 1) / p->n_threads;
    for (int32_t r = 0; r < p->n_threads; ++r) atomic_store(&p->ranges[r].next, r * p->share);
    atomic_store(&p->open, true);
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_chunks(p, 0);
    atomic_store(&p->open, false);  /* every chunk is taken: wait only for those who joined */
    wait_for_workers(p);
    pthread_mutex_unlock(&p->busy);
}
