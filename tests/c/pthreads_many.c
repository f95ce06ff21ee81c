// pthreads_many.c - a program that starts a short-lived pthread per piece of work, each
// calling OpenMP (omp_get_thread_num, one parallel region), 20000 of them, four at a time:
//  * every region has its full team and right thread numbers;
//  * the threads' global ids are reused: none is ever above a bound set by the threads alive
//    at once (four initial threads, their workers, the main thread);
//  * memory stays bounded: the process's peak resident set stays under 64 MB (a descriptor
//    kept per ended thread came to 266 MB, and thread 16385 aborted the program).
// Untraced: every pthread would write a trace stream of its own.
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: cflags=-lpthread
// oxiomp-test: env=OMP_OVNI=0
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "check.h"

#define THREADS 20000
#define AT_ONCE 4

extern int __kmpc_global_thread_num(void *);

static int team_size;
static int max_gtid;
static int bad_team, bad_outside;

static void *work(void *arg) {
  (void)arg;
  if (omp_get_thread_num() != 0 || omp_get_level() != 0) __atomic_fetch_add(&bad_outside, 1, __ATOMIC_RELAXED);
  int g = __kmpc_global_thread_num(NULL);
  int seen = __atomic_load_n(&max_gtid, __ATOMIC_RELAXED);
  while (g > seen && !__atomic_compare_exchange_n(&max_gtid, &seen, g, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  int count = 0;
  unsigned long mask = 0;
#pragma omp parallel num_threads(team_size) shared(count, mask)
  {
    __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_or(&mask, 1ul << omp_get_thread_num(), __ATOMIC_RELAXED);
  }
  if (count != team_size || mask != (1ul << team_size) - 1) __atomic_fetch_add(&bad_team, 1, __ATOMIC_RELAXED);
  return NULL;
}

int main(void) {
  team_size = omp_get_max_threads() < 4 ? omp_get_max_threads() : 4;
  for (int i = 0; i < THREADS; i += AT_ONCE) {
    pthread_t t[AT_ONCE];
    for (int k = 0; k < AT_ONCE; k++)
      if (pthread_create(&t[k], NULL, work, NULL) != 0) {
        fprintf(stderr, "FAIL: pthread_create\n");
        return 1;
      }
    for (int k = 0; k < AT_ONCE; k++) pthread_join(t[k], NULL);
  }
  CHECK_EQ("regions without their full team", bad_team, 0);
  CHECK_EQ("pthreads not at level 0 as thread 0", bad_outside, 0);
  /* alive at once: the main thread, AT_ONCE initial threads and their workers (kept in the
     pool between regions, handed from ended threads to new ones); a little slack for a
     runtime's own helpers */
  int bound = 1 + AT_ONCE * team_size + 16;
  if (max_gtid > bound) CHECK_EQ("largest global thread id (ids are not reused)", max_gtid, bound);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  if (ru.ru_maxrss > 64 * 1024) CHECK_EQ("peak resident set, KB (more than 64 MB)", ru.ru_maxrss, 64 * 1024);
  printf("pthreads_many: %d threads, largest gtid %d, peak RSS %ld KB\n", THREADS, max_gtid, ru.ru_maxrss);
  return failures != 0;
}
