// trace_fork.c - run with OMP_OVNI=1 by tests/trace.rs: the program forks after a parallel
// region; the child runs code of its own and exits without touching the parent's streams,
// so the parent's trace stays valid and holds only the parent's process.
#include <omp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
  int sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  sum += 1;
  pid_t pid = fork();
  if (pid == 0) {
    volatile long x = 0;
    for (int i = 0; i < 1000; i++) x += i;
    exit(x == 499500 ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
#pragma omp parallel num_threads(2) reduction(+ : sum)
  sum += 1;
  return sum == 4 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
