// running_threads.h - how many of the process's threads are running (state R in
// /proc/self/task/*/stat): for the tests that check idle threads sleep instead of spinning.
#ifndef OXIOMP_TEST_RUNNING_THREADS_H
#define OXIOMP_TEST_RUNNING_THREADS_H
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int running_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int running = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (p && p[1] == ' ' && p[2] == 'R') running++;
  }
  closedir(d);
  return running;
}

// After the caller has slept past the block time: the most threads seen running at once in a
// round of five samples 20 ms apart, in the first round that sees the caller alone, or in the
// last after about four seconds. Waiters that spin show as running in every round; on a
// loaded machine a waiter may not have been given the CPU time to reach its block time yet
// in the first rounds.
static int settled_running_threads(void) {
  int worst = 0;
  for (int round = 0; round < 40; round++) {
    worst = 0;
    for (int i = 0; i < 5; i++) {
      int r = running_threads();
      if (r > worst) worst = r;
      usleep(20 * 1000);
    }
    if (worst == 1) break;
  }
  return worst;
}
#endif
