// pthreads.c - OpenMP from several user pthreads (each becomes a new initial
// thread with its own root team):
//  * 3 pthreads concurrently run parallel regions; outside regions
//    omp_get_thread_num()==0, omp_get_level()==0, omp_in_parallel()==0;
//    inside omp_get_level()==1, team size == omp_get_max_threads() / the
//    num_threads clause, thread ids distinct, results right
//  * omp_set_num_threads() in one pthread affects only that pthread
//  * the main thread runs regions while the pthreads exist
// oxiomp-test: cflags=-lpthread
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define NPT 3
#define REPS 200
static int default_n;
static pthread_barrier_t start_bar;

/* one region, returns the sum of (tid+1) over the team, checks shape */
static long region(int want, const char *label) {
  long sum = 0;
  int nt = -1, bad = 0;
  unsigned long mask = 0;
#pragma omp parallel num_threads(want)
  {
    int t = omp_get_thread_num();
    if (omp_get_level() != 1) __atomic_fetch_add(&bad, 1, __ATOMIC_SEQ_CST);
    if (omp_get_num_threads() != want) __atomic_fetch_add(&bad, 1, __ATOMIC_SEQ_CST);
    if (t < 64) __atomic_fetch_or(&mask, 1UL << t, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&sum, (long)t + 1, __ATOMIC_SEQ_CST);
    if (t == 0) nt = omp_get_num_threads();
  }
  CHECK_EQ(label, nt, want);
  CHECK_EQ("bad level/team size inside region", bad, 0);
  if (want <= 64) CHECK_EQ("thread id mask", mask, want == 64 ? ~0UL : (1UL << want) - 1);
  return sum;
}

static void *worker(void *arg) {
  int id = (int)(long)arg;
  pthread_barrier_wait(&start_bar);
  CHECK_EQ("pthread: omp_get_thread_num() outside", omp_get_thread_num(), 0);
  CHECK_EQ("pthread: omp_get_level() outside", omp_get_level(), 0);
  CHECK_EQ("pthread: omp_in_parallel() outside", omp_in_parallel(), 0);
  CHECK_EQ("pthread: omp_get_num_threads() outside", omp_get_num_threads(), 1);
  CHECK_EQ("pthread: omp_get_max_threads()", omp_get_max_threads(), default_n);
  for (int r = 0; r < REPS; r++) {
    int want = (r % 2) ? 2 : default_n;
    long s = region(want, "pthread: team size");
    CHECK_EQ("pthread: region sum", s, (long)want * (want + 1) / 2);
    CHECK_EQ("pthread: omp_get_thread_num() between regions", omp_get_thread_num(), 0);
    CHECK_EQ("pthread: omp_get_level() between regions", omp_get_level(), 0);
  }
  /* per-initial-thread nthreads-var */
  int mine = id + 2;
  omp_set_num_threads(mine);
  pthread_barrier_wait(&start_bar); /* everybody has set theirs */
  CHECK_EQ("pthread: omp_get_max_threads() after own omp_set_num_threads",
           omp_get_max_threads(), mine);
  for (int r = 0; r < REPS / 4; r++) {
    int nt = -1;
#pragma omp parallel
    if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
    CHECK_EQ("pthread: region size after own omp_set_num_threads", nt, mine);
  }
  return NULL;
}

int main(void) {
  default_n = omp_get_max_threads();
  /* use the runtime from main first, so pthreads are not the first users */
  CHECK_EQ("main: region sum", region(default_n, "main: team size"),
           (long)default_n * (default_n + 1) / 2);

  pthread_t th[NPT];
  pthread_barrier_init(&start_bar, NULL, NPT);
  for (int i = 0; i < NPT; i++)
    if (pthread_create(&th[i], NULL, worker, (void *)(long)i) != 0) {
      fprintf(stderr, "FAIL: pthread_create (got error, expected success)\n");
      return 1;
    }
  /* main keeps using OpenMP concurrently */
  for (int r = 0; r < REPS; r++) {
    long s = region(2, "main (concurrent): team size");
    CHECK_EQ("main (concurrent): region sum", s, 3);
  }
  for (int i = 0; i < NPT; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&start_bar);

  CHECK_EQ("main: omp_get_max_threads() unaffected by pthreads", omp_get_max_threads(),
           default_n);
  CHECK_EQ("main: final region sum", region(default_n, "main: final team size"),
           (long)default_n * (default_n + 1) / 2);

  /* a fresh pthread after the others are gone */
  pthread_barrier_init(&start_bar, NULL, 1);
  pthread_t t2;
  pthread_create(&t2, NULL, worker, (void *)(long)5);
  pthread_join(t2, NULL);
  pthread_barrier_destroy(&start_bar);

  if (failures) {
    fprintf(stderr, "pthreads: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok pthreads\n");
  return 0;
}
