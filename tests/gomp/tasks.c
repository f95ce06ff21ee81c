// gcc's lowering of tasks on the runtime: firstprivate data copied at creation (plainly and by
// a copy function), if(0), final, untied, priority, dependences in gcc's two array forms
// (in/out/inout; mutexinoutset and depend objects), taskwait, taskwait depend, taskgroup,
// taskyield, and detach fulfilled by another task. Exit status 0 when every result holds.
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "../c/check.h"

static void slow(void) {
    for (volatile int i = 0; i < 20000; i++) {
    }
}

int main(void) {
    int sum = 0, vla_ok = 1, final_ok = 0, undeferred = 0;
#pragma omp parallel
#pragma omp single
    {
        // Firstprivate values are taken at creation.
        for (int i = 1; i <= 100; i++) {
#pragma omp task firstprivate(i) shared(sum)
            __atomic_fetch_add(&sum, i, __ATOMIC_RELAXED);
        }
        // A variable-length array: gcc copies it with a copy function.
        int n = 50;
        int vla[n];
        for (int i = 0; i < n; i++)
            vla[i] = i;
#pragma omp task firstprivate(vla) shared(vla_ok)
        {
            for (int i = 0; i < n; i++)
                if (vla[i] != i)
                    vla_ok = 0;
        }
        for (int i = 0; i < n; i++)
            vla[i] = -1;
#pragma omp taskwait
        // if(0): runs before the encountering task goes on.
        int seen = 0;
#pragma omp task if (0) shared(seen)
        seen = 1;
        undeferred = seen;
#pragma omp task final(1) shared(final_ok)
        final_ok = omp_in_final();
#pragma omp task untied priority(3) shared(sum)
        __atomic_fetch_add(&sum, 1000, __ATOMIC_RELAXED);
    }
    CHECK("firstprivate, VLA copy, if(0), final", sum == 5050 + 1000 && vla_ok && undeferred && final_ok);

    // Dependences (gcc's first form): a chain of inout, readers after a writer.
    int x = 0, order[8], k = 0, bad = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < 4; i++) {
#pragma omp task depend(inout : x) shared(x, order, k)
            {
                slow();
                order[__atomic_fetch_add(&k, 1, __ATOMIC_RELAXED)] = i;
                x++;
            }
        }
        for (int i = 0; i < 4; i++) {
#pragma omp task depend(in : x) shared(x, bad)
            if (x != 4)
                __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
        }
#pragma omp taskwait depend(in : x)
        if (x != 4)
            bad += 100;
    }
    CHECK("inout chain and its readers", bad == 0 && order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);

    // gcc's second form: mutexinoutset members one at a time, a depend object, then a reader.
    int y = 0, inside = 0, overlap = 0;
    omp_depend_t obj;
#pragma omp parallel
#pragma omp single
    {
#pragma omp depobj(obj) depend(inout : y)
        for (int i = 0; i < 6; i++) {
#pragma omp task depend(mutexinoutset : y) shared(y, inside, overlap)
            {
                if (__atomic_fetch_add(&inside, 1, __ATOMIC_RELAXED) != 0)
                    __atomic_fetch_add(&overlap, 1, __ATOMIC_RELAXED);
                slow();
                y++;
                __atomic_fetch_sub(&inside, 1, __ATOMIC_RELAXED);
            }
        }
#pragma omp task depend(depobj : obj) shared(y)
        y *= 10;
#pragma omp taskwait
#pragma omp depobj(obj) destroy
    }
    CHECK("mutexinoutset members apart, then the depend object", overlap == 0 && y == 60);

    // taskgroup waits for descendants; taskyield is harmless.
    int deep = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        {
#pragma omp task shared(deep)
            {
#pragma omp task shared(deep)
                {
                    slow();
                    __atomic_fetch_add(&deep, 1, __ATOMIC_RELAXED);
                }
#pragma omp taskyield
            }
        }
        if (deep != 1)
            deep = -1;
    }
    CHECK("taskgroup waits for descendants", deep == 1);

    // detach: the task completes once another task fulfils its event.
    int done = 0, after = 0;
#pragma omp parallel
#pragma omp single
    {
        omp_event_handle_t ev;
#pragma omp task detach(ev) shared(done)
        done = 1;
#pragma omp task firstprivate(ev)
        {
            slow();
            omp_fulfill_event(ev);
        }
#pragma omp taskwait
        after = done;
    }
    CHECK("detach", after == 1);

    if (failures)
        return 1;
    puts("gomp tasks: ok");
    return 0;
}
