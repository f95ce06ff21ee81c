// places_huge.c - OMP_PLACES values with huge lengths and intervals cost what the machine's
// CPUs cost, not what the numbers say: each value below is tried in a child process of its
// own (this program run again with OMP_PLACES set; the values start at the first CPU the
// process may use, 0 below), which must
//  * exit 0 having read its place list (omp_get_num_places() >= 1, at most 4096 places, or one
//    per CPU of the machine if it has more),
//  * stay under 64 MB of peak resident memory (the place lists used to be expanded: 783 MB
//    for {0:100000000}, 5.4 GB for {0:2}:100000000:1, and an abort for {0:4000000000}; ids
//    walked down one by one from 2^63 would never end),
//  * write exactly one warning, naming OMP_PLACES and what it ignores (the CPU ids the machine
//    does not have, or the copies of a place beyond the 4096th).
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: gcc-reference=skip
// (libgomp reads a huge place list differently.)
// (libomp 19 aborts on {0:4000000000}.)
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* %d: the first CPU the process may use */
static const char *values[] = {
    "{%d:100000000}",
    "{%d:2}:100000000:1",
    "{%d:4000000000}",
    "{%d}:100000000:0",
    "{%d},{100000}",
    "{%d:3}:4000000000:-1",
    "{%d},{9223372036854775807:9223372036854775807:-1}",
    "{%d},!{100000}:9223372036854775807:9223372036854775807",
};

static int lines_containing(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) {
    int n = omp_get_num_places();
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (n < 1 || n > (cpus > 4096 ? cpus : 4096)) {
      printf("num_places %d with %ld CPUs\n", n, cpus);
      return 3;
    }
    return 0;
  }
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &set)) first++;
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    char value[200];
    snprintf(value, sizeof value, values[i], first);
    int pipefd[2];
    if (pipe(pipefd) != 0) return 2;
    pid_t pid = fork();
    if (pid == 0) {
      dup2(pipefd[1], 2);
      close(pipefd[0]);
      setenv("OMP_PLACES", value, 1);
      execl("/proc/self/exe", argv[0], "child", (char *)NULL);
      _exit(127);
    }
    close(pipefd[1]);
    static char err[1 << 16];
    size_t len = 0;
    ssize_t got;
    while ((got = read(pipefd[0], err + len, sizeof err - 1 - len)) > 0) len += (size_t)got;
    err[len] = 0;
    close(pipefd[0]);
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    char what[200];
    snprintf(what, sizeof what, "OMP_PLACES=%s: exit status", value);
    CHECK_EQ(what, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
    snprintf(what, sizeof what, "OMP_PLACES=%s: peak resident set, KB (more than 64 MB)", value);
    if (ru.ru_maxrss > 64 * 1024) CHECK_EQ(what, ru.ru_maxrss, 64 * 1024);
    snprintf(what, sizeof what, "OMP_PLACES=%s: warning lines", value);
    CHECK_EQ(what, lines_containing(err, "warning"), 1);
    snprintf(what, sizeof what, "OMP_PLACES=%s: the warning names the variable and what it ignores", value);
    CHECK(what, lines_containing(err, "OMP_PLACES=") == 1 && lines_containing(err, "ignoring") == 1);
    if (failures) fprintf(stderr, "child's stderr:\n%s", err);
  }
  return failures != 0;
}
