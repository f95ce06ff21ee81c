// A program stopped (SIGSTOP) inside an explicit task of a two-thread region, after printing
// what the OpenMP API answers there; the Rust debugger of tests/ompd_api reads it.
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
  omp_set_max_active_levels(3);
  omp_set_schedule(omp_sched_dynamic, 7);
#pragma omp parallel num_threads(2)
  {
    // Both threads have started (and registered) before the program stops.
#pragma omp barrier
#pragma omp single
    {
#pragma omp task
    {
      printf("expect tid=%ld pthread=%ld levels-var=%d active-levels-var=%d thread-num-var=%d team-size-var=%d "
             "nthreads-var=%d max-active-levels-var=%d dyn-var=%d final-task-var=%d "
             "implicit-task-var=0 debug-var=1 num-procs-var=%d\n",
             (long)syscall(SYS_gettid), (long)pthread_self(), omp_get_level(), omp_get_active_level(), omp_get_thread_num(),
             omp_get_num_threads(), omp_get_max_threads(), omp_get_max_active_levels(), omp_get_dynamic(),
             omp_in_final(), omp_get_num_procs());
      fflush(stdout);
      raise(SIGSTOP);
    }
#pragma omp taskwait
    }
  }
  return 0;
}
