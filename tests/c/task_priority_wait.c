// task_priority_wait.c - prioritised tasks and threads that wait inside tasks
// (OMP_MAX_TASK_PRIORITY=50):
//  * a recursive fib whose tasks carry priority(n) and wait for their children
//    (taskwait), run from every implicit task at once and from inside a single:
//    each thread waiting in a tied task may only start that task's descendants,
//    which sit in the priority queue below older tasks it may not start. A
//    runtime that looks only at the queue's top hangs here (libomp 19 does, from
//    fib(8) at 2 threads: so no reference run)
//  * the same with untied tasks and with an if() clause cutting the recursion off
//  * order: tasks of priorities 0..9, queued in a shuffled order while their only
//    consumer is held back, start in non-increasing priority (the clause is a
//    hint, but a runtime that keeps a priority queue must honour it there)
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_MAX_TASK_PRIORITY=50
// oxiomp-test: reference=skip
// oxiomp-test: gcc-reference=skip
// (libgomp crashes on this program.)
#include <omp.h>
#include <stdio.h>

#include "check.h"

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static long pfib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a) priority(n)
  a = pfib(n - 1);
#pragma omp task shared(b) priority(n - 1)
  b = pfib(n - 2);
#pragma omp taskwait
  return a + b;
}

static long pfib_untied(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a) priority(n) untied
  a = pfib_untied(n - 1);
#pragma omp task shared(b) priority(n - 1) untied
  b = pfib_untied(n - 2);
#pragma omp taskwait
  return a + b;
}

static long pfib_if(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a) priority(n) if (n > 6)
  a = pfib_if(n - 1);
#pragma omp task shared(b) priority(n - 1) if (n > 6)
  b = pfib_if(n - 2);
#pragma omp taskwait
  return a + b;
}

#define N 15

static void every_thread(const char *what, long (*f)(int)) {
  long want = fib_seq(N), bad = 0;
#pragma omp parallel reduction(+ : bad)
  for (int r = 0; r < 4; r++)
    if (f(N) != want) bad++;
  char msg[96];
  snprintf(msg, sizeof msg, "%s from every implicit task: wrong results", what);
  CHECK_EQ(msg, bad, 0);
}

static void from_single(const char *what, long (*f)(int)) {
  long got = 0;
#pragma omp parallel
#pragma omp single
  got = f(N + 2);
  char msg[96];
  snprintf(msg, sizeof msg, "%s from a single", what);
  CHECK_EQ(msg, got, fib_seq(N + 2));
}

/* Ten tasks of priorities 0..9 queued while the thread that will run them is
 * held back (spinning outside the runtime); the creator then waits outside the
 * runtime too, so the released thread takes all ten, one after another. */
static void order(void) {
  static const int shuffled[10] = {3, 7, 0, 9, 5, 1, 8, 2, 6, 4};
  int started[10], nstarted = 0, go = 0, two = 0;
#pragma omp parallel num_threads(2) shared(started, nstarted, go, two)
  {
    if (omp_get_num_threads() == 2) {
      if (omp_get_thread_num() == 0) {
        two = 1;
        for (int i = 0; i < 10; i++) {
          int p = shuffled[i];
#pragma omp task priority(p) firstprivate(p) shared(started, nstarted)
          {
            int k;
#pragma omp atomic capture
            k = nstarted++;
            started[k] = p;
          }
        }
        __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&nstarted, __ATOMIC_ACQUIRE) < 10) {
        }
      } else {
        while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
        }
      }
    }
  }
  if (!two) return; /* a team of one runs its tasks as they come */
  CHECK_EQ("order: tasks started", nstarted, 10);
  for (int k = 1; k < 10; k++) {
    char msg[96];
    snprintf(msg, sizeof msg, "order: start %d (priority %d) after one of priority %d", k, started[k],
             started[k - 1]);
    CHECK(msg, started[k] <= started[k - 1]);
  }
}

int main(void) {
  CHECK_EQ("omp_get_max_task_priority()", omp_get_max_task_priority(), 50);
  every_thread("tied fib with priorities", pfib);
  from_single("tied fib with priorities", pfib);
  every_thread("untied fib with priorities", pfib_untied);
  from_single("untied fib with priorities", pfib_untied);
  every_thread("fib with priorities and if()", pfib_if);
  from_single("fib with priorities and if()", pfib_if);
  for (int r = 0; r < 5; r++) order();
  if (failures) {
    fprintf(stderr, "task_priority_wait: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_priority_wait\n");
  return 0;
}
