// fork_child.c - a process that forks after its parallel regions (outside any
// region) has a child that uses OpenMP as a fresh process would: the parent's
// workers do not exist in the child, so the child's regions must start their
// own threads instead of waiting for the parent's (it hung: the child's fork
// handed the region to workers that were never coming).
//  * the parent runs regions (4 threads and the default), forks; the child runs
//    regions with 4 threads and the default size (every thread number seen
//    once), a dynamic loop and tasks, then forks a grandchild that does the same
//  * each child reports through its exit status; the parent checks it, then
//    runs regions again (its own workers are still there)
// oxiomp-test: gcc-reference=skip
// (libgomp hangs in a child forked after a parallel region.)
#include <omp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a)
  a = fib(n - 1);
#pragma omp task shared(b)
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

// Regions of 4 threads and of the default size, a dynamic loop, tasks.
static void use_openmp(const char *who) {
  int seen[4] = {0}, size = 0;
#pragma omp parallel num_threads(4)
  {
#pragma omp atomic
    seen[omp_get_thread_num()]++;
#pragma omp single
    size = omp_get_num_threads();
  }
  CHECK_EQ(who, size, 4);
  for (int i = 0; i < 4; i++) CHECK_EQ(who, seen[i], 1);
  int nmax = omp_get_max_threads(), count = 0;
#pragma omp parallel
  {
#pragma omp atomic
    count++;
  }
  CHECK_EQ(who, count, nmax);
  long sum = 0;
#pragma omp parallel for schedule(dynamic, 3) reduction(+ : sum) num_threads(3)
  for (int i = 0; i < 1000; i++) sum += i;
  CHECK_EQ(who, sum, 999L * 1000 / 2);
  long f = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  f = fib(15);
  CHECK_EQ(who, f, 610);
}

// Forks; the child runs `use_openmp` (and forks further while depth > 0) and
// exits with its failure count; the caller checks it.
static void fork_and_check(int depth) {
  pid_t pid = fork();
  if (pid < 0) {
    CHECK("fork", 0);
    return;
  }
  if (pid == 0) {
    use_openmp("child");
    if (depth > 0) fork_and_check(depth - 1);
    _exit(failures > 100 ? 100 : failures);
  }
  int st = 0;
  CHECK_EQ("waitpid", waitpid(pid, &st, 0), pid);
  CHECK("child exited normally", WIFEXITED(st));
  CHECK_EQ("child failures", WEXITSTATUS(st), 0);
}

int main(void) {
  use_openmp("parent before");
  fork_and_check(1);
  use_openmp("parent after");
  return failures != 0;
}
