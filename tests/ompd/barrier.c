// Three threads, two of them in an explicit barrier; the third stops before it once both
// have been waiting a while.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>
void stop_here(void) { __asm__ volatile("" ::: "memory"); }
static int arrived;
int main(void) {
#pragma omp parallel num_threads(3)
  {
    if (omp_get_thread_num() == 0) {
      while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < 2)
        usleep(1000);
      usleep(500000);
      stop_here();
    } else {
      __atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL);
    }
#pragma omp barrier
  }
  return 0;
}
