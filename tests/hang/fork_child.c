// A hang in a child process: the primary thread forks inside a region while the rest of the
// team waits at a barrier; the child (a fresh runtime whose one thread carries on) runs a
// region whose last thread skips a barrier, and hangs there. The parent goes on and ends.
#include <omp.h>
#include <unistd.h>

int main(void) {
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0 && fork() == 0) {
#pragma omp parallel num_threads(2)
      {
        if (omp_get_thread_num() == 0) {
#pragma omp barrier
        }
      }
      _exit(0);
    }
#pragma omp barrier
  }
  return 0;
}
