// trace_fork.c - run with OMP_OVNI=1 by tests/trace.rs. The program forks:
//  * outside a region: a child that runs a region with tasks, then forks a grandchild that
//    runs a worksharing loop; and a child that runs a region and ends with _exit;
//  * from a region's user code on the primary thread: a child that forks again at once (its
//    child runs a region) and then runs a region itself;
//  * from inside an explicit task: a child that runs a region;
//  * from a region's user code on a worker: a child that runs a region, and one that execs.
// A child forked in a region starts as the initial thread of a fresh runtime. Every process
// checks its own results; the exit status says whether all were right.
#include <omp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

// Waits for `pid`; whether it exited with status 0.
static int ok(pid_t pid) {
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int team_of_two(void) {
  int n = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp atomic
    n++;
  }
  return n == 2 ? 0 : 1;
}

static int grandchild(void) {
  long sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
  for (int i = 0; i < 1000; i++) sum += i;
  return sum == 499500 ? 0 : 1;
}

static int child(void) {
  int done = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int i = 0; i < 4; i++) {
#pragma omp task shared(done)
    {
#pragma omp atomic
      done++;
    }
  }
  pid_t pid = fork();
  if (pid == 0) exit(grandchild());
  return done == 4 && ok(pid) ? 0 : 1;
}

// Forks at once (before recording anything), then runs a region; its child runs one too.
static int fork_again(void) {
  pid_t pid = fork();
  if (pid == 0) exit(team_of_two());
  int mine = team_of_two();
  return mine == 0 && ok(pid) ? 0 : 1;
}

int main(void) {
  int sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  sum += 1;
  pid_t pid = fork();
  if (pid == 0) exit(child());
  int children = ok(pid);
  pid_t quick = fork();
  if (quick == 0) _exit(team_of_two());
  children = children && ok(quick);
  int in_region = 1, in_task = 1, from_worker = 1, execs = 1;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  {
    sum += 1;
    if (omp_get_thread_num() == 0) {
      pid_t p = fork();
      if (p == 0) exit(fork_again());
      in_region = ok(p);
#pragma omp task shared(in_task)
      {
        pid_t q = fork();
        if (q == 0) exit(team_of_two());
        in_task = ok(q);
      }
    } else {
      pid_t w = fork();
      if (w == 0) exit(team_of_two());
      from_worker = ok(w);
      pid_t e = fork();
      if (e == 0) {
        execl("/bin/true", "true", (char *)0);
        _exit(127);
      }
      execs = ok(e);
    }
  }
  return sum == 4 && children && in_region && in_task && from_worker && execs ? 0 : 1;
}
