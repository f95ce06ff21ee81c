// gcc's lowering of parallel regions and worksharing on the runtime: dynamic, guided and
// runtime loops (orphaned and combined with `parallel`), with steps and downward, empty loops,
// `nowait`, sections, single, single copyprivate, named and unnamed critical sections, the
// atomic lock (long double), barriers. Each result is checked; exit status 0 when all hold.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "../c/check.h"

enum { N = 1000 };
static int hits[N];

static void clear(void) {
    for (int i = 0; i < N; i++)
        hits[i] = 0;
}

/// Every index in [0, N) was run `want` times where `sel(i)`, never elsewhere.
static int covered(int (*sel)(int), int want) {
    for (int i = 0; i < N; i++)
        if (hits[i] != (sel(i) ? want : 0))
            return 0;
    return 1;
}
static int all(int i) { (void)i; return 1; }
static int by3(int i) { return i % 3 == 1; }
static int down(int i) { return i >= 10 && i % 7 == (N - 1) % 7; }

int main(int argc, char **argv) {
    (void)argv;
    int n = N - (argc > 5); // bounds the compiler cannot see: no combined entry for these loops
    int nthreads = 0;

#pragma omp parallel
    {
#pragma omp single
        nthreads = omp_get_num_threads();
#pragma omp for schedule(dynamic, 7)
        for (int i = 0; i < n; i++)
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    }
    CHECK("dynamic loop", nthreads >= 1 && covered(all, 1));

    clear();
#pragma omp parallel
    {
#pragma omp for schedule(guided, 3) nowait
        for (int i = 1; i < n; i += 3)
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
#pragma omp for schedule(monotonic : dynamic)
        for (int i = 1; i < n; i += 3)
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    }
    CHECK("guided then monotonic dynamic loops by 3, the first nowait", covered(by3, 2));

    clear();
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (int i = n - 1; i >= 10; i -= 7)
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    }
    CHECK("a runtime-scheduled loop counting down by 7", covered(down, 1));

    // Combined `parallel for` with constant bounds (gcc's GOMP_parallel_loop_* entries).
    clear();
#pragma omp parallel for schedule(dynamic, 5)
    for (int i = 0; i < N; i++)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    CHECK("parallel for dynamic", covered(all, 1));
    clear();
#pragma omp parallel for schedule(guided)
    for (int i = 0; i < N; i++)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    CHECK("parallel for guided", covered(all, 1));
    clear();
#pragma omp parallel for schedule(runtime)
    for (int i = 0; i < N; i++)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    CHECK("parallel for runtime", covered(all, 1));

    // An empty loop: no iteration, and the team goes on.
    int ran = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic)
        for (int i = n; i < n - 5; i++)
            __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
    }
    CHECK("an empty loop runs no iteration", ran == 0);

    // Sections: each runs once.
    int sec[4] = {0, 0, 0, 0};
#pragma omp parallel
    {
#pragma omp sections
        {
#pragma omp section
            __atomic_fetch_add(&sec[0], 1, __ATOMIC_RELAXED);
#pragma omp section
            __atomic_fetch_add(&sec[1], 1, __ATOMIC_RELAXED);
#pragma omp section
            __atomic_fetch_add(&sec[2], 1, __ATOMIC_RELAXED);
        }
    }
#pragma omp parallel sections
    {
#pragma omp section
        __atomic_fetch_add(&sec[3], 1, __ATOMIC_RELAXED);
#pragma omp section
        __atomic_fetch_add(&sec[3], 10, __ATOMIC_RELAXED);
    }
    CHECK("each section once", sec[0] == 1 && sec[1] == 1 && sec[2] == 1 && sec[3] == 11);

    // single: one thread; copyprivate: every thread gets its value.
    int singles = 0, copied = 0, team = 0;
#pragma omp parallel reduction(+ : copied)
    {
        int v;
#pragma omp single
        singles++;
#pragma omp single copyprivate(v)
        v = 42 + omp_get_thread_num() * 0;
        copied += v == 42;
#pragma omp single nowait
        team = omp_get_num_threads();
    }
    CHECK("single once, copyprivate to every thread", singles == 1 && copied == team);

    // critical sections and the atomic lock: no update lost.
    long a = 0, b = 0;
    long double ld = 0;
#pragma omp parallel
    {
        for (int k = 0; k < 1000; k++) {
#pragma omp critical
            a++;
#pragma omp critical(other)
            b += 2;
#pragma omp atomic
            ld += 1.0L;
        }
#pragma omp barrier
    }
    CHECK("critical, named critical and atomic lose no update", a == 1000L * team && b == 2000L * team && ld == 1000.0L * team);

    if (failures)
        return 1;
    puts("gomp worksharing: ok");
    return 0;
}
