// fork_busy_teams.c - a thread forks again and again while the other threads of its team keep
// starting nested teams two levels deep (with the run-time checks on, a start may look its
// team up in a map the whole process shares, so a fork may land while another thread holds
// it; the kmp-abi unit tests make that case certain). Every child must run its own regions
// (nested ones included) and exit: a child that inherits a lock a vanished thread held would
// wait forever, so the parent gives each child 30 seconds, then kills it and counts it as
// hung.
// oxiomp-test: threads=none
// libgomp's child stays in the parent's region (level 1, a team of 4): its regions are nested
// ones, not the fresh teams counted here.
// oxiomp-test: gcc-reference=skip
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define FORKS 100

static volatile int done;

static int child(void) {
  int sizes = 0, inner = 0;
#pragma omp parallel num_threads(3) reduction(+ : sizes, inner)
  {
    sizes += omp_get_num_threads() == 3;
#pragma omp barrier
#pragma omp parallel num_threads(2) reduction(+ : inner)
    inner += omp_get_level() == 2;
  }
  return sizes == 3 && inner == 3 * (omp_get_max_active_levels() >= 2 ? 2 : 1) ? 0 : 1;
}

/* The child's exit status, or 200 if it did not end within 30 seconds (it is killed). */
static int fork_and_wait(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(child());
  for (int i = 0; i < 30 * 1000; i++) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    struct timespec ms = {0, 1000 * 1000};
    nanosleep(&ms, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return 200;
}

int main(void) {
  omp_set_max_active_levels(3);
  int hung = 0, failed = 0;
  long nested = 0;
#pragma omp parallel num_threads(4) reduction(+ : nested)
  {
    if (omp_get_thread_num() == 0) {
      for (int i = 0; i < FORKS; i++) {
        int r = fork_and_wait();
        hung += r == 200;
        failed += r != 0 && r != 200;
      }
      done = 1;
    } else {
      while (!done) {
#pragma omp parallel num_threads(2) reduction(+ : nested)
        {
#pragma omp parallel num_threads(2) reduction(+ : nested)
          nested++;
        }
      }
    }
  }
  CHECK_EQ("children that hung", hung, 0);
  CHECK_EQ("children whose regions went wrong", failed, 0);
  CHECK("the other threads started nested teams", nested > 0);
  return failures != 0;
}
