// root_bind_lazy.c - with binding requested (OMP_PROC_BIND=close, OMP_PLACES=threads), an
// application thread is bound when it starts its first parallel region or asks for its place,
// not at its first call into the runtime (as libomp binds root threads):
//  * four pthreads call omp_set_num_threads (their first OpenMP call): their CPU sets stay the
//    process's whole set;
//  * one of them then runs a region: afterwards its CPU set is exactly the CPUs of the place
//    omp_get_place_num() names (oxiomp binds a root thread to the first place of its
//    partition, libomp to a place chosen by its gtid);
//  * another asks omp_get_place_num(): it is at a place then, and bound to it.
// The initial thread's own set is compared with the set the process started with.
// oxiomp-test: threads=2
// oxiomp-test: env=OMP_PROC_BIND=close
// oxiomp-test: env=OMP_PLACES=threads
// oxiomp-test: bound=skip
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"

static cpu_set_t full;
static pthread_barrier_t bar;

static int same_as(const cpu_set_t *a, const cpu_set_t *b) { return CPU_EQUAL(a, b); }

// Whether `s` is exactly the CPUs of the place the thread is bound to (there is one).
static int is_own_place(const cpu_set_t *s) {
  int place = omp_get_place_num();
  int n = place < 0 ? 0 : omp_get_place_num_procs(place);
  int ids[256];
  if (n <= 0 || n > 256) return 0;
  omp_get_place_proc_ids(place, ids);
  cpu_set_t p;
  CPU_ZERO(&p);
  for (int i = 0; i < n; i++) CPU_SET(ids[i], &p);
  return CPU_EQUAL(s, &p);
}

static int unbound_after_first_call, bound_after_region, bound_after_query, place_after_query = -1;

static void *root(void *arg) {
  long id = (long)arg;
  cpu_set_t s;
  omp_set_num_threads(2);
  pthread_getaffinity_np(pthread_self(), sizeof s, &s);
  if (same_as(&s, &full)) __atomic_fetch_add(&unbound_after_first_call, 1, __ATOMIC_SEQ_CST);
  pthread_barrier_wait(&bar);
  if (id == 1) {
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n += 1;
    pthread_getaffinity_np(pthread_self(), sizeof s, &s);
    bound_after_region = is_own_place(&s);
  } else if (id == 2) {
    place_after_query = omp_get_place_num();
    pthread_getaffinity_np(pthread_self(), sizeof s, &s);
    bound_after_query = is_own_place(&s);
  }
  return NULL;
}

int main(void) {
  pthread_getaffinity_np(pthread_self(), sizeof full, &full);
  if (CPU_COUNT(&full) < 2) return 0; // one CPU: bound and unbound sets are the same
  pthread_barrier_init(&bar, NULL, 4);
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, root, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  CHECK_EQ("threads whose set stayed whole after omp_set_num_threads", unbound_after_first_call, 4);
  CHECK_EQ("a thread that ran a region is bound to its place", bound_after_region, 1);
  CHECK(("omp_get_place_num() of a thread that asked is a place"), place_after_query >= 0);
  CHECK_EQ("a thread that asked for its place is bound to it", bound_after_query, 1);
  return failures != 0;
}
