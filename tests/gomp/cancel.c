// gcc's lowering of cancellation (run with OMP_CANCELLATION=true): cancel parallel, for
// (dynamic: the other threads stop taking chunks), sections and taskgroup, cancellation
// points, and the cancellable barriers that end them. Exit status 0 when every result holds.
#include <omp.h>
#include <stdio.h>

#include "../c/check.h"

#define N 100000

int main(void) {
    CHECK("cancellation is on", omp_get_cancellation());

    // cancel parallel: nobody passes the barrier after it; the region ends.
    int after_barrier = 0;
#pragma omp parallel shared(after_barrier)
    {
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
#pragma omp barrier
        __atomic_fetch_add(&after_barrier, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("cancel parallel: nobody past the barrier", after_barrier, 0);

    // cancel for: once iteration 10 cancels, the iterations run are far fewer than N.
    // The region goes on after the loop's barrier.
    int ran = 0, after_loop = 0, team = 0;
#pragma omp parallel shared(ran, after_loop, team)
    {
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < N; i++) {
            __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
            if (i == 10) {
#pragma omp cancel for
            }
#pragma omp cancellation point for
        }
        __atomic_fetch_add(&after_loop, 1, __ATOMIC_RELAXED);
        team = omp_get_num_threads();
        // A region that may be cancelled: gcc ends its loops with GOMP_loop_end_cancel.
        if (ran < 0) {
#pragma omp cancel parallel
        }
    }
    CHECK("cancel for: the loop stopped early", ran > 10 && ran < N);
    CHECK_EQ("cancel for: every thread goes on after the loop", after_loop, team);

    // cancel sections: the section after the cancelling one does not run on its thread.
    int later = 0, after_sections = 0;
#pragma omp parallel num_threads(1) shared(later, after_sections)
    {
#pragma omp sections
        {
#pragma omp section
            {
#pragma omp cancel sections
            }
#pragma omp section
            later = 1;
        }
        after_sections = 1;
        if (later < 0) {
#pragma omp cancel parallel
        }
    }
    CHECK_EQ("cancel sections", later, 0);
    CHECK_EQ("cancel sections: the region goes on", after_sections, 1);

    // cancel taskgroup: tasks not started yet are discarded.
    int started = 0;
#pragma omp parallel num_threads(2) shared(started)
#pragma omp single
    {
#pragma omp taskgroup
        {
#pragma omp task shared(started)
            {
                __atomic_fetch_add(&started, 1, __ATOMIC_RELAXED);
#pragma omp cancel taskgroup
            }
#pragma omp taskwait
            for (int i = 0; i < 1000; i++) {
#pragma omp task shared(started)
                {
#pragma omp cancellation point taskgroup
                    __atomic_fetch_add(&started, 1, __ATOMIC_RELAXED);
                }
            }
        }
    }
    CHECK("cancel taskgroup: later tasks discarded", started >= 1 && started < 1001);

    if (failures)
        return 1;
    puts("gomp cancel: ok");
    return 0;
}
