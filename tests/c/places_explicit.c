// places_explicit.c - explicit place list OMP_PLACES={1},{0} (deliberately
// not in CPU order) with OMP_PROC_BIND=close:
//  * omp_get_num_places() == 2, place 0 == {1}, place 1 == {0}
//  * the primary thread is on place 0 (CPU 1); close distribution: thread i
//    on place i for T <= 2, places non-decreasing and balanced for T > 2;
//    each thread runs on (and is masked to) its place's CPU
// Needs CPUs 0 and 1 in the affinity mask; otherwise prints skip and passes.
// oxiomp-test: env=OMP_PLACES={1},{0}
// oxiomp-test: env=OMP_PROC_BIND=close
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

#define MAXT 256
static const int place_cpu[2] = {1, 0};
static int thr_place[MAXT];

static int mask_is_only(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0) return 0;
  return CPU_COUNT(&s) == 1 && CPU_ISSET(cpu, &s);
}

int main(void) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || sched_getaffinity(0, sizeof mask, &mask) != 0 ||
      !CPU_ISSET(0, &mask) || !CPU_ISSET(1, &mask)) {
    printf("skip places_explicit (needs CPUs 0 and 1)\n");
    return 0;
  }
  CHECK_EQ("omp_get_num_places()", omp_get_num_places(), 2);
  CHECK_EQ("omp_get_place_num_procs(0)", omp_get_place_num_procs(0), 1);
  CHECK_EQ("omp_get_place_num_procs(1)", omp_get_place_num_procs(1), 1);
  int id = -1;
  omp_get_place_proc_ids(0, &id);
  CHECK_EQ("place 0 CPU", id, 1);
  id = -1;
  omp_get_place_proc_ids(1, &id);
  CHECK_EQ("place 1 CPU", id, 0);
  CHECK_EQ("initial thread omp_get_place_num()", omp_get_place_num(), 0);

  int sizes[] = {1, 2, 3, 4, omp_get_max_threads()};
  for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int T = sizes[k];
    if (T > MAXT) continue;
    char buf[160];
    int nt = -1;
    for (int i = 0; i < MAXT; i++) thr_place[i] = -2;
#pragma omp parallel num_threads(T)
    {
      int t = omp_get_thread_num();
      int p = omp_get_place_num();
      if (t == 0) nt = omp_get_num_threads();
      if (t < MAXT) thr_place[t] = p;
      if (p == 0 || p == 1) {
        CHECK_EQ("thread sched_getcpu() == CPU of its place", sched_getcpu(), place_cpu[p]);
        CHECK("thread affinity mask == {CPU of its place}", mask_is_only(place_cpu[p]));
      }
    }
    snprintf(buf, sizeof buf, "num_threads(%d): team size", T);
    CHECK_EQ(buf, nt, T);
    int count[2] = {0, 0};
    for (int t = 0; t < T && t < nt; t++) {
      int p = thr_place[t];
      snprintf(buf, sizeof buf, "T=%d: thread %d place in range", T, t);
      CHECK(buf, p == 0 || p == 1);
      if (p != 0 && p != 1) continue;
      count[p]++;
      if (T <= 2) {
        snprintf(buf, sizeof buf, "T=%d: thread %d place (close)", T, t);
        CHECK_EQ(buf, p, t);
      } else if (t > 0) {
        snprintf(buf, sizeof buf, "T=%d: thread %d place non-decreasing (close)", T, t);
        CHECK(buf, p >= thr_place[t - 1]);
      }
    }
    if (T > 2)
      for (int p = 0; p < 2; p++) {
        snprintf(buf, sizeof buf, "T=%d: threads on place %d balanced", T, p);
        CHECK(buf, count[p] == T / 2 || count[p] == (T + 1) / 2);
      }
  }
  CHECK_EQ("initial thread on CPU 1 after regions", sched_getcpu(), 1);

  if (failures) {
    fprintf(stderr, "places_explicit: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok places_explicit\n");
  return 0;
}
