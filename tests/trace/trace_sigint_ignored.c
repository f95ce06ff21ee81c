// trace_sigint_ignored.c - run with OMP_OVNI=1 and SIGINT ignored (inherited, as by a background
// job of a shell script) by tests/trace.rs: the primary thread raises SIGINT inside a region,
// which changes nothing; a second region follows, and the trace must cover it too.
#include <omp.h>
#include <signal.h>
int main(void) {
  int n = 0;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) raise(SIGINT);
#pragma omp barrier
  }
#pragma omp parallel num_threads(2)
  __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED);
  return n == 2 ? 0 : 1;
}
