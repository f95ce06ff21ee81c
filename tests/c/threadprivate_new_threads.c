// threadprivate_new_threads.c - a pthread that starts after another one ended (and so may be
// given the ended thread's global id) gets threadprivate copies of its own, initialised
// anew, not the ended thread's (built with -fnoopenmp-use-tls: the runtime keeps the copies):
//  * 300 pthreads one after another each find the static initial value, then change it;
//  * its workers' copies behave as before (each worker keeps its own across regions).
// oxiomp-test: threads=1,2,4
// oxiomp-test: cflags=-fnoopenmp-use-tls -lpthread
// oxiomp-test: reference=skip
// oxiomp-test: gcc=skip: built with a clang-only flag (-fnoopenmp-use-tls)
// (libomp 19 gives a new thread the previous thread's copy, with the value it left there.)
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

#include "check.h"

static int tp = 7;
#pragma omp threadprivate(tp)

static int stale, lost;

static void *work(void *arg) {
  long id = (long)arg;
  if (tp != 7) __atomic_fetch_add(&stale, 1, __ATOMIC_RELAXED);
  tp = 1000 + (int)id;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0 && tp != 1000 + (int)id) __atomic_fetch_add(&lost, 1, __ATOMIC_RELAXED);
  }
  if (tp != 1000 + (int)id) __atomic_fetch_add(&lost, 1, __ATOMIC_RELAXED);
  return NULL;
}

int main(void) {
  (void)omp_get_thread_num();
  for (long i = 0; i < 300; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, work, (void *)i) != 0) return 2;
    pthread_join(t, NULL);
  }
  CHECK_EQ("new threads that found another thread's threadprivate value", stale, 0);
  CHECK_EQ("threads whose own value changed under them", lost, 0);
  CHECK_EQ("the main thread's copy", tp, 7);
  return failures != 0;
}
