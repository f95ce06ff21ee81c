// parallel_basic.c - basic parallel regions:
//  * omp_get_num_threads / omp_get_thread_num inside a region: team size and
//    distinct ids 0..n-1 (each thread sets its slot exactly once)
//  * the encountering thread becomes thread 0 of the team
//  * omp_in_parallel / omp_get_level outside and inside
//  * team size == OMP_NUM_THREADS (when set) == omp_get_max_threads()
//  * num_threads(3) clause, omp_set_num_threads(2)
//  * #pragma omp barrier (__kmpc_barrier): write-before / read-after phases
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* OMP_NUM_THREADS if it is a single plain positive integer, else -1 */
static int env_nthreads(void) {
  const char *s = getenv("OMP_NUM_THREADS");
  if (!s || !*s) return -1;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v <= 0) return -1;
  return (int)v;
}

#define MAXT 1024
static int slot[MAXT];
static int seen_nthreads[MAXT];
static long phase_buf[MAXT];
static _Thread_local int is_initial_thread = 0;

/* run one region, check team shape, return team size */
static int check_team(const char *label, int expected) {
  int n = -1;
  memset(slot, 0, sizeof slot);
  memset(seen_nthreads, 0, sizeof seen_nthreads);
  int bad_tid = 0, primary_not_zero = 0, zero_not_primary = 0;
  int not_in_parallel = 0, bad_level = 0;
#pragma omp parallel shared(n, bad_tid, primary_not_zero, zero_not_primary, not_in_parallel, bad_level)
  {
    int tid = omp_get_thread_num();
    int nt = omp_get_num_threads();
    if (tid < 0 || tid >= nt || tid >= MAXT) {
#pragma omp atomic
      bad_tid++;
    } else {
#pragma omp atomic
      slot[tid]++;
      seen_nthreads[tid] = nt;
    }
    if (is_initial_thread && tid != 0) {
#pragma omp atomic
      primary_not_zero++;
    }
    if (!is_initial_thread && tid == 0) {
#pragma omp atomic
      zero_not_primary++;
    }
    if (nt > 1 && !omp_in_parallel()) {
#pragma omp atomic
      not_in_parallel++;
    }
    if (omp_get_level() != 1) {
#pragma omp atomic
      bad_level++;
    }
    if (tid == 0) n = nt;
  }
  char buf[200];
  snprintf(buf, sizeof buf, "%s: thread ids out of range", label);
  CHECK_EQ(buf, bad_tid, 0);
  snprintf(buf, sizeof buf, "%s: encountering thread got tid != 0", label);
  CHECK_EQ(buf, primary_not_zero, 0);
  snprintf(buf, sizeof buf, "%s: tid 0 was not the encountering thread", label);
  CHECK_EQ(buf, zero_not_primary, 0);
  snprintf(buf, sizeof buf, "%s: omp_in_parallel()==0 inside active region", label);
  CHECK_EQ(buf, not_in_parallel, 0);
  snprintf(buf, sizeof buf, "%s: omp_get_level() inside region", label);
  CHECK_EQ(buf, bad_level, 0);
  if (expected > 0) {
    snprintf(buf, sizeof buf, "%s: team size", label);
    CHECK_EQ(buf, n, expected);
  }
  if (n < 1 || n > MAXT) {
    snprintf(buf, sizeof buf, "%s: team size in range", label);
    CHECK_EQ(buf, n, 1);
    return n;
  }
  for (int i = 0; i < MAXT; i++) {
    snprintf(buf, sizeof buf, "%s: slot[%d] set count", label, i);
    CHECK_EQ(buf, slot[i], i < n ? 1 : 0);
    if (i < n) {
      snprintf(buf, sizeof buf, "%s: omp_get_num_threads() seen by tid %d", label, i);
      CHECK_EQ(buf, seen_nthreads[i], n);
    }
  }
  return n;
}

int main(void) {
  is_initial_thread = 1;

  /* outside any region */
  CHECK_EQ("omp_in_parallel() outside", omp_in_parallel(), 0);
  CHECK_EQ("omp_get_num_threads() outside", omp_get_num_threads(), 1);
  CHECK_EQ("omp_get_thread_num() outside", omp_get_thread_num(), 0);
  CHECK_EQ("omp_get_level() outside", omp_get_level(), 0);

  int envn = env_nthreads();
  int maxt = omp_get_max_threads();
  if (envn > 0) CHECK_EQ("omp_get_max_threads() == OMP_NUM_THREADS", maxt, envn);
  int n = check_team("default region", maxt);
  if (envn > 0) CHECK_EQ("team size == OMP_NUM_THREADS", n, envn);

  CHECK_EQ("omp_in_parallel() after region", omp_in_parallel(), 0);
  CHECK_EQ("omp_get_level() after region", omp_get_level(), 0);

  /* num_threads clause */
  {
    int n3 = 0;
    memset(slot, 0, sizeof slot);
#pragma omp parallel num_threads(3)
    {
#pragma omp atomic
      slot[omp_get_thread_num()]++;
      if (omp_get_thread_num() == 0) n3 = omp_get_num_threads();
    }
    CHECK_EQ("num_threads(3) team size", n3, 3);
    for (int i = 0; i < 4; i++) CHECK_EQ("num_threads(3) slots", slot[i], i < 3 ? 1 : 0);
  }
  /* clause does not stick */
  check_team("region after num_threads(3)", maxt);

  /* omp_set_num_threads */
  omp_set_num_threads(2);
  CHECK_EQ("omp_get_max_threads() after omp_set_num_threads(2)", omp_get_max_threads(), 2);
  check_team("after omp_set_num_threads(2)", 2);
  check_team("second region after omp_set_num_threads(2)", 2);
  omp_set_num_threads(5);
  check_team("after omp_set_num_threads(5)", 5);
  omp_set_num_threads(maxt);
  check_team("after restoring num threads", maxt);

  /* barrier phases: write own slot, barrier, read all, barrier */
  {
    int bad = 0, nt = 0;
#pragma omp parallel shared(bad, nt)
    {
      int tid = omp_get_thread_num();
      int me = omp_get_num_threads();
#pragma omp single
      nt = me;
      for (long round = 1; round <= 200; round++) {
        phase_buf[tid] = round * 10000 + tid;
#pragma omp barrier
        for (int i = 0; i < me; i++)
          if (phase_buf[i] != round * 10000 + i) {
#pragma omp atomic
            bad++;
          }
#pragma omp barrier
      }
    }
    CHECK_EQ("barrier phase mismatches", bad, 0);
    CHECK_EQ("barrier region team size", nt, maxt);
  }

  /* barrier with a counter: nobody passes until all arrived */
  {
    int arrived = 0, early = 0;
#pragma omp parallel shared(arrived, early)
    {
      int me = omp_get_num_threads();
#pragma omp atomic
      arrived++;
#pragma omp barrier
      int a;
#pragma omp atomic read
      a = arrived;
      if (a != me) {
#pragma omp atomic
        early++;
      }
    }
    CHECK_EQ("threads passed barrier before all arrived", early, 0);
  }

  if (failures) {
    fprintf(stderr, "parallel_basic: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok parallel_basic\n");
  return 0;
}
