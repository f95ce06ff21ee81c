// trace_runtime.c - run with OMP_OVNI=1 by tests/trace.rs: the states of the Runtime subsystem
// and the barrier's spin wait.
//  1. a region of 2 threads: thread 0 sleeps 50 ms before a barrier (thread 1 waits there,
//     awake: the block time is 200 ms), thread 1 sleeps 50 ms after it (the primary waits for
//     it at the join)
//  2. a teams construct of 2 teams (each member runs the league's internal microtask, which
//     runs the user's code)
//  3. a thread of the program's own (pthread) that runs a region of one thread (serialized)
//     and ends: an initial thread of its own, attached from its first call to its end
#include <omp.h>
#include <pthread.h>
#include <unistd.h>

static int count = 0;

static void *other_initial(void *arg) {
  (void)arg;
#pragma omp parallel num_threads(1)
  __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
  return NULL;
}

int main(void) {
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) usleep(50000);
#pragma omp barrier
    if (omp_get_thread_num() == 1) usleep(50000);
    __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
  }
#pragma omp teams num_teams(2) thread_limit(1)
  __atomic_fetch_add(&count, 10, __ATOMIC_RELAXED);
  pthread_t t;
  if (pthread_create(&t, NULL, other_initial, NULL) != 0) return 2;
  pthread_join(t, NULL);
  return count == 23 ? 0 : 1;
}
