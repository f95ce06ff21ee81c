// fork_in_region.c - a thread that forks inside a parallel region leaves a child whose only
// thread starts as the initial thread of a fresh runtime (as libomp's child does): level 0,
// thread 0 of a team of one, not in parallel, and its regions get full teams (they ran
// serialized, the child believing itself still inside the parent's region):
//  * forked by the primary thread, by a worker, from a nested region (two levels), and from
//    a region of one thread (serialized);
//  * forked while another thread of the team sits in a nested (serialized) region: the child's
//    workers start on the descriptors the parent's threads left, which must not keep what
//    those threads were in;
//  * in the child: the queries above, a region of 4 threads (each thread number once), a
//    region of the default size whose threads each run a nested region, a dynamic loop; the
//    child reports through its exit status.
// oxiomp-test: gcc=skip: gcc passes the program's spin flags into the nested region by value (copy-in, copy-out), so its handshake cannot complete (libgomp fails alike)
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int default_n;

static int child_checks(void) {
  CHECK_EQ("child: omp_get_level()", omp_get_level(), 0);
  CHECK_EQ("child: omp_get_active_level()", omp_get_active_level(), 0);
  CHECK_EQ("child: omp_get_num_threads()", omp_get_num_threads(), 1);
  CHECK_EQ("child: omp_get_thread_num()", omp_get_thread_num(), 0);
  CHECK_EQ("child: omp_in_parallel()", omp_in_parallel(), 0);
  int seen[4] = {0}, size = 0;
#pragma omp parallel num_threads(4)
  {
    __atomic_fetch_add(&seen[omp_get_thread_num() & 3], 1, __ATOMIC_RELAXED);
    if (omp_get_thread_num() == 0) size = omp_get_num_threads();
  }
  CHECK_EQ("child: team of 4", size, 4);
  for (int i = 0; i < 4; i++) CHECK_EQ("child: thread number seen once", seen[i], 1);
  int dsize = 0;
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) dsize = omp_get_num_threads();
  }
  CHECK_EQ("child: team of the default size", dsize, default_n);
  int nteam = default_n < 4 ? 4 : default_n, nested_ok = 0;
#pragma omp parallel num_threads(nteam)
  {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_level() == 2 && omp_get_num_threads() == 1 && omp_get_active_level() == 1)
        __atomic_fetch_add(&nested_ok, 1, __ATOMIC_RELAXED);
    }
  }
  CHECK_EQ("child: threads whose nested region ran serialized at level 2", nested_ok, nteam);
  long sum = 0;
#pragma omp parallel for schedule(dynamic, 3) reduction(+ : sum) num_threads(3)
  for (int i = 0; i < 1000; i++) sum += i;
  CHECK_EQ("child: dynamic loop", sum, 999L * 1000 / 2);
  return failures != 0;
}

/* Forks here (the caller is inside a region); returns the child's exit status. */
static int fork_and_check(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(child_checks());
  int status = -1;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void) {
  default_n = omp_get_max_threads();
  int by_primary = -1, by_worker = -1, nested = -1, serialized = -1;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) by_primary = fork_and_check();
#pragma omp barrier
    if (omp_get_thread_num() == omp_get_num_threads() - 1) by_worker = fork_and_check();
  }
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
  {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_level() == 2 && omp_get_thread_num() == 1 && omp_get_ancestor_thread_num(1) == 1)
        nested = fork_and_check();
    }
  }
  if (nested == -1) nested = 0; /* a team of one at the outer level: no thread 1 there */
  omp_set_max_active_levels(1);
  int beside_nested = -1;
  volatile int in_nested = 0, forked = 0;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_num_threads() == 2 && omp_get_thread_num() == 1) {
#pragma omp parallel num_threads(2)
      {
        in_nested = 1;
        while (!forked) sched_yield();
      }
    } else if (omp_get_thread_num() == 0) {
      while (omp_get_num_threads() == 2 && !in_nested) sched_yield();
      beside_nested = fork_and_check();
      forked = 1;
    }
  }
#pragma omp parallel num_threads(1)
  serialized = fork_and_check();
  CHECK_EQ("child forked by the primary thread", by_primary, 0);
  CHECK_EQ("child forked by a worker", by_worker, 0);
  CHECK_EQ("child forked in a nested region", nested, 0);
  CHECK_EQ("child forked in a serialized region", serialized, 0);
  CHECK_EQ("child forked while another thread was in a nested region", beside_nested, 0);
  /* the parent's own regions still work */
  int size = 0;
#pragma omp parallel num_threads(3)
  if (omp_get_thread_num() == 0) size = omp_get_num_threads();
  CHECK_EQ("parent after the forks: team of 3", size, 3);
  return failures != 0;
}
