// task_priority.c - the priority clause with OMP_MAX_TASK_PRIORITY=10 (clang
// sets flag 0x20 and stores the value in data2 of kmp_task_t):
//  * omp_get_max_task_priority() == 10 in the initial task, in every implicit
//    task of a region and in an explicit task; a copy of this program started
//    without OMP_MAX_TASK_PRIORITY sees 0 (the default)
//  * tasks with priorities 0..15 (above the maximum included), 100 and INT_MAX,
//    created by one producer and by every thread: each runs exactly once with
//    the right firstprivate values; priority is only a hint, so no order is
//    asserted
//  * priority combined with untied, final, if(0) (undeferred: done right after
//    the construct), a run-time priority expression, children of prioritised
//    tasks, and taskwait / taskgroup waiting for prioritised tasks
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: env=OMP_MAX_TASK_PRIORITY=10
// oxiomp-test: gcc-reference=skip
// (libgomp crashes on this program.)
#include <limits.h>
#include <omp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"

extern char **environ;

#define REPS 40
#define NP 600
static int hits[NP];
static long vals[NP];

static int prio_of(int i) {
  if (i % 50 == 7) return 100;
  if (i % 50 == 8) return INT_MAX;
  return i % 16;
}

/* started without OMP_MAX_TASK_PRIORITY: the default is 0 */
static int child_main(void) {
  CHECK_EQ("omp_get_max_task_priority() without OMP_MAX_TASK_PRIORITY", omp_get_max_task_priority(), 0);
  int ran = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task priority(5) shared(ran)
    ran = 1;
  }
  CHECK_EQ("priority(5) task with max priority 0 ran", ran, 1);
  return failures != 0;
}

static void run_default_child(const char *self) {
  /* the same environment minus OMP_MAX_TASK_PRIORITY */
  int n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 1, sizeof *env);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (strncmp(environ[i], "OMP_MAX_TASK_PRIORITY=", 22) != 0) env[k++] = environ[i];
  env[k] = NULL;
  char *argv[] = {(char *)self, "default-priority", NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, env);
  CHECK_EQ("posix_spawn of the default-priority child", rc, 0);
  if (rc == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK("default-priority child exited normally", WIFEXITED(status));
    CHECK_EQ("default-priority child exit status", WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  }
  free(env);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "default-priority") == 0) return child_main();

  CHECK_EQ("omp_get_max_task_priority() in the initial task", omp_get_max_task_priority(), 10);
  {
    int bad = 0;
#pragma omp parallel shared(bad)
    {
      if (omp_get_max_task_priority() != 10) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
#pragma omp task shared(bad)
      if (omp_get_max_task_priority() != 10) __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    }
    CHECK_EQ("omp_get_max_task_priority() != 10 in implicit or explicit tasks", bad, 0);
  }
  run_default_child(argv[0]);

  /* 1. one producer, many priorities */
  for (int rep = 0; rep < REPS; rep++) {
    memset(hits, 0, sizeof hits);
    memset(vals, 0, sizeof vals);
#pragma omp parallel
    {
#pragma omp single
      for (int i = 0; i < NP; i++) {
        long v = (long)i * i + rep;
#pragma omp task priority(prio_of(i)) firstprivate(i, v)
        {
          __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
          vals[i] = v;
        }
      }
    }
    int wrong = 0, badv = 0;
    for (int i = 0; i < NP; i++) {
      wrong += hits[i] != 1;
      badv += vals[i] != (long)i * i + rep;
    }
    CHECK_EQ("prioritised tasks (one producer) not run exactly once", wrong, 0);
    CHECK_EQ("prioritised tasks (one producer): wrong firstprivate values", badv, 0);
    if (failures) break;
  }

  /* 2. every thread creates prioritised tasks; barrier, then a few per thread
     with taskwait (libomp 19's taskwait in an implicit task is slow with priority
     tasks, about 0.5 ms a task, so that part is kept small) */
  for (int rep = 0; rep < REPS; rep++) {
    int bad_barrier = 0, bad_wait = 0;
    memset(hits, 0, sizeof hits);
#pragma omp parallel shared(bad_barrier, bad_wait)
    {
      int me = omp_get_thread_num(), n = omp_get_num_threads();
      for (int i = me; i < NP; i += n) {
#pragma omp task priority((i * 7) % 12) firstprivate(i)
        __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
      }
#pragma omp barrier
      for (int i = 0; i < NP; i++)
        if (__atomic_load_n(&hits[i], __ATOMIC_RELAXED) != 1) __atomic_fetch_add(&bad_barrier, 1, __ATOMIC_RELAXED);
      if (rep % 8 == 0) {
        int mine[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
#pragma omp task priority(k * 5) firstprivate(k) shared(mine)
          mine[k] = k + 1;
        }
#pragma omp taskwait
        for (int k = 0; k < 3; k++)
          if (mine[k] != k + 1) __atomic_fetch_add(&bad_wait, 1, __ATOMIC_RELAXED);
      }
    }
    int wrong = 0;
    for (int i = 0; i < NP; i++) wrong += hits[i] != 1;
    CHECK_EQ("prioritised tasks (every thread) not run exactly once", wrong, 0);
    CHECK_EQ("prioritised tasks not done at a barrier", bad_barrier, 0);
    CHECK_EQ("prioritised tasks not done at their creator's taskwait", bad_wait, 0);
    if (failures) break;
  }

  /* 3. priority with untied, final, if(0), children, taskgroup */
  for (int rep = 0; rep < REPS; rep++) {
    int untied_sum = 0, final_ok = 0, if0_bad = 0, child_sum = 0, tg_seen = -1;
#pragma omp parallel shared(untied_sum, final_ok, if0_bad, child_sum, tg_seen)
    {
#pragma omp single
      {
        for (int i = 0; i < 20; i++) {
#pragma omp task untied priority(i % 11) firstprivate(i) shared(untied_sum)
          {
            int local = i;
#pragma omp taskyield
            __atomic_fetch_add(&untied_sum, local, __ATOMIC_RELAXED);
          }
        }
#pragma omp task final(1) priority(9) shared(final_ok)
        {
          int x = 0;
#pragma omp task priority(3) shared(x)
          x = 1;
          /* the child of a final task is included: done already */
          if (x == 1 && omp_in_final()) final_ok = 1;
        }
        for (int i = 0; i < 20; i++) {
          int y = -1;
#pragma omp task if (0) priority(10) shared(y) firstprivate(i)
          y = i;
          if (y != i) if0_bad++;
        }
#pragma omp taskgroup
        {
          for (int i = 0; i < 10; i++) {
#pragma omp task priority(10 - i) firstprivate(i) shared(child_sum)
            {
              for (int c = 0; c < 3; c++) {
#pragma omp task priority(c + 8) firstprivate(i, c) shared(child_sum)
                __atomic_fetch_add(&child_sum, i * 10 + c, __ATOMIC_RELAXED);
              }
            }
          }
        }
        tg_seen = __atomic_load_n(&child_sum, __ATOMIC_RELAXED);
#pragma omp taskwait
      }
    }
    CHECK_EQ("untied prioritised tasks: sum", untied_sum, 190);
    CHECK_EQ("final prioritised task with an included child", final_ok, 1);
    CHECK_EQ("if(0) prioritised tasks: result not visible right after the construct", if0_bad, 0);
    /* sum over i<10, c<3 of 10i + c = 3*450 + 10*3 */
    CHECK_EQ("children of prioritised tasks, at the taskgroup's end", tg_seen, 1380);
    if (failures) break;
  }

  if (failures) {
    fprintf(stderr, "task_priority: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok task_priority\n");
  return 0;
}
