// pause_resource.c - omp_pause_resource / omp_pause_resource_all (a program
// calling them did not load before):
//  * after regions of 4 threads (and nested ones), a hard pause returns 0 and
//    the workers' threads end (the process is back to its own threads)
//  * the next regions start threads again and compute the same; a soft pause
//    returns 0 and the program goes on
//  * 40 rounds of region and pause: thread numbers and results stay right
//  * an unknown kind or device returns non-zero and pauses nothing
// oxiomp-test: gcc-reference=skip
// (libgomp accepts an unknown pause kind.)
#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

// The process's threads, but the trace writer (OMP_OVNI=1 runs).
static int threads_now(void) {
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f) {
      if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
      fclose(f);
    }
    n += strncmp(comm, "oxiomp-trace", 12) != 0;
  }
  if (d) closedir(d);
  return n;
}

// The threads the process has before any region: the main thread (and with
// OMP_OVNI=1 the trace writer, which names itself a moment after it starts and
// is not counted once named: wait for that).
static int own_threads(void) {
  (void)omp_get_max_threads(); // starts the runtime (and the trace writer)
  int n = threads_now();
  for (int i = 0; i < 5000 && n > 1; i++) {
    usleep(1000);
    n = threads_now();
  }
  return n;
}

// Waits (up to 20 s) until at most `n` threads are left; returns the count.
static int settle_to(int n) {
  int now = threads_now();
  for (int i = 0; i < 20000 && now > n; i++) {
    usleep(1000);
    now = threads_now();
  }
  return now;
}

// A region of 4 threads: each thread number once, the sum right.
static void region(const char *what) {
  int seen[4] = {0};
  long sum = 0;
#pragma omp parallel num_threads(4) reduction(+ : sum)
  {
#pragma omp atomic
    seen[omp_get_thread_num()]++;
#pragma omp for
    for (int i = 0; i < 1000; i++) sum += i;
  }
  for (int i = 0; i < 4; i++) CHECK_EQ(what, seen[i], 1);
  CHECK_EQ(what, sum, 999L * 1000 / 2);
}

int main(void) {
  int base = own_threads();
  region("first region");
  CHECK("workers started", threads_now() >= base + 3);
  CHECK_EQ("hard pause", omp_pause_resource_all(omp_pause_hard), 0);
  CHECK_EQ("the workers' threads ended", settle_to(base), base);
  region("after a hard pause");

  omp_set_max_active_levels(2);
  int inner = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp atomic
  inner++;
  CHECK_EQ("nested regions", inner, 4);
  CHECK_EQ("hard pause after nested regions",
           omp_pause_resource(omp_pause_hard, omp_get_initial_device()), 0);
  CHECK_EQ("nested regions' threads ended too", settle_to(base), base);

  region("after the second hard pause");
  CHECK_EQ("soft pause", omp_pause_resource(omp_pause_soft, omp_get_initial_device()), 0);
  region("after a soft pause");
  for (int r = 0; r < 40; r++) {
    region("rounds of region and pause");
    CHECK_EQ("pause in a round", omp_pause_resource_all(r % 2 ? omp_pause_soft : omp_pause_hard), 0);
  }
  CHECK("an unknown kind", omp_pause_resource_all((omp_pause_resource_t)7) != 0);
  CHECK("an unknown device", omp_pause_resource(omp_pause_soft, 12345) != 0);
  region("last region");
  return failures != 0;
}
