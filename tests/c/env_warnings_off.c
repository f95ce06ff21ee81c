// env_warnings_off.c - KMP_WARNINGS=false: a malformed variable is still
// replaced by its default, but no warning is printed (the program runs itself
// again with its stderr in a pipe, so that the runtime starts in a process
// whose stderr the parent reads)
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_SCHEDULE=sideways
// oxiomp-test: env=KMP_WARNINGS=false
// oxiomp-test: gcc-reference=skip
// (libgomp rejects the schedule the program sets.)
#include <omp.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int child(void) {
  omp_sched_t kind;
  int chunk, n = 0;
  omp_get_schedule(&kind, &chunk);
#pragma omp parallel num_threads(2)
#pragma omp atomic
  n++;
  return n == 2 && (kind & ~omp_sched_monotonic) == omp_sched_static ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc > 1) return child();
  int fds[2];
  CHECK_EQ("pipe", pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    execl("/proc/self/exe", argv[0], "child", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  size_t len = 0;
  ssize_t r;
  while ((r = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0) len += r;
  buf[len] = 0;
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK("the child ran with the default schedule", WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK("no warning printed", strstr(buf, "OMP_SCHEDULE") == NULL);
  if (len) fprintf(stderr, "child's stderr: %s\n", buf);
  return failures != 0;
}
