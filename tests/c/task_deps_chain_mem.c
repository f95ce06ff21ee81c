// task_deps_chain_mem.c - a chain of N = 1e6 tasks depend(inout: x) on one address, created by
// one thread (in single) while the others run them:
//  * phase 1: each task sees x equal to its index, x == N after the region, and the peak
//    resident set (VmHWM and ru_maxrss) grew by less than PEAK_BOUND_MB. The creator waits
//    (taskwait) after every WINDOW tasks: unthrottled, it runs ahead of the chain and the peak
//    is the backlog of pending tasks, which depends on scheduling (measured on 2 cores: up to
//    300 MB with oxiomp, 1.5 GB with libomp 19). Measured growth with the window (1, 2, 4, 16
//    threads): oxiomp 0.9-3.3 MB, libomp 19 1.3-8.7 MB; the bound is 2x the worse. A runtime
//    that kept a record per task ever submitted on the address (>= 100 bytes each, kept
//    while the generating task lives) would grow by > 100 MB.
//  * phase 2: a gate task depend(out: x) holds the whole chain of N pending until the creator
//    has created all N tasks: it is a detachable task, whose event the creator fulfils after
//    the last chain task is created (a gate that spun on a flag would deadlock with one
//    thread, where a task may run at once inside its creation); memory is O(N) here by nature
//    (oxiomp: 518 MB), only the result is checked: every task ran in order, x == N
//  * phase 1 twice more: the current resident set (VmRSS) after the third repeat is within
//    LEAK_BOUND_MB of the one after the second (nothing kept per completed task, the pending
//    phase's memory reused; measured: no growth with either runtime). The peak cannot show
//    this: phase 2's is higher.
// No reference run: libomp 19 crashes (SIGSEGV, stack overflow) in phase 2 with one thread
// (releasing the gate runs the chain recursively, one nest per task; a gated chain of 1e5
// tasks is enough), and keeps ~1.5 KB per pending task (1.5-2.9 GB, 17-70 s here).
// Untraced (OMP_OVNI=0, also in the harness's LD_PRELOAD runs): a trace of this program is
// ~565 MB, and its buffers count in the resident set (+36 MB at 16 threads).
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: reference=skip
// oxiomp-test: env=OMP_OVNI=0
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"

#define N 1000000L
#define WINDOW 4096
#define PEAK_BOUND_MB 20
#define LEAK_BOUND_MB 8

static long x, bad_order;

/* a field of /proc/self/status in KiB (-1 if absent) */
static long status_kb(const char *field) {
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}
static long maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static void chain(void) {
  x = 0;
  bad_order = 0;
#pragma omp parallel
#pragma omp single
  for (long i = 0; i < N; i++) {
#pragma omp task depend(inout : x) firstprivate(i)
    {
      if (x != i) __atomic_fetch_add(&bad_order, 1, __ATOMIC_RELAXED);
      x++;
    }
    if (i % WINDOW == WINDOW - 1) {
#pragma omp taskwait
    }
  }
}

static void gated_chain(void) {
  x = 0;
  bad_order = 0;
#pragma omp parallel
#pragma omp single
  {
    omp_event_handle_t gate;
#pragma omp task depend(out : x) detach(gate)
    {
    }
    for (long i = 0; i < N; i++) {
#pragma omp task depend(inout : x) firstprivate(i)
      {
        if (x != i) __atomic_fetch_add(&bad_order, 1, __ATOMIC_RELAXED);
        x++;
      }
    }
    omp_fulfill_event(gate);
  }
}

int main(void) {
  const int verbose = getenv("CHAIN_MEM_VERBOSE") != NULL;
  /* start the team first: its threads' stacks are not the chain's memory */
#pragma omp parallel
  {
  }
  long hwm0 = status_kb("VmHWM"), max0 = maxrss_kb();

  chain();
  long hwm1 = status_kb("VmHWM"), max1 = maxrss_kb();
  CHECK_EQ("phase 1: x", x, N);
  CHECK_EQ("phase 1: tasks that saw another count than their index", bad_order, 0);
  long grew = hwm1 - hwm0 > max1 - max0 ? hwm1 - hwm0 : max1 - max0;
  if (verbose) fprintf(stderr, "phase 1: peak grew by %ld KiB (VmHWM %ld -> %ld)\n", grew, hwm0, hwm1);
  if (grew >= PEAK_BOUND_MB * 1024L)
    fprintf(stderr, "phase 1: the peak resident set grew by %ld KiB (bound %d MiB)\n", grew, PEAK_BOUND_MB);
  CHECK("phase 1: peak resident set growth under the bound", grew < PEAK_BOUND_MB * 1024L);

  gated_chain();
  CHECK_EQ("phase 2 (gated): x", x, N);
  CHECK_EQ("phase 2 (gated): tasks that saw another count than their index", bad_order, 0);
  if (verbose) fprintf(stderr, "phase 2: VmHWM %ld, VmRSS %ld KiB\n", status_kb("VmHWM"), status_kb("VmRSS"));

  chain();
  CHECK_EQ("phase 1, repeat 2: x", x, N);
  long rss2 = status_kb("VmRSS");
  chain();
  CHECK_EQ("phase 1, repeat 3: x", x, N);
  CHECK_EQ("phase 1, repeat 3: tasks that saw another count than their index", bad_order, 0);
  long rss3 = status_kb("VmRSS");
  if (verbose) fprintf(stderr, "repeats: VmRSS %ld -> %ld KiB\n", rss2, rss3);
  if (rss3 - rss2 >= LEAK_BOUND_MB * 1024L)
    fprintf(stderr, "repeat 3: the resident set grew by %ld KiB (bound %d MiB)\n", rss3 - rss2, LEAK_BOUND_MB);
  CHECK("repeat 3: resident set growth under the bound", rss3 - rss2 < LEAK_BOUND_MB * 1024L);
  return failures != 0;
}
