// fork_locks.c - forks while another thread keeps taking the runtime's
// process-wide locks (the list of live allocators, through omp_init_allocator /
// omp_alloc / omp_destroy_allocator in a loop): each child must be able to use
// allocators and regions at once (a lock held at the instant of the fork by a
// thread that does not exist in the child would stop it forever). A child that
// does not finish within 10 s counts as stuck.
// oxiomp-test: threads=2,4
// oxiomp-test: cflags=-lpthread
// oxiomp-test: gcc-reference=skip
// (libgomp hangs in a child forked while a lock is held.)
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static volatile int stop = 0;

static void *churn(void *arg) {
  (void)arg;
  omp_alloctrait_t t[] = {{omp_atk_alignment, 64}};
  while (!stop) {
    omp_allocator_handle_t h = omp_init_allocator(omp_default_mem_space, 1, t);
    void *p = omp_alloc(64, h);
    omp_free(p, h);
    omp_destroy_allocator(h);
  }
  return NULL;
}

static int child(void) {
  omp_alloctrait_t t[] = {{omp_atk_alignment, 128}};
  omp_allocator_handle_t h = omp_init_allocator(omp_default_mem_space, 1, t);
  void *p = omp_alloc(100, h);
  int n = 0;
#pragma omp parallel num_threads(2)
#pragma omp atomic
  n++;
  int ok = p && ((size_t)p % 128) == 0 && n == 2;
  omp_free(p, h);
  omp_destroy_allocator(h);
  return ok ? 0 : 1;
}

int main(void) {
  int n = 0;
#pragma omp parallel
#pragma omp atomic
  n++;
  pthread_t th;
  pthread_create(&th, NULL, churn, NULL);
  int stuck = 0, failed = 0;
  for (int i = 0; i < 400; i++) {
    pid_t pid = fork();
    if (pid == 0) _exit(child());
    int st = 0, done = 0;
    for (int w = 0; w < 10000 && !done; w++) {
      done = waitpid(pid, &st, WNOHANG) == pid;
      if (!done) usleep(1000);
    }
    if (!done) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      stuck++;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      failed++;
    }
  }
  stop = 1;
  pthread_join(th, NULL);
  CHECK_EQ("children stuck on a lock", stuck, 0);
  CHECK_EQ("children that failed", failed, 0);
  return failures != 0;
}
