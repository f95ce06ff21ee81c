// task_taskgroup.c - taskgroup and taskwait (__kmpc_taskgroup,
// __kmpc_end_taskgroup, __kmpc_omp_taskwait):
//  * taskgroup waits for its child tasks and all their descendants: a tree of
//    tasks created without any taskwait is complete at the end of the taskgroup
//    (checked by the creating thread, the other threads executing the tasks)
//  * nested taskgroups: the inner one's tasks (and descendants) are done at the
//    inner end, the outer one's at the outer end; tasks created before the inner
//    taskgroup are not part of it (nothing asserted about them at the inner end)
//  * taskgroups inside tasks: several tasks each open a taskgroup around their
//    own subtree and check it is complete at its end, while other tasks run
//  * taskgroup in every thread of the team at the same time, in main outside any
//    parallel region, empty taskgroups, taskgroup inside a final task
//  * taskwait waits for the child tasks: each child's writes are visible after
//    it. A child's own child (grandchild) may still be running then: nothing is
//    asserted about it until a later taskgroup / barrier, where it must be done
// oxiomp-test: threads=1,2,4,16
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define REPS 40

static int tree_size(int depth, int fanout) {
  int s = 1, p = 1;
  for (int d = 0; d < depth; d++) {
    p *= fanout;
    s += p;
  }
  return s;
}

/* a tree of tasks that never waits; counts its nodes into *cnt */
static void tree(int depth, int fanout, int *cnt) {
  __atomic_fetch_add(cnt, 1, __ATOMIC_RELAXED);
  if (depth == 0) return;
  for (int i = 0; i < fanout; i++) {
#pragma omp task firstprivate(depth, fanout, cnt)
    tree(depth - 1, fanout, cnt);
  }
}

#define NSUB 8
#define NKIDS 16

int main(void) {
  /* 1. taskgroup waits for descendants */
  for (int rep = 0; rep < REPS; rep++) {
    int cnt = 0, seen = -1;
#pragma omp parallel shared(cnt, seen)
    {
#pragma omp single
      {
#pragma omp taskgroup
        {
          for (int i = 0; i < 4; i++) {
#pragma omp task shared(cnt)
            tree(4, 3, &cnt); /* the task is the tree's root */
          }
        }
        seen = __atomic_load_n(&cnt, __ATOMIC_RELAXED);
      }
    }
    CHECK_EQ("taskgroup: descendants done at its end", seen, 4 * tree_size(4, 3));
    if (failures) break;
  }

  /* 2. nested taskgroups */
  for (int rep = 0; rep < REPS; rep++) {
    int before = 0, inner = 0, after = 0, inner_seen = -1, outer_seen_inner = -1, outer_seen_all = -1,
        outer_seen_before = -1;
#pragma omp parallel shared(before, inner, after, inner_seen, outer_seen_inner, outer_seen_all, outer_seen_before)
    {
#pragma omp single
      {
#pragma omp taskgroup
        {
#pragma omp task shared(before)
          tree(3, 3, &before);
#pragma omp taskgroup
          {
#pragma omp task shared(inner)
            tree(3, 4, &inner);
#pragma omp taskgroup
            {
              /* innermost, empty */
            }
#pragma omp task shared(inner)
            tree(2, 4, &inner);
          }
          inner_seen = __atomic_load_n(&inner, __ATOMIC_RELAXED);
#pragma omp task shared(after)
          tree(3, 2, &after);
        }
        outer_seen_before = __atomic_load_n(&before, __ATOMIC_RELAXED);
        outer_seen_inner = __atomic_load_n(&inner, __ATOMIC_RELAXED);
        outer_seen_all = __atomic_load_n(&after, __ATOMIC_RELAXED);
      }
    }
    CHECK_EQ("nested taskgroups: inner tasks done at the inner end", inner_seen, tree_size(3, 4) + tree_size(2, 4));
    CHECK_EQ("nested taskgroups: inner tasks at the outer end", outer_seen_inner, tree_size(3, 4) + tree_size(2, 4));
    CHECK_EQ("nested taskgroups: tasks before the inner group, at the outer end", outer_seen_before,
             tree_size(3, 3));
    CHECK_EQ("nested taskgroups: tasks after the inner group, at the outer end", outer_seen_all, tree_size(3, 2));
    if (failures) break;
  }

  /* 3. taskgroups inside tasks */
  for (int rep = 0; rep < REPS; rep++) {
    int sub[NSUB], ok[NSUB], other = 0;
    memset(sub, 0, sizeof sub);
    memset(ok, 0, sizeof ok);
#pragma omp parallel shared(sub, ok, other)
    {
#pragma omp single
      for (int t = 0; t < NSUB; t++) {
        /* unrelated tasks, running at the same time */
#pragma omp task shared(other)
        tree(2, 3, &other);
#pragma omp task firstprivate(t) shared(sub, ok)
        {
#pragma omp taskgroup
          {
            for (int k = 0; k < 3; k++) {
#pragma omp task firstprivate(t) shared(sub)
              tree(3, 2, &sub[t]);
            }
          }
          ok[t] = __atomic_load_n(&sub[t], __ATOMIC_RELAXED);
        }
      }
    }
    int wrong = 0;
    for (int t = 0; t < NSUB; t++) wrong += ok[t] != 3 * tree_size(3, 2);
    CHECK_EQ("taskgroups in tasks: subtree not done at the end of the task's taskgroup", wrong, 0);
    CHECK_EQ("taskgroups in tasks: unrelated tasks done at the region's end", other, NSUB * tree_size(2, 3));
    if (failures) break;
  }

  /* 4. every thread in its own taskgroup at the same time */
  for (int rep = 0; rep < REPS; rep++) {
    int bad = 0, nth = 0;
#pragma omp parallel shared(bad, nth)
    {
      int mine = 0;
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
      for (int round = 0; round < 3; round++) {
        mine = 0;
#pragma omp taskgroup
        {
#pragma omp task shared(mine)
          tree(3, 3, &mine);
#pragma omp task shared(mine)
          tree(2, 2, &mine);
        }
        if (__atomic_load_n(&mine, __ATOMIC_RELAXED) != tree_size(3, 3) + tree_size(2, 2))
          __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
      }
    }
    CHECK_EQ("per-thread taskgroups: threads that saw unfinished tasks", bad, 0);
    if (failures) break;
  }

  /* 5. outside any parallel region; in a final task */
  for (int rep = 0; rep < REPS; rep++) {
    int cnt = 0, seen_final = -1, in_final = -1;
#pragma omp taskgroup
    {
#pragma omp task shared(cnt)
      tree(4, 3, &cnt);
    }
    CHECK_EQ("taskgroup in main: descendants done at its end", cnt, tree_size(4, 3));
#pragma omp taskgroup
    {
    }
    cnt = 0;
#pragma omp parallel shared(cnt, seen_final, in_final)
    {
#pragma omp single
#pragma omp task final(1) shared(cnt, seen_final, in_final)
      {
        in_final = omp_in_final();
#pragma omp taskgroup
        tree(3, 3, &cnt);
        seen_final = __atomic_load_n(&cnt, __ATOMIC_RELAXED);
      }
    }
    CHECK_EQ("final task: omp_in_final()", in_final, 1);
    CHECK_EQ("taskgroup in a final task: descendants done at its end", seen_final, tree_size(3, 3));
    if (failures) break;
  }

  /* 6. taskwait waits for children */
  for (int rep = 0; rep < REPS; rep++) {
    int child_done[NKIDS], grandchild_done[NKIDS], bad_child = 0, bad_grand = 0;
    memset(child_done, 0, sizeof child_done);
    memset(grandchild_done, 0, sizeof grandchild_done);
#pragma omp parallel shared(child_done, grandchild_done, bad_child, bad_grand)
    {
#pragma omp single
      {
#pragma omp taskgroup
        {
          for (int k = 0; k < NKIDS; k++) {
#pragma omp task firstprivate(k) shared(child_done, grandchild_done)
            {
#pragma omp task firstprivate(k) shared(grandchild_done)
              __atomic_store_n(&grandchild_done[k], 1, __ATOMIC_RELAXED);
              /* written after creating the grandchild: still visible at the parent's taskwait */
              child_done[k] = k + 1;
            }
          }
#pragma omp taskwait
          /* the children are complete; grandchildren may or may not be */
          for (int k = 0; k < NKIDS; k++)
            if (child_done[k] != k + 1) bad_child++;
        }
        /* end of taskgroup: grandchildren are complete */
        for (int k = 0; k < NKIDS; k++)
          if (__atomic_load_n(&grandchild_done[k], __ATOMIC_RELAXED) != 1) bad_grand++;

        /* taskwait in a task waits for that task's children */
        int res[NKIDS];
        memset(res, 0, sizeof res);
#pragma omp task shared(res, bad_child)
        {
          for (int k = 0; k < NKIDS; k++) {
#pragma omp task firstprivate(k) shared(res)
            res[k] = 3 * k + 1;
          }
#pragma omp taskwait
          for (int k = 0; k < NKIDS; k++)
            if (res[k] != 3 * k + 1) bad_child++;
        }
#pragma omp taskwait
        for (int k = 0; k < NKIDS; k++)
          if (res[k] != 3 * k + 1) bad_child++;
      }
    }
    CHECK_EQ("taskwait: children not complete after it", bad_child, 0);
    CHECK_EQ("taskgroup after taskwait: grandchildren not complete at its end", bad_grand, 0);
    if (failures) break;
  }

  if (failures) {
    fprintf(stderr, "task_taskgroup: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_taskgroup\n");
  return 0;
}
