// trace_taskwait.c - run with OMP_OVNI=1 by tests/trace.rs, in a team of 2. Thread 0 creates
// task A (depend out: x), which spins until thread 1 sets `go`, and task B (depend in: x),
// then waits for both (taskwait). Thread 1 stays out of every task scheduling point until B
// has run (it waits for `started`, sets `go`, waits for `b_done`), so thread 0 runs A and B,
// inside its taskwait, which must block until A ends. Waits are bounded (10 s).
#include <omp.h>
#include <sched.h>
#include <time.h>

static int started, go, b_done, x;

// Waits until *flag is set; 0 if it was not within 10 seconds.
static int wait_for(int *flag) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 10) return 0;
    sched_yield();
  }
  return 1;
}

int main(void) {
  int ok = 1;
#pragma omp parallel num_threads(2) shared(ok)
  {
    if (omp_get_num_threads() != 2) {
      ok = 0;
    } else if (omp_get_thread_num() == 0) {
#pragma omp task depend(out : x) shared(ok)
      {
        __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
        if (!wait_for(&go)) ok = 0;
        x = 1;
      }
#pragma omp task depend(in : x) shared(ok)
      {
        if (x != 1) ok = 0;
        __atomic_store_n(&b_done, 1, __ATOMIC_RELEASE);
      }
#pragma omp taskwait
      if (!__atomic_load_n(&b_done, __ATOMIC_ACQUIRE)) ok = 0;
    } else {
      if (!wait_for(&started)) ok = 0;
      __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
      if (!wait_for(&b_done)) ok = 0;
    }
  }
  return ok ? 0 : 1;
}
