// Nested parallel regions, two levels deep: the thread that is thread 1 of the inner team
// of the outer team's thread 1 stops, after printing what the OpenMP API answers there, once
// all four threads run an inner implicit task (so every thread has started).
#include <omp.h>
#include <stdio.h>
#include <unistd.h>
static int started;
void stop_here(void) { __asm__ volatile("" ::: "memory"); }
int main(void) {
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
#pragma omp parallel num_threads(2)
    {
      __atomic_fetch_add(&started, 1, __ATOMIC_ACQ_REL);
      if (omp_get_thread_num() == 1 && omp_get_ancestor_thread_num(1) == 1) {
        while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < 4)
          usleep(1000);
        printf("expect levels-var=%d active-levels-var=%d thread-num-var=%d team-size-var=%d "
               "max-active-levels-var=%d nthreads-var=%d dyn-var=%d implicit-task-var=1\n",
               omp_get_level(), omp_get_active_level(), omp_get_thread_num(), omp_get_num_threads(),
               omp_get_max_active_levels(), omp_get_max_threads(), omp_get_dynamic());
        fflush(stdout);
        stop_here();
      }
#pragma omp barrier
    }
  }
  return 0;
}
