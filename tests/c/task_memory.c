// task_memory.c - task blocks are given back: nested task trees (inner tasks run at once past
// the cut-off or queued, leaves that generate nothing, final and if(0) tasks, untied tasks,
// taskloops, tasks with dependences) repeated for many rounds keep the resident set bounded.
// A task that keeps a reference on its parent too many (or frees a parent too early) shows
// up here as growth of megabytes per round (or as a crash).
// The untied tasks wait inside a function they call (tree's taskwait), where no runtime that
// runs tasks on threads' stacks can move them: this program deadlocked oxiomp under load until
// waiting untied tasks became scheduling-constraint anchors (runtime/src/task/README.md §6),
// and it deadlocks Debian's libomp 19 (at 4 and 16 threads, in this harness), hence no
// reference run.
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: reference=skip
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"

static long resident_kb(void) {
  long pages = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
      rss = 0;
    fclose(f);
  }
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static long tree(int depth) {
  if (depth == 0)
    return 1;
  long a = 0, b = 0;
#pragma omp task shared(a) firstprivate(depth) final(depth < 3) untied
  a = tree(depth - 1);
#pragma omp task shared(b) firstprivate(depth) if (depth % 4 != 1)
  b = tree(depth - 1);
#pragma omp taskwait
  return a + b;
}

int main(void) {
  long base = 0;
  for (int round = 0; round < 120; round++) {
    long leaves = 0, loop_sum = 0, chain = 0;
#pragma omp parallel reduction(+ : leaves, loop_sum)
    {
#pragma omp single
      leaves += tree(12);
#pragma omp taskloop grainsize(3) reduction(+ : loop_sum)
      for (int i = 0; i < 300; i++)
        loop_sum += i;
#pragma omp single
      {
        for (int i = 0; i < 200; i++) {
#pragma omp task depend(inout : chain) shared(chain)
          chain++;
        }
      }
    }
    CHECK_EQ("leaves of the task tree", leaves, 1L << 12);
    CHECK_EQ("taskloop sum", loop_sum, (long)omp_get_max_threads() * (300 * 299 / 2));
    CHECK_EQ("dependence chain", chain, 200);
    if (round == 20)
      base = resident_kb();
  }
  long growth = resident_kb() - base;
  /* 100 rounds of ~8200 tasks each: a lost 256-byte block per inner task would be ~100 MB */
  CHECK("resident set bounded after 100 more rounds", growth < 24 * 1024);
  if (growth >= 24 * 1024)
    fprintf(stderr, "grew by %ld kB\n", growth);
  return failures != 0;
}
