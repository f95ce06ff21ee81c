// task_resubmit.c - a task submitted a second time (through the kmp ABI, as no compiler
// does: only clang's untied tasks re-submit themselves, from their own body) is refused
// with a report naming the call, and is left alone: it still runs exactly once, after its
// predecessor. The task waits for a predecessor that holds on until after the second
// submission, so it is still pending (not run, not freed) at that moment. Not on one thread:
// a team of one runs the predecessor at once, and it would wait for itself.
// oxiomp-test: threads=2,4
// oxiomp-test: reference=skip
// oxiomp-test: stderr-contains=oxiomp: error: __kmpc_omp_task: the task was submitted already
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#include "kmp_abi.h"
int32_t __kmpc_omp_task(ident_t *, int32_t, kmp_task_t *);

static ident_t loc = {0, 2, 0, 22, ";task_resubmit.c;main;0;0;;"};
static atomic_int go = 0, runs = 0, pred_done = 0, order_ok = 1;

static int32_t body(int32_t gtid, kmp_task_t *t) {
  (void)gtid;
  (void)t;
  if (!atomic_load(&pred_done)) atomic_store(&order_ok, 0);
  atomic_fetch_add(&runs, 1);
  return 0;
}

int main(void) {
  int x = 0;
#pragma omp parallel
#pragma omp single
  {
    int32_t gtid = __kmpc_global_thread_num(&loc);
#pragma omp task depend(out : x) shared(x)
    {
      while (!atomic_load(&go)) sched_yield();
      x = 1;
      atomic_store(&pred_done, 1);
    }
    kmp_depend_info_t dep = {(intptr_t)&x, sizeof x, 1}; // in
    kmp_task_t *t = __kmpc_omp_task_alloc(&loc, gtid, 1, sizeof(kmp_task_t), 0, body);
    __kmpc_omp_task_with_deps(&loc, gtid, t, 1, &dep, 0, NULL);
    __kmpc_omp_task(&loc, gtid, t); /* refused: reported */
    atomic_store(&go, 1);
#pragma omp taskwait
  }
  CHECK_EQ("the task submitted twice ran once", atomic_load(&runs), 1);
  CHECK_EQ("after its predecessor", atomic_load(&order_ok), 1);
  CHECK_EQ("the predecessor ran", x, 1);
  return failures != 0;
}
