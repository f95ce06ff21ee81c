// places.c - OMP_PLACES=threads, OMP_PROC_BIND=close:
//  * omp_get_num_places() == number of CPUs in the affinity mask
//  * every place has one processor; over all places omp_get_place_proc_ids()
//    lists each CPU of the mask exactly once
//  * inside regions (several team sizes) each thread's omp_get_place_num() is
//    in range, its sched_getcpu() and affinity mask equal that place's CPU;
//    the primary is on place 0; close policy: T <= P -> thread i on place i,
//    T > P -> place non-decreasing with thread num, floor/ceil(T/P) per place
// oxiomp-test: env=OMP_PLACES=threads
// oxiomp-test: env=OMP_PROC_BIND=close
// oxiomp-test: gcc-reference=skip
// (libgomp's places follow the machine, not the process's CPU mask.)
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXP 1024
#define MAXT 256
static int place_cpu[MAXP];
static int thr_place[MAXT];

static int mask_is_only(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0) return 0;
  return CPU_COUNT(&s) == 1 && CPU_ISSET(cpu, &s);
}

static void run_team(int T, int P) {
  char buf[160];
  for (int i = 0; i < MAXT; i++) thr_place[i] = -2;
  int nt = -1;
#pragma omp parallel num_threads(T)
  {
    int t = omp_get_thread_num();
    int p = omp_get_place_num();
    if (t == 0) nt = omp_get_num_threads();
    if (t < MAXT) thr_place[t] = p;
    if (p >= 0 && p < P && p < MAXP) {
      CHECK_EQ("thread sched_getcpu() == CPU of its place", sched_getcpu(), place_cpu[p]);
      CHECK("thread affinity mask == {CPU of its place}", mask_is_only(place_cpu[p]));
    }
  }
  snprintf(buf, sizeof buf, "num_threads(%d): team size", T);
  CHECK_EQ(buf, nt, T);
  if (nt != T) return;
  int count[MAXP];
  memset(count, 0, sizeof count);
  for (int t = 0; t < T && t < MAXT; t++) {
    int p = thr_place[t];
    snprintf(buf, sizeof buf, "T=%d: thread %d place in range", T, t);
    CHECK(buf, p >= 0 && p < P);
    if (p < 0 || p >= P) continue;
    count[p]++;
    if (T <= P) {
      snprintf(buf, sizeof buf, "T=%d <= P: close places thread %d on place", T, t);
      CHECK_EQ(buf, p, t);
    } else if (t > 0) {
      snprintf(buf, sizeof buf, "T=%d > P: thread %d place non-decreasing", T, t);
      CHECK(buf, p >= thr_place[t - 1]);
    }
  }
  if (T > P)
    for (int p = 0; p < P; p++) {
      snprintf(buf, sizeof buf, "T=%d > P=%d: threads on place %d", T, P, p);
      CHECK(buf, count[p] == T / P || count[p] == (T + P - 1) / P);
    }
}

int main(void) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
    perror("sched_getaffinity");
    return 1;
  }
  int ncpu = CPU_COUNT(&mask);
  int P = omp_get_num_places();
  CHECK_EQ("omp_get_num_places() == CPUs in mask", P, ncpu);
  CHECK_EQ("omp_get_proc_bind()", omp_get_proc_bind(), omp_proc_bind_close);
  if (P < 1 || P > MAXP) goto out;

  int seen[CPU_SETSIZE];
  memset(seen, 0, sizeof seen);
  for (int p = 0; p < P; p++) {
    CHECK_EQ("omp_get_place_num_procs(p)", omp_get_place_num_procs(p), 1);
    int ids[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    omp_get_place_proc_ids(p, ids);
    place_cpu[p] = ids[0];
    CHECK("place CPU id is in the affinity mask",
          ids[0] >= 0 && ids[0] < CPU_SETSIZE && CPU_ISSET(ids[0], &mask));
    if (ids[0] >= 0 && ids[0] < CPU_SETSIZE) seen[ids[0]]++;
  }
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &mask)) CHECK_EQ("CPU of mask listed in exactly one place", seen[c], 1);

  /* the initial thread is bound to the first place */
  CHECK_EQ("initial thread omp_get_place_num()", omp_get_place_num(), 0);
  CHECK_EQ("initial thread omp_get_partition_num_places()", omp_get_partition_num_places(), P);

  int sizes[] = {1, 2, 3, 4, P, P + 1, 2 * P, omp_get_max_threads()};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (sizes[i] >= 1 && sizes[i] <= MAXT) run_team(sizes[i], P);
  CHECK_EQ("initial thread still on place 0's CPU", sched_getcpu(), place_cpu[0]);

out:
  if (failures) {
    fprintf(stderr, "places: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok places\n");
  return 0;
}
