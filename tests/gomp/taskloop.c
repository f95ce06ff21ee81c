// gcc's lowering of taskloop: long and unsigned long long loops (upward and downward),
// grainsize, num_tasks, their strict modifier, nogroup, if(0), final, priority, a VLA
// firstprivate (gcc's copy function), lastprivate, and reductions (taskloop reduction, and
// in_reduction of a taskloop inside a taskgroup's task_reduction). Exit status 0 when every
// result holds.
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "../c/check.h"

#define N 1000
#define BIG 0x8000000000000000ULL

static int hits[N];
static int sizes[N];

static void reset(void) {
    memset(hits, 0, sizeof hits);
}

static int each_once(int n) {
    for (int i = 0; i < n; i++)
        if (hits[i] != 1)
            return 0;
    return 1;
}

int main(void) {
#pragma omp parallel
#pragma omp single
    {
        reset();
#pragma omp taskloop
        for (long i = 0; i < N; i++)
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
        CHECK("taskloop", each_once(N));

        reset();
#pragma omp taskloop grainsize(10)
        for (long i = N - 1; i >= 0; i -= 2)
            __atomic_fetch_add(&hits[(N - 1 - i) / 2], 1, __ATOMIC_RELAXED);
        CHECK("taskloop downward, grainsize", each_once(N / 2));

        // num_tasks(7): seven chunks (each task's firstprivate copy marks its first iteration).
        reset();
        int chunks = 0, cf = -1;
#pragma omp taskloop num_tasks(7) firstprivate(cf) shared(chunks)
        for (int i = 0; i < N; i++) {
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
            if (cf < 0) {
                cf = i;
                __atomic_fetch_add(&chunks, 1, __ATOMIC_RELAXED);
            }
        }
        CHECK("taskloop num_tasks", each_once(N));
        CHECK_EQ("taskloop num_tasks: chunks", chunks, 7);

        // strict grainsize: every chunk but the last has exactly 64 iterations, from a
        // multiple of 64.
        cf = -1;
#pragma omp taskloop grainsize(strict : 64) firstprivate(cf)
        for (int i = 0; i < N; i++) {
            if (cf < 0)
                cf = i;
            __atomic_fetch_add(&sizes[cf], 1, __ATOMIC_RELAXED);
        }
        int sizes_ok = 1;
        for (int i = 0; i < N; i++) {
            int want = i % 64 ? 0 : (i + 64 <= N ? 64 : N - i);
            if (sizes[i] != want)
                sizes_ok = 0;
        }
        CHECK("taskloop strict grainsize", sizes_ok);

        // unsigned long long, upward above 2^63 and downward.
        reset();
#pragma omp taskloop num_tasks(13)
        for (unsigned long long x = BIG - 300; x < BIG + 700; x++)
            __atomic_fetch_add(&hits[x - (BIG - 300)], 1, __ATOMIC_RELAXED);
        CHECK("taskloop ull", each_once(N));
        reset();
#pragma omp taskloop grainsize(9)
        for (unsigned long long x = BIG + 999; x >= BIG; x -= 1)
            __atomic_fetch_add(&hits[x - BIG], 1, __ATOMIC_RELAXED);
        CHECK("taskloop ull downward", each_once(N));

        // nogroup: the chunks are complete only after a taskwait.
        reset();
#pragma omp taskloop nogroup
        for (int i = 0; i < N; i++)
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
#pragma omp taskwait
        CHECK("taskloop nogroup + taskwait", each_once(N));

        // if(0): every chunk runs undeferred on this thread.
        reset();
        int me = omp_get_thread_num(), elsewhere = 0;
#pragma omp taskloop if (0) shared(elsewhere)
        for (int i = 0; i < N; i++) {
            __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
            if (omp_get_thread_num() != me)
                elsewhere = 1;
        }
        CHECK("taskloop if(0)", each_once(N) && !elsewhere);

        // final(1) and priority.
        int finals = 0;
#pragma omp taskloop final(1) priority(2) num_tasks(4) shared(finals)
        for (int i = 0; i < 4; i++)
            if (omp_in_final())
                __atomic_fetch_add(&finals, 1, __ATOMIC_RELAXED);
        CHECK("taskloop final", finals == 4);

        // A VLA firstprivate: gcc copies each chunk's data with its copy function.
        int n = 37;
        int vla[n];
        for (int i = 0; i < n; i++)
            vla[i] = 3 * i;
        int vla_ok = 1;
#pragma omp taskloop firstprivate(vla) shared(vla_ok) num_tasks(5)
        for (int i = 0; i < n; i++)
            if (vla[i] != 3 * i)
                vla_ok = 0;
        CHECK("taskloop VLA firstprivate", vla_ok);

        // lastprivate: the value of the sequentially last iteration.
        long last = -1;
#pragma omp taskloop lastprivate(last) grainsize(33)
        for (long i = 0; i < N; i++)
            last = i;
        CHECK_EQ("taskloop lastprivate", last, N - 1);

        // reduction on the taskloop.
        long sum = 0;
#pragma omp taskloop reduction(+ : sum) grainsize(16)
        for (long i = 1; i <= N; i++)
            sum += i;
        CHECK_EQ("taskloop reduction", sum, (long)N * (N + 1) / 2);

        // A zero-trip taskloop with a reduction leaves it alone.
        long none = 5;
        int zero = 0;
#pragma omp taskloop reduction(+ : none)
        for (int i = 0; i < zero; i++)
            none += 100;
        CHECK_EQ("zero-trip taskloop reduction", none, 5);

        // in_reduction: a taskloop's chunks join a taskgroup's task reduction.
        long total = 0;
#pragma omp taskgroup task_reduction(+ : total)
        {
#pragma omp taskloop in_reduction(+ : total) nogroup
            for (long i = 0; i < 100; i++)
                total += i;
#pragma omp task in_reduction(+ : total)
            total += 1000;
        }
        CHECK_EQ("taskloop in_reduction", total, 4950 + 1000);
    }
    if (failures)
        return 1;
    puts("gomp taskloop: ok");
    return 0;
}
