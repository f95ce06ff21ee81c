// error_directive.c - `#pragma omp error at(execution)` (clang-19 calls
// __kmpc_error, which a program must find in the library):
//  * severity(warning) inside a region reports (on stderr, with the directive's
//    source location) and every thread goes on
//  * severity(fatal), and the default severity, end the program with a failure
//    status: a forked child meets one inside a region and must not run the code
//    after it (the parent checks the child's status)
// oxiomp-test: stderr-contains=error_directive.c:21:1: user-directed warning: careful
// oxiomp-test: stderr-contains=user-directed error: stop here
// oxiomp-test: stderr-contains=user-directed error: (no message)
// oxiomp-test: gcc=skip: gcc passes no source location with the error directive, which the program's output names (tests/gomp/locks.c runs gcc's error directive)
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void warn_all(int *after) {
#pragma omp parallel num_threads(3)
  {
#pragma omp error at(execution) severity(warning) message("careful")
#pragma omp atomic
    (*after)++;
  }
}

// Forks a child that runs `body`; returns whether the child failed (a non-zero
// exit status or a signal).
static int child_fails(void (*body)(void)) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0); // reached only if the error did not end the program
  }
  int st = 0;
  CHECK_EQ("waitpid", waitpid(pid, &st, 0), pid);
  return WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0);
}

static void fatal_in_region(void) {
#pragma omp parallel num_threads(2)
  {
#pragma omp barrier
#pragma omp error at(execution) severity(fatal) message("stop here")
  }
}

static void default_severity(void) {
#pragma omp error at(execution)
}

int main(void) {
  int after = 0;
  warn_all(&after);
  CHECK_EQ("threads went on after the warning", after, 3);
  CHECK("a fatal error ends the child", child_fails(fatal_in_region));
  CHECK("the default severity is fatal", child_fails(default_severity));
  after = 0;
  warn_all(&after);
  CHECK_EQ("the parent goes on", after, 3);
  return failures != 0;
}
