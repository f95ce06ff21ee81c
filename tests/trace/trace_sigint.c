// trace_sigint.c - run with OMP_OVNI=1 by tests/trace.rs, which sends it SIGINT: every thread
// records critical sections and tasks without end; the program prints "ready" once every
// thread has gone round that loop 20000 times (a few MiB of events each: its buffers have been
// handed over to the writer), and is ended by the signal.
#include <omp.h>
#include <sched.h>
#include <stdio.h>
int main(void) {
  long sink = 0;
  int started = 0;
#pragma omp parallel shared(sink, started)
  {
    for (long i = 0;; i++) {
#pragma omp critical
      sink++;
#pragma omp task shared(sink)
      __atomic_fetch_add(&sink, 1, __ATOMIC_RELAXED);
      if (i % 64 == 63) {
#pragma omp taskwait
      }
      if (i == 20000 && __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST) == omp_get_num_threads()) {
        printf("ready\n");
        fflush(stdout);
      }
    }
  }
  return 0;
}
