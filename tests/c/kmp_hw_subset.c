// kmp_hw_subset.c - KMP_HW_SUBSET=:1t@1 (absolute: one hardware thread, the second one of the
// machine in socket, core, CPU order) with OMP_PLACES=threads: the runtime uses that one CPU
// only. The program finds it from /sys itself:
//  * omp_get_num_procs() is 1, and a region's default size 1;
//  * there is one place, holding exactly that CPU.
// (Larger machines and the relative form are covered by the engine's unit tests.)
// oxiomp-test: env=KMP_HW_SUBSET=:1t@1
// oxiomp-test: env=OMP_PLACES=threads
// oxiomp-test: threads=none
// oxiomp-test: bound=skip
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static long read_id(int cpu, const char *what) {
  char path[160];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
  FILE *f = fopen(path, "r");
  long v = -1;
  if (f) {
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

typedef struct { long package, core; int cpu; } at_t;
static int by_place(const void *a, const void *b) {
  const at_t *x = a, *y = b;
  if (x->package != y->package) return x->package < y->package ? -1 : 1;
  if (x->core != y->core) return x->core < y->core ? -1 : 1;
  return x->cpu - y->cpu;
}

int main(void) {
  cpu_set_t mask;
  sched_getaffinity(0, sizeof mask, &mask);
  at_t cpus[CPU_SETSIZE];
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &mask)) cpus[n++] = (at_t){read_id(c, "physical_package_id"), read_id(c, "core_id"), c};
  if (n < 2) return 0; // one CPU: the subset leaves none, and the whole machine is used
  qsort(cpus, n, sizeof cpus[0], by_place);
  int want = cpus[1].cpu;
  CHECK_EQ("omp_get_num_procs()", omp_get_num_procs(), 1);
  CHECK_EQ("omp_get_max_threads()", omp_get_max_threads(), 1);
  CHECK_EQ("places", omp_get_num_places(), 1);
  CHECK_EQ("CPUs of the place", omp_get_place_num_procs(0), 1);
  int got = -1;
  omp_get_place_proc_ids(0, &got);
  CHECK_EQ("the place's CPU is the machine's second hardware thread", got, want);
  return failures != 0;
}
