// queries.c - omp_* query/set routines and ICV scoping:
//  omp_get_max_threads (== OMP_NUM_THREADS when set), omp_get_num_procs (==
//  CPU_COUNT of the affinity mask), omp_get_thread_limit, omp_get/set_dynamic,
//  omp_get/set_schedule round trips, omp_get_wtime/omp_get_wtick,
//  omp_get_supported_active_levels, omp_get/set_max_active_levels,
//  omp_is_initial_device, omp_get_num_devices, omp_get/set_default_device,
//  omp_get_num_teams/omp_get_team_num outside teams, omp_get_cancellation,
//  omp_get_max_task_priority, omp_control_tool (no tool: notool); ICV scoping: omp_set_num_threads /
//  omp_set_dynamic / omp_set_schedule inside a region only affect the calling
//  implicit task (and its nested regions), not siblings or the initial task.
#define _GNU_SOURCE
// oxiomp-test: bound=skip
// oxiomp-test: gcc=skip: omp_control_tool's constants, which gcc 12's omp.h lacks
// (omp_get_num_procs is the process's CPUs; a bound thread's own CPU set is one place.)
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static int env_nthreads(void) {
  const char *s = getenv("OMP_NUM_THREADS");
  if (!s || !*s) return -1;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v <= 0) return -1;
  return (int)v;
}

static void check_sched(omp_sched_t set_kind, int set_chunk, omp_sched_t exp_kind,
                        int exp_chunk, int check_chunk) {
  char buf[160];
  omp_sched_t k;
  int c;
  omp_set_schedule(set_kind, set_chunk);
  omp_get_schedule(&k, &c);
  snprintf(buf, sizeof buf, "omp_get_schedule kind after set(%#x,%d)", (unsigned)set_kind,
           set_chunk);
  CHECK_EQ(buf, (unsigned)k & ~(unsigned)omp_sched_monotonic,
           (unsigned)exp_kind & ~(unsigned)omp_sched_monotonic);
  if (check_chunk) {
    snprintf(buf, sizeof buf, "omp_get_schedule chunk after set(%#x,%d)", (unsigned)set_kind,
             set_chunk);
    CHECK_EQ(buf, c, exp_chunk);
  }
}

int main(void) {
  /* thread counts */
  int maxt = omp_get_max_threads();
  int envn = env_nthreads();
  CHECK("omp_get_max_threads() >= 1", maxt >= 1);
  if (envn > 0) CHECK_EQ("omp_get_max_threads() == OMP_NUM_THREADS", maxt, envn);

  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    CHECK_EQ("omp_get_num_procs() == CPU_COUNT(affinity mask)", omp_get_num_procs(),
             CPU_COUNT(&set));
  }
  CHECK("omp_get_num_procs() >= 1", omp_get_num_procs() >= 1);
  if (envn <= 0 && !getenv("OMP_THREAD_LIMIT"))
    CHECK_EQ("default omp_get_max_threads() == omp_get_num_procs()", maxt, omp_get_num_procs());

  int tl = omp_get_thread_limit();
  CHECK("omp_get_thread_limit() >= 1", tl >= 1);
  CHECK("omp_get_thread_limit() >= omp_get_max_threads()", tl >= maxt);

  /* dynamic */
  if (!getenv("OMP_DYNAMIC")) CHECK_EQ("default omp_get_dynamic()", omp_get_dynamic(), 0);
  omp_set_dynamic(1);
  CHECK_EQ("omp_get_dynamic() after set(1)", omp_get_dynamic(), 1);
  {
    int nt = -1;
#pragma omp parallel
    if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
    CHECK("dynamic region size in [1, max_threads]", nt >= 1 && nt <= maxt);
  }
  omp_set_dynamic(0);
  CHECK_EQ("omp_get_dynamic() after set(0)", omp_get_dynamic(), 0);

  /* schedule */
  {
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    unsigned base = (unsigned)k & ~(unsigned)omp_sched_monotonic;
    CHECK("default schedule kind valid", base >= 1 && base <= 4);
  }
  check_sched(omp_sched_static, 0, omp_sched_static, 0, 1);
  check_sched(omp_sched_dynamic, 3, omp_sched_dynamic, 3, 1);
  check_sched(omp_sched_guided, 2, omp_sched_guided, 2, 1);
  check_sched(omp_sched_auto, 0, omp_sched_auto, 0, 0);
  check_sched(omp_sched_static, 4, omp_sched_static, 4, 1);
  check_sched(omp_sched_dynamic, 1, omp_sched_dynamic, 1, 1);
  {
    omp_sched_t k;
    int c;
    omp_set_schedule((omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 5);
    omp_get_schedule(&k, &c);
    CHECK_EQ("monotonic:dynamic,5 kind", (unsigned)k,
             (unsigned)(omp_sched_dynamic | omp_sched_monotonic));
    CHECK_EQ("monotonic:dynamic,5 chunk", c, 5);
  }
  omp_set_schedule(omp_sched_static, 0);

  /* timers */
  {
    double t0 = omp_get_wtime(), prev = t0;
    int backwards = 0;
    for (int i = 0; i < 10000; i++) {
      double t = omp_get_wtime();
      if (t < prev) backwards++;
      prev = t;
    }
    CHECK_EQ("omp_get_wtime went backwards", backwards, 0);
    CHECK("omp_get_wtime() > 0", t0 > 0);
    double tick = omp_get_wtick();
    CHECK("omp_get_wtick() > 0", tick > 0);
    CHECK("omp_get_wtick() < 1", tick < 1);
  }

  /* levels */
  CHECK("omp_get_supported_active_levels() >= 1", omp_get_supported_active_levels() >= 1);
  int mal0 = omp_get_max_active_levels();
  CHECK("omp_get_max_active_levels() >= 1", mal0 >= 1);
  CHECK("max_active_levels <= supported", mal0 <= omp_get_supported_active_levels());
  omp_set_max_active_levels(4);
  CHECK_EQ("omp_get_max_active_levels() after set(4)", omp_get_max_active_levels(), 4);
  omp_set_max_active_levels(1);
  CHECK_EQ("omp_get_max_active_levels() after set(1)", omp_get_max_active_levels(), 1);
  omp_set_max_active_levels(mal0);
  CHECK_EQ("omp_get_level() outside", omp_get_level(), 0);
  CHECK_EQ("omp_get_active_level() outside", omp_get_active_level(), 0);

  /* devices and teams */
  CHECK_EQ("omp_is_initial_device()", omp_is_initial_device(), 1);
  int ndev = omp_get_num_devices();
  CHECK("omp_get_num_devices() >= 0", ndev >= 0);
  int dd = omp_get_default_device();
  CHECK("omp_get_default_device() >= 0", dd >= 0);
  omp_set_default_device(2);
  CHECK_EQ("omp_get_default_device() after set(2)", omp_get_default_device(), 2);
  omp_set_default_device(dd);
  CHECK_EQ("omp_get_default_device() after restore", omp_get_default_device(), dd);
  CHECK_EQ("omp_get_num_teams() outside teams", omp_get_num_teams(), 1);
  CHECK_EQ("omp_get_team_num() outside teams", omp_get_team_num(), 0);

  if (!getenv("OMP_CANCELLATION"))
    CHECK_EQ("omp_get_cancellation() default", omp_get_cancellation(), 0);
  if (!getenv("OMP_MAX_TASK_PRIORITY"))
    CHECK_EQ("omp_get_max_task_priority() default", omp_get_max_task_priority(), 0);

  /* ICV inheritance into a region */
  {
    int bad = 0;
    omp_set_schedule(omp_sched_guided, 7);
#pragma omp parallel
    {
      omp_sched_t k;
      int c;
      omp_get_schedule(&k, &c);
      if (((unsigned)k & ~(unsigned)omp_sched_monotonic) != omp_sched_guided || c != 7)
        __atomic_fetch_add(&bad, 1, __ATOMIC_SEQ_CST);
      if (omp_get_max_threads() != maxt) __atomic_fetch_add(&bad, 1, __ATOMIC_SEQ_CST);
      if (omp_get_dynamic() != 0) __atomic_fetch_add(&bad, 1, __ATOMIC_SEQ_CST);
    }
    CHECK_EQ("ICVs inherited by implicit tasks", bad, 0);
    omp_set_schedule(omp_sched_static, 0);
  }

  /* ICV scoping: per implicit task */
  omp_set_max_active_levels(2);
  {
    int inner_size[2] = {-1, -1}, inner_max[2] = {-1, -1};
    int max_after_set[2] = {-1, -1}, dyn_seen[2] = {-1, -1};
    int sched_chunk[2] = {-1, -1}, outer_n = -1;
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num();
      if (t == 0) {
        outer_n = omp_get_num_threads();
        omp_set_num_threads(3);
        omp_set_dynamic(1);
        omp_set_schedule(omp_sched_dynamic, 11);
      }
#pragma omp barrier
      omp_sched_t k;
      int c;
      omp_get_schedule(&k, &c);
      sched_chunk[t] = c;
      max_after_set[t] = omp_get_max_threads();
      dyn_seen[t] = omp_get_dynamic();
      if (t == 0) omp_set_dynamic(0); /* exact team size for the nested region */
#pragma omp parallel
      {
        if (omp_get_thread_num() == 0) {
          inner_size[t] = omp_get_num_threads();
          inner_max[t] = omp_get_max_threads();
        }
      }
    }
    CHECK_EQ("scoping: outer team size", outer_n, 2);
    CHECK_EQ("scoping: thread 0 omp_get_max_threads() after its set(3)", max_after_set[0], 3);
    CHECK_EQ("scoping: thread 1 omp_get_max_threads() unaffected", max_after_set[1], maxt);
    CHECK_EQ("scoping: thread 0 omp_get_dynamic() after its set(1)", dyn_seen[0], 1);
    CHECK_EQ("scoping: thread 1 omp_get_dynamic() unaffected", dyn_seen[1], 0);
    CHECK_EQ("scoping: thread 0 schedule chunk after its set", sched_chunk[0], 11);
    CHECK_EQ("scoping: thread 1 schedule chunk unaffected", sched_chunk[1], 0);
    CHECK_EQ("scoping: thread 0 nested region size", inner_size[0], 3);
    CHECK_EQ("scoping: thread 1 nested region size", inner_size[1], maxt);
    CHECK_EQ("scoping: thread 0 nested omp_get_max_threads()", inner_max[0], 3);
    CHECK_EQ("scoping: initial task omp_get_max_threads() unaffected", omp_get_max_threads(),
             maxt);
    CHECK_EQ("scoping: initial task omp_get_dynamic() unaffected", omp_get_dynamic(), 0);
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    CHECK_EQ("scoping: initial task schedule unaffected",
             (unsigned)k & ~(unsigned)omp_sched_monotonic, omp_sched_static);
    int nt = -1;
#pragma omp parallel
    if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
    CHECK_EQ("scoping: next top-level region size", nt, maxt);
  }
  omp_set_max_active_levels(mal0);

  CHECK_EQ("omp_control_tool without a tool",
           omp_control_tool(omp_control_tool_flush, 0, NULL), omp_control_tool_notool);
  if (failures) {
    fprintf(stderr, "queries: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok queries\n");
  return 0;
}
