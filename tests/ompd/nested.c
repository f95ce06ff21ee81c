// Nested parallel regions, two levels deep: the thread that is thread 1 of the inner team
// of the outer team's thread 1 stops, after printing what the OpenMP API answers there.
#include <omp.h>
#include <stdio.h>
void stop_here(void) { __asm__ volatile("" ::: "memory"); }
int main(void) {
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1 && omp_get_ancestor_thread_num(1) == 1) {
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
