// task_completion.c - where explicit tasks are guaranteed to have completed:
//  * at the implicit barrier of `single`: every thread, right after the single,
//    sees all tasks the single body created (no taskwait) as done
//  * at an explicit `barrier`: each thread creates tasks, then barrier; after
//    it every thread sees all tasks of all threads as done
//  * at the end of a parallel region: tasks created under `master` with no
//    barrier after it; all have run when the region has ended. With 2 or more
//    threads also: master creates tied tasks A then B; A waits (taskyield +
//    sched_yield) for a flag only B sets. A tied task suspended in A may only
//    switch to descendants of A, so if A starts first another thread of the
//    team (waiting in the region-end barrier) must run B; if B starts first, A
//    sees the flag at once. This needs the other threads of the team to execute
//    tasks while waiting in the barrier.
//  * nested tasks: tasks create tasks that create tasks, never waiting; all
//    complete by a following barrier and by the region's end
//  * a task that starts a nested parallel region num_threads(2) (a team of 1
//    with max-active-levels 1 when the outer team has more than one thread, a
//    team of 2 with omp_set_max_active_levels(2) or an outer team of one);
//    tasks created in the nested region are done at its end; omp_get_level()
//    inside is one more than outside
//  * tasks created in a serialized `parallel if(0)` region complete at its end
//  * tasks created outside any parallel region (in main) complete at taskwait
//    and at the end of a taskgroup
// oxiomp-test: threads=1,2,4,16
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define REPS 40
#define NT 300
static int hits[NT];

static int count_done(int n) {
  int c = 0;
  for (int i = 0; i < n; i++) c += __atomic_load_n(&hits[i], __ATOMIC_RELAXED) == 1;
  return c;
}

/* a tree of tasks that never waits: fanout^depth leaves */
static int tree_nodes;
static void tree(int depth, int fanout) {
  __atomic_fetch_add(&tree_nodes, 1, __ATOMIC_RELAXED);
  if (depth == 0) return;
  for (int i = 0; i < fanout; i++) {
#pragma omp task firstprivate(depth, fanout)
    tree(depth - 1, fanout);
  }
}
static int tree_size(int depth, int fanout) {
  int s = 1, p = 1;
  for (int d = 0; d < depth; d++) {
    p *= fanout;
    s += p;
  }
  return s;
}

/* max_active: the max-active-levels in force. The nested region is active (a
   team of 2) when the outer region is inactive (a team of 1) or max_active >= 2 */
static void nested_region_in_tasks(int max_active) {
  char buf[200];
  int ntasks = 4, inner_tasks = 20, outer_nth = 0, expect_team = 0;
  int inner_done_ok = 0, level_ok = 0, team_ok = 0, inner_count = 0;
#pragma omp parallel shared(inner_done_ok, level_ok, team_ok, inner_count, outer_nth, expect_team)
  {
#pragma omp single
    {
      outer_nth = omp_get_num_threads();
      expect_team = outer_nth == 1 || max_active >= 2 ? 2 : 1;
    }
#pragma omp single
    for (int t = 0; t < ntasks; t++) {
#pragma omp task firstprivate(t) shared(inner_done_ok, level_ok, team_ok, inner_count)
      {
        int outer_level = omp_get_level();
        int cnt = 0;
#pragma omp parallel num_threads(2) shared(cnt)
        {
          if (omp_get_level() == outer_level + 1) __atomic_fetch_add(&level_ok, 1, __ATOMIC_RELAXED);
          if (omp_get_thread_num() == 0 && omp_get_num_threads() == expect_team)
            __atomic_fetch_add(&team_ok, 1, __ATOMIC_RELAXED);
#pragma omp single
          for (int i = 0; i < inner_tasks; i++) {
#pragma omp task shared(cnt)
            {
              __atomic_fetch_add(&cnt, 1, __ATOMIC_RELAXED);
              __atomic_fetch_add(&inner_count, 1, __ATOMIC_RELAXED);
            }
          }
        }
        /* the nested region has ended: its tasks are done */
        if (cnt == inner_tasks) __atomic_fetch_add(&inner_done_ok, 1, __ATOMIC_RELAXED);
      }
    }
  }
  (void)outer_nth;
  snprintf(buf, sizeof buf, "task with nested region (team %d): inner tasks done at the nested region's end",
           expect_team);
  CHECK_EQ(buf, inner_done_ok, ntasks);
  snprintf(buf, sizeof buf, "task with nested region (team %d): omp_get_level() inside = outer + 1", expect_team);
  CHECK_EQ(buf, level_ok, ntasks * expect_team);
  snprintf(buf, sizeof buf, "task with nested region: team size %d", expect_team);
  CHECK_EQ(buf, team_ok, ntasks);
  snprintf(buf, sizeof buf, "task with nested region (team %d): inner tasks run", expect_team);
  CHECK_EQ(buf, inner_count, ntasks * inner_tasks);
}

int main(void) {
  /* 1. implicit barrier of single */
  for (int rep = 0; rep < REPS; rep++) {
    int not_done = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel shared(not_done)
    {
#pragma omp single
      for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
      }
      /* after the single's barrier */
      if (count_done(NT) != NT) __atomic_fetch_add(&not_done, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("threads that saw unfinished tasks after single's implicit barrier", not_done, 0);
    CHECK_EQ("tasks run exactly once (single)", count_done(NT), NT);
    if (failures) break;
  }

  /* 2. explicit barrier; every thread creates tasks */
  for (int rep = 0; rep < REPS; rep++) {
    int not_done = 0, created = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel shared(not_done, created)
    {
      int me = omp_get_thread_num(), n = omp_get_num_threads();
      for (int i = me; i < NT; i += n) {
#pragma omp task firstprivate(i)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
      }
#pragma omp barrier
      if (count_done(NT) != NT) __atomic_fetch_add(&not_done, 1, __ATOMIC_RELAXED);
      /* second phase in the same region */
#pragma omp barrier
#pragma omp single
      memset(hits, 0, sizeof hits);
      for (int i = me; i < NT; i += n) {
#pragma omp task firstprivate(i)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
      }
#pragma omp barrier
      if (count_done(NT) != NT) __atomic_fetch_add(&not_done, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("threads that saw unfinished tasks after an explicit barrier", not_done, 0);
    if (failures) break;
  }

  /* 3. master creates tasks, no barrier after it: done by the region's end */
  for (int rep = 0; rep < REPS; rep++) {
    memset(hits, 0, sizeof hits);
#pragma omp parallel
    {
#pragma omp master
      for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
      }
    }
    CHECK_EQ("tasks created under master done at the region's end", count_done(NT), NT);
    if (failures) break;
  }
  for (int rep = 0; rep < REPS; rep++) {
    int nth = 0, flag = 0, a_done = 0, b_done = 0;
#pragma omp parallel shared(nth, flag, a_done, b_done)
    {
#pragma omp master
      {
        nth = omp_get_num_threads();
        if (nth >= 2) {
          /* A: tied, waits for B; only B's thread (another thread) can set the flag
             when A runs first (B is not A's descendant) */
#pragma omp task shared(flag, a_done)
          {
            while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) {
#pragma omp taskyield
              sched_yield();
            }
            a_done = 1;
          }
#pragma omp task shared(flag, b_done)
          {
            b_done = 1;
            __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
          }
        }
      }
    }
    if (nth >= 2) {
      CHECK_EQ("master tasks A (waits for B) done", a_done, 1);
      CHECK_EQ("master tasks B done", b_done, 1);
    }
    if (failures) break;
  }

  /* 4. nested tasks without taskwait */
  for (int rep = 0; rep < REPS; rep++) {
    int not_done = 0, expected = tree_size(4, 4), nth = 0;
    tree_nodes = 0;
#pragma omp parallel shared(not_done, nth)
    {
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
#pragma omp single nowait
      tree(4, 4);
#pragma omp barrier
      if (__atomic_load_n(&tree_nodes, __ATOMIC_RELAXED) != expected)
        __atomic_fetch_add(&not_done, 1, __ATOMIC_RELAXED);
#pragma omp barrier
      /* again, every thread starting a tree, checked only at the region's end */
      tree(3, 3);
    }
    CHECK_EQ("nested tasks: threads that saw unfinished descendants after a barrier", not_done, 0);
    /* nth threads each started a tree(3,3) */
    CHECK_EQ("nested tasks: all descendants done at the region's end", tree_nodes,
             expected + nth * tree_size(3, 3));
    if (failures) break;
  }

  /* 5. a task starts a nested parallel region */
  for (int rep = 0; rep < 10; rep++) {
    omp_set_max_active_levels(1);
    nested_region_in_tasks(1);
    omp_set_max_active_levels(2);
    nested_region_in_tasks(2);
    omp_set_max_active_levels(1);
    if (failures) break;
  }

  /* 6. serialized parallel region */
  for (int rep = 0; rep < REPS; rep++) {
    int size = 0, in_region = 0;
    memset(hits, 0, sizeof hits);
    tree_nodes = 0;
#pragma omp parallel if (0) shared(size, in_region)
    {
      size = omp_get_num_threads();
      for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
      }
      tree(3, 3);
#pragma omp taskwait
      in_region = count_done(NT);
    }
    CHECK_EQ("parallel if(0): team size", size, 1);
    CHECK_EQ("parallel if(0): tasks done at taskwait", in_region, NT);
    CHECK_EQ("parallel if(0): tasks done at the region's end", count_done(NT), NT);
    CHECK_EQ("parallel if(0): nested tasks done at the region's end", tree_nodes, tree_size(3, 3));
    if (failures) break;
  }

  /* 7. outside any parallel region */
  for (int rep = 0; rep < REPS; rep++) {
    memset(hits, 0, sizeof hits);
    for (int i = 0; i < NT; i++) {
#pragma omp task firstprivate(i)
      __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    }
#pragma omp taskwait
    CHECK_EQ("tasks in main: done at taskwait", count_done(NT), NT);
    tree_nodes = 0;
#pragma omp taskgroup
    tree(4, 3);
    CHECK_EQ("tasks in main: tree done at the end of a taskgroup", tree_nodes, tree_size(4, 3));
    /* a parallel region after tasks in the initial task still works */
    int cnt = 0;
#pragma omp parallel shared(cnt)
    {
#pragma omp task shared(cnt)
      __atomic_fetch_add(&cnt, 1, __ATOMIC_RELAXED);
    }
    int nth = 0;
#pragma omp parallel
#pragma omp master
    nth = omp_get_num_threads();
    CHECK_EQ("region after tasks in main: one task per thread", cnt, nth);
    if (failures) break;
  }

  if (failures) {
    fprintf(stderr, "task_completion: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_completion\n");
  return 0;
}
