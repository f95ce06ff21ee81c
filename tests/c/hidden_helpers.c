// hidden_helpers.c - `target nowait` tasks (clang: __kmpc_omp_target_task_alloc) run on the
// hidden helper threads, gtids 2..8 by default (1..8 reserved, as libomp numbers them), and
// the program's own threads are numbered after them:
//  a. a team of one: the task runs on a helper while its creator goes on, even while the
//     creator spins on a flag the task sets (it never runs it itself);
//  b. in a parallel region, each thread's chain regular -> target -> regular on one variable
//     (depend inout) runs in order, the target task on a helper, the others on the team;
//  c. a taskgroup waits for target tasks; the region's end (its barrier) waits for target
//     tasks nobody waited for;
//  d. a target task creating tasks and waiting for them: they run on the helpers too;
//  e. in a fork's child, target tasks run on the child's own helpers.
// libomp 19 fails d (a target task's taskwait returns before its tasks have run) and e (the
// child's target task does not complete).
// oxiomp-test: reference=skip
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int __kmpc_global_thread_num(void *);
static int gtid(void) { return __kmpc_global_thread_num(0); }
static int is_helper(int g) { return g >= 2 && g <= 8; }

#define N 64

static void chain_in_team(void) {
  int bad_order = 0, bad_helper = 0, bad_team = 0, total = 0;
#pragma omp parallel reduction(+ : bad_order, bad_helper, bad_team, total)
  {
    for (int i = 0; i < N; i++) {
      int v = 0, g1 = -1, g2 = -1, g3 = -1;
#pragma omp task shared(v, g1) depend(inout : v)
      {
        g1 = gtid();
        v = v * 10 + 1;
      }
#pragma omp target nowait map(tofrom : v, g2) depend(inout : v)
      {
        g2 = gtid();
        v = v * 10 + 2;
      }
#pragma omp task shared(v, g3) depend(inout : v)
      {
        g3 = gtid();
        v = v * 10 + 3;
      }
#pragma omp taskwait
      bad_order += v != 123;
      bad_helper += !is_helper(g2);
      bad_team += is_helper(g1) || is_helper(g3) || g1 == 1 || g3 == 1;
      total++;
    }
  }
  CHECK_EQ("b. regular -> target -> regular ran in order", bad_order, 0);
  CHECK_EQ("b. target tasks ran on hidden helpers", bad_helper, 0);
  CHECK_EQ("b. regular tasks ran on the team's threads", bad_team, 0);
  CHECK("b. every thread ran its chains", total >= N);
}

int main(void) {
  CHECK_EQ("the initial thread is gtid 0", gtid(), 0);

  /* a. the creator spins until the target task has set the flag: only another thread can */
  int flag = 0, where = -1;
#pragma omp target nowait map(tofrom : flag, where)
  {
    where = gtid();
    __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
  }
  long spins = 0;
  while (!__atomic_load_n(&flag, __ATOMIC_SEQ_CST) && spins < 2000000000L) {
    spins++;
    if (spins % 1024 == 0) sched_yield();
  }
  CHECK_EQ("a. the target task ran while its creator spun", __atomic_load_n(&flag, __ATOMIC_SEQ_CST), 1);
#pragma omp taskwait
  CHECK("a. it ran on a hidden helper", is_helper(where));

  chain_in_team();

  /* c. taskgroup, and the region's end */
  int done[N] = {0}, late[N] = {0};
#pragma omp parallel
  {
#pragma omp single
    {
#pragma omp taskgroup
      {
        for (int i = 0; i < N; i++) {
#pragma omp target nowait map(tofrom : done[i : 1]) firstprivate(i)
          done[i] = i + 1;
        }
      }
      int missing = 0;
      for (int i = 0; i < N; i++) missing += done[i] != i + 1;
      CHECK_EQ("c. the taskgroup waited for its target tasks", missing, 0);
    }
#pragma omp for
    for (int i = 0; i < N; i++) {
#pragma omp target nowait map(tofrom : late[i : 1]) firstprivate(i)
      late[i] = 2 * i + 1;
    }
  }
  int missing = 0;
  for (int i = 0; i < N; i++) missing += late[i] != 2 * i + 1;
  CHECK_EQ("c. the region's end waited for target tasks", missing, 0);

  /* d. a target task's own tasks, waited for on a helper */
  int inner[8] = {0}, outer_saw = 0;
#pragma omp target nowait map(tofrom : inner, outer_saw)
  {
    for (int i = 0; i < 8; i++) {
#pragma omp task shared(inner) firstprivate(i)
      inner[i] = gtid();
    }
#pragma omp taskwait
    for (int i = 0; i < 8; i++) outer_saw += is_helper(inner[i]);
  }
#pragma omp taskwait
  CHECK_EQ("d. a target task waited for its tasks, run on helpers", outer_saw, 8);

  /* e. a fork's child */
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int g = -1;
#pragma omp target nowait map(tofrom : g)
    g = gtid();
#pragma omp taskwait
    _exit(is_helper(g) ? 0 : 3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK("e. the fork's child ran its target task on a helper", WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return failures != 0;
}
