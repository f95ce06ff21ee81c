// running_threads.h - how many of the process's threads are running (state R in
// /proc/self/task/*/stat): for the tests that check idle threads sleep instead of spinning.
#ifndef OXIOMP_TEST_RUNNING_THREADS_H
#define OXIOMP_TEST_RUNNING_THREADS_H
#include <dirent.h>
#include <stdio.h>
#include <string.h>

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
#endif
