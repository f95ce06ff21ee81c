// gcc's lowering of task reductions: a taskgroup's task_reduction with in_reduction tasks
// (nested taskgroups too), and reduction(task, ...) on parallel, for (static and dynamic),
// sections and scope, whose tasks take part through in_reduction. Exit status 0 when every
// result holds.
#include <omp.h>
#include <stdio.h>

#include "../c/check.h"

#define N 200

int main(void) {
    // taskgroup task_reduction: tasks created by one thread, run by any.
    long sum = 0, prod = 1;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup task_reduction(+ : sum) task_reduction(* : prod)
        {
            for (int i = 1; i <= N; i++) {
#pragma omp task in_reduction(+ : sum) firstprivate(i)
                sum += i;
            }
            for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(* : prod)
                prod *= 2;
            }
            // A nested taskgroup with its own reduction; its tasks also add to the outer one.
            long inner = 0;
#pragma omp taskgroup task_reduction(+ : inner)
            {
                for (int i = 0; i < 50; i++) {
#pragma omp task in_reduction(+ : inner, sum)
                    {
                        inner += 2;
                        sum += 1;
                    }
                }
            }
            CHECK_EQ("nested task_reduction", inner, 100);
        }
    }
    CHECK_EQ("taskgroup task_reduction +", sum, (long)N * (N + 1) / 2 + 50);
    CHECK_EQ("taskgroup task_reduction *", prod, 1024);

    // parallel reduction(task, +): every member's tasks take part.
    long ptotal = 0;
    int team = 0;
#pragma omp parallel reduction(task, + : ptotal) shared(team)
    {
#pragma omp single
        team = omp_get_num_threads();
        for (int i = 0; i < 10; i++) {
#pragma omp task in_reduction(+ : ptotal)
            ptotal += 1;
        }
        ptotal += 100;
    }
    CHECK_EQ("parallel reduction(task)", ptotal, 110L * team);

    // for reduction(task, +), static and dynamic.
    long ftotal = 0, dtotal = 0;
#pragma omp parallel
    {
#pragma omp for reduction(task, + : ftotal)
        for (int i = 0; i < N; i++) {
#pragma omp task in_reduction(+ : ftotal) firstprivate(i)
            ftotal += i;
        }
#pragma omp for reduction(task, + : dtotal) schedule(dynamic, 3)
        for (int i = 0; i < N; i++) {
            if (i % 2) {
#pragma omp task in_reduction(+ : dtotal) firstprivate(i)
                dtotal += i;
            } else {
                dtotal += i;
            }
        }
    }
    CHECK_EQ("for reduction(task), static", ftotal, (long)N * (N - 1) / 2);
    CHECK_EQ("for reduction(task), dynamic", dtotal, (long)N * (N - 1) / 2);

    // sections reduction(task, +).
    long stotal = 0;
#pragma omp parallel sections reduction(task, + : stotal)
    {
#pragma omp section
        {
#pragma omp task in_reduction(+ : stotal)
            stotal += 1;
        }
#pragma omp section
        {
#pragma omp task in_reduction(+ : stotal)
            stotal += 10;
            stotal += 100;
        }
    }
    CHECK_EQ("sections reduction(task)", stotal, 111);

    // sections reduction(task, +) inside a region (not combined).
    long s2 = 0;
#pragma omp parallel
    {
#pragma omp sections reduction(task, + : s2)
        {
#pragma omp section
            {
#pragma omp task in_reduction(+ : s2)
                s2 += 3;
            }
#pragma omp section
            s2 += 4;
#pragma omp section
            {
#pragma omp task in_reduction(+ : s2)
                s2 += 5;
            }
        }
    }
    CHECK_EQ("sections reduction(task) in a region", s2, 12);

    // scope reduction(task, +): every member's part and tasks count.
    long sctotal = 0;
    int members = 0;
#pragma omp parallel shared(members)
    {
#pragma omp atomic
        members++;
#pragma omp scope reduction(task, + : sctotal)
        {
#pragma omp task in_reduction(+ : sctotal)
            sctotal += 5;
            sctotal += 1;
        }
    }
    CHECK_EQ("scope reduction(task)", sctotal, 6L * members);

    if (failures)
        return 1;
    puts("gomp reductions: ok");
    return 0;
}
