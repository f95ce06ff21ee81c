// task_untied.c - untied tasks and taskyield (__kmpc_omp_taskyield; clang's
// untied state machine: the entry re-enqueues itself with __kmpc_omp_task and
// re-enters at part_id after each task scheduling point, so returning from the
// entry does not mean the task is complete):
//  * untied tasks that loop over taskyield and taskwait, keeping locals, a
//    local array and firstprivates across the parts; children write into the
//    untied task's local array (shared), summed after each taskwait; results
//    compared with the closed form
//  * untied tasks create untied children recursively (fib with untied tasks
//    and taskwait); an untied task is complete only after its last part: a
//    taskwait / taskgroup / barrier waiting for it sees its final writes
//  * untied tasks with 40 taskyields in a row, counted
//  * tied tasks with taskyield in loops (every thread creating them), results
//    checked; omp_in_explicit_task() is 1 in every part of an untied task
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: omp_in_explicit_task (OpenMP 5.2), which gcc 12's libgomp lacks
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define REPS 30
#define NU 24
#define ROUNDS 6
#define NC 4
/* untied fib is slow on libomp when oversubscribed (16 threads on 2 cores) */
#define FIB_N 10
#define FIB_REPS 8

static long expected_untied(int i) {
  long s = 0;
  for (int r = 0; r < ROUNDS; r++)
    for (int c = 0; c < NC; c++) s += i * 1000 + r * 10 + c;
  return s + i; /* + the firstprivate, read after the last part */
}

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static long fib_untied(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp task untied shared(a)
  a = fib_untied(n - 1);
#pragma omp task untied shared(b)
  b = fib_untied(n - 2);
#pragma omp taskyield
#pragma omp taskwait
  return a + b;
}

int main(void) {
  /* 1. untied tasks: taskyield + taskwait loops, children writing the task's locals */
  for (int rep = 0; rep < REPS; rep++) {
    long out[NU];
    int bad_expl = 0, bad_yields = 0;
    for (int i = 0; i < NU; i++) out[i] = -1;
#pragma omp parallel shared(out, bad_expl, bad_yields)
    {
#pragma omp single
      for (int i = 0; i < NU; i++) {
#pragma omp task untied firstprivate(i) shared(out, bad_expl, bad_yields)
        {
          int part[NC];
          long sum = 0;
          int yields = 0;
          for (int r = 0; r < ROUNDS; r++) {
            for (int c = 0; c < NC; c++) part[c] = -1;
            for (int c = 0; c < NC; c++) {
#pragma omp task firstprivate(c, r, i) shared(part)
              part[c] = i * 1000 + r * 10 + c;
            }
#pragma omp taskyield
            yields++;
            if (omp_in_explicit_task() != 1) __atomic_fetch_add(&bad_expl, 1, __ATOMIC_RELAXED);
#pragma omp taskwait
            for (int c = 0; c < NC; c++) sum += part[c];
          }
          if (yields != ROUNDS) __atomic_fetch_add(&bad_yields, 1, __ATOMIC_RELAXED);
          out[i] = sum + i;
        }
      }
    }
    int wrong = 0;
    for (int i = 0; i < NU; i++) wrong += out[i] != expected_untied(i);
    CHECK_EQ("untied tasks with taskyield/taskwait: wrong results", wrong, 0);
    CHECK_EQ("untied task: omp_in_explicit_task() != 1 after a scheduling point", bad_expl, 0);
    CHECK_EQ("untied task: local counter across parts", bad_yields, 0);
    if (failures) break;
  }

  /* 2. untied fib; completion seen by taskwait, taskgroup and barrier */
  long fib_expected = fib_seq(FIB_N);
  for (int rep = 0; rep < FIB_REPS; rep++) {
    long r1 = -1, r2 = -1, r3 = -1;
    int bad_tw = 0;
#pragma omp parallel shared(r1, r2, r3, bad_tw)
    {
#pragma omp single
      {
#pragma omp task untied shared(r1)
        r1 = fib_untied(FIB_N);
#pragma omp taskwait
        if (r1 != fib_expected) bad_tw++;
#pragma omp taskgroup
        {
#pragma omp task untied shared(r2)
          r2 = fib_untied(FIB_N - 1);
        }
        if (r2 != fib_seq(FIB_N - 1)) bad_tw++;
#pragma omp task untied shared(r3)
        {
          long v = fib_untied(FIB_N - 2);
#pragma omp taskyield
          r3 = v;
        }
      }
      /* implicit barrier of single: r3 written */
      if (r3 != fib_seq(FIB_N - 2)) __atomic_fetch_add(&bad_tw, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("untied fib (taskwait)", r1, fib_expected);
    CHECK_EQ("untied fib (taskgroup)", r2, fib_seq(FIB_N - 1));
    CHECK_EQ("untied fib (barrier)", r3, fib_seq(FIB_N - 2));
    CHECK_EQ("untied: results not visible at taskwait/taskgroup/barrier", bad_tw, 0);
    if (failures) break;
  }

  /* 3. untied tasks with many taskyields, created by every thread */
  for (int rep = 0; rep < REPS; rep++) {
    int total = 0, nth = 0, bad = 0;
#pragma omp parallel shared(total, nth, bad)
    {
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
      for (int t = 0; t < 4; t++) {
#pragma omp task untied firstprivate(t) shared(total, bad)
        {
          int k, cnt = 0;
          int arr[5] = {t, t + 1, t + 2, t + 3, t + 4};
          for (k = 0; k < 40; k++) {
#pragma omp taskyield
            cnt += arr[k % 5] - t;
          }
          if (cnt != 80) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
          __atomic_fetch_add(&total, 1, __ATOMIC_RELAXED);
        }
      }
    }
    CHECK_EQ("untied taskyield loops: tasks run", total, 4 * nth);
    CHECK_EQ("untied taskyield loops: locals across 40 parts", bad, 0);
    if (failures) break;
  }

  /* 4. tied tasks with taskyield */
  for (int rep = 0; rep < REPS; rep++) {
    long sums[64];
    int nth = 0, bad = 0;
    memset(sums, 0, sizeof sums);
#pragma omp parallel shared(sums, nth, bad)
    {
      int me = omp_get_thread_num();
      if (me == 0) nth = omp_get_num_threads();
      for (int t = 0; t < 4; t++) {
#pragma omp task firstprivate(t, me) shared(sums, bad)
        {
          int thr = omp_get_thread_num();
          long s = 0;
          for (int k = 0; k < 20; k++) {
            /* a child to run while this task yields */
#pragma omp task firstprivate(k, me) shared(sums)
            __atomic_fetch_add(&sums[me % 64], k, __ATOMIC_RELAXED);
#pragma omp taskyield
            s += k;
          }
          /* a tied task resumes on the thread that started it */
          if (omp_get_thread_num() != thr) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
          __atomic_fetch_add(&sums[me % 64], s * 1000, __ATOMIC_RELAXED);
        }
      }
    }
    int wrong = 0;
    for (int t = 0; t < nth && t < 64; t++) {
      long per = 4L * (190 + 190 * 1000); /* 4 tasks: children sum 0..19, own sum 0..19 ×1000 */
      long exp = per * (1 + (nth - 1 - t) / 64);
      wrong += sums[t] != exp;
    }
    CHECK_EQ("tied tasks with taskyield: wrong sums", wrong, 0);
    CHECK_EQ("tied task resumed on another thread after taskyield", bad, 0);
    if (failures) break;
  }

  if (failures) {
    fprintf(stderr, "task_untied: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_untied\n");
  return 0;
}
