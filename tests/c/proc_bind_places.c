// proc_bind_places.c - proc_bind clauses with real places (OMP_PLACES=threads,
// OMP_PROC_BIND=close), P = number of places, primary on place 0:
//  * proc_bind(close):  T <= P -> thread i on place i; T > P -> places
//    non-decreasing, floor/ceil(T/P) threads per place; partition == P places
//  * proc_bind(spread): T <= P -> distinct, increasing places, thread 0 on
//    place 0, each thread's partition has floor/ceil(P/T) places; T > P ->
//    non-decreasing, balanced, partition of 1 place
//  * proc_bind(master): every thread on the primary's place (0)
//  * proc_bind(primary): team size / results only. clang-19 passes 5 for
//    primary, which libomp 19 reads as proc_bind_intel (threads keep their
//    previous binding), so the placement cannot be checked against libomp.
//  * every bound thread runs on (and is masked to) its place's CPU
//  * omp_get_proc_bind() inside == omp_proc_bind_close (bind-var unchanged)
// oxiomp-test: env=OMP_PLACES=threads
// oxiomp-test: env=OMP_PROC_BIND=close
// oxiomp-test: gcc-reference=skip
// (libgomp answers omp_get_proc_bind differently in nested teams.)
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAXP 1024
#define MAXT 64
static int P;
static int place_cpu[MAXP];
static int pl[MAXT], part[MAXT], bind_in[MAXT];

static int mask_is_only(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0) return 0;
  return CPU_COUNT(&s) == 1 && CPU_ISSET(cpu, &s);
}

static void record(void) {
  int t = omp_get_thread_num();
  int p = omp_get_place_num();
  if (t < MAXT) {
    pl[t] = p;
    part[t] = omp_get_partition_num_places();
    bind_in[t] = omp_get_proc_bind();
  }
  if (p >= 0 && p < P) {
    CHECK_EQ("sched_getcpu() == CPU of the thread's place", sched_getcpu(), place_cpu[p]);
    CHECK("affinity mask == {CPU of the thread's place}", mask_is_only(place_cpu[p]));
  }
}

static void reset(void) {
  for (int i = 0; i < MAXT; i++) pl[i] = part[i] = bind_in[i] = -9;
}

static void check_common(const char *name, int T, int nt) {
  char buf[160];
  snprintf(buf, sizeof buf, "%s T=%d: team size", name, T);
  CHECK_EQ(buf, nt, T);
  for (int t = 0; t < T; t++) {
    snprintf(buf, sizeof buf, "%s T=%d: thread %d omp_get_proc_bind()", name, T, t);
    CHECK_EQ(buf, bind_in[t], omp_proc_bind_close);
  }
}

static void check_balanced(const char *name, int T) {
  char buf[160];
  int count[MAXP];
  memset(count, 0, sizeof count);
  for (int t = 0; t < T; t++) {
    snprintf(buf, sizeof buf, "%s T=%d: thread %d place in range", name, T, t);
    CHECK(buf, pl[t] >= 0 && pl[t] < P);
    if (pl[t] < 0 || pl[t] >= P) return;
    count[pl[t]]++;
    if (t > 0) {
      snprintf(buf, sizeof buf, "%s T=%d: thread %d place non-decreasing", name, T, t);
      CHECK(buf, pl[t] >= pl[t - 1]);
    }
  }
  for (int p = 0; p < P; p++) {
    snprintf(buf, sizeof buf, "%s T=%d: threads on place %d", name, T, p);
    CHECK(buf, count[p] == T / P || count[p] == (T + P - 1) / P);
  }
}

int main(void) {
  P = omp_get_num_places();
  if (P < 1 || P > MAXP) {
    fprintf(stderr, "FAIL: omp_get_num_places() (got %d, expected 1..%d)\n", P, MAXP);
    return 1;
  }
  for (int p = 0; p < P; p++) {
    int ids[8] = {-1};
    CHECK_EQ("omp_get_place_num_procs(p)", omp_get_place_num_procs(p), 1);
    omp_get_place_proc_ids(p, ids);
    place_cpu[p] = ids[0];
  }
  CHECK_EQ("omp_get_proc_bind() outside", omp_get_proc_bind(), omp_proc_bind_close);
  CHECK_EQ("initial thread place", omp_get_place_num(), 0);

  char buf[160];
  for (int T = 1; T <= 2 * P + 1 && T <= MAXT; T++) {
    int nt;
    /* close */
    reset();
    nt = -1;
#pragma omp parallel num_threads(T) proc_bind(close)
    {
      record();
      if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
    }
    check_common("close", T, nt);
    if (T <= P) {
      for (int t = 0; t < T; t++) {
        snprintf(buf, sizeof buf, "close T=%d: thread %d place", T, t);
        CHECK_EQ(buf, pl[t], t);
      }
    } else {
      check_balanced("close", T);
    }
    for (int t = 0; t < T; t++) CHECK_EQ("close: partition size", part[t], P);

    /* spread */
    reset();
    nt = -1;
#pragma omp parallel num_threads(T) proc_bind(spread)
    {
      record();
      if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
    }
    check_common("spread", T, nt);
    if (T <= P) {
      CHECK_EQ("spread: thread 0 place", pl[0], 0);
      for (int t = 0; t < T; t++) {
        snprintf(buf, sizeof buf, "spread T=%d: thread %d place in range", T, t);
        CHECK(buf, pl[t] >= 0 && pl[t] < P);
        if (t > 0) {
          snprintf(buf, sizeof buf, "spread T=%d: thread %d place increasing", T, t);
          CHECK(buf, pl[t] > pl[t - 1]);
        }
        snprintf(buf, sizeof buf, "spread T=%d: thread %d partition size", T, t);
        CHECK(buf, part[t] == P / T || part[t] == (P + T - 1) / T);
      }
    } else {
      check_balanced("spread", T);
      for (int t = 0; t < T; t++) CHECK_EQ("spread T>P: partition size", part[t], 1);
    }

    /* master: all on the primary's place */
    reset();
    nt = -1;
#pragma omp parallel num_threads(T) proc_bind(master)
    {
      record();
      if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
    }
    check_common("master", T, nt);
    for (int t = 0; t < T; t++) {
      snprintf(buf, sizeof buf, "master T=%d: thread %d place", T, t);
      CHECK_EQ(buf, pl[t], 0);
    }

    /* primary: only the team (see header comment) */
    {
      long sum = 0;
      nt = -1;
#pragma omp parallel num_threads(T) proc_bind(primary)
      {
        __atomic_fetch_add(&sum, (long)omp_get_thread_num() + 1, __ATOMIC_SEQ_CST);
        if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
      }
      snprintf(buf, sizeof buf, "primary T=%d: team size", T);
      CHECK_EQ(buf, nt, T);
      snprintf(buf, sizeof buf, "primary T=%d: sum of thread ids", T);
      CHECK_EQ(buf, sum, (long)T * (T + 1) / 2);
    }
  }
  CHECK_EQ("initial thread still on place 0's CPU", sched_getcpu(), place_cpu[0]);

  if (failures) {
    fprintf(stderr, "proc_bind_places: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok proc_bind_places\n");
  return 0;
}
