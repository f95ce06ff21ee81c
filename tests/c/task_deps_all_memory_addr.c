// task_deps_all_memory_addr.c - omp_all_memory has two encodings in kmp_depend_info: the
// all-memory flag (0x80) at address 0, and address (size_t)-1 with any flags (the older one,
// still emitted by some compilers, as LLVM's own tests do). Through __kmpc_omp_task_with_deps:
//  * a writer of x (out), then a task with dependence {-1, out}: the second runs after the
//    first has finished (it sees the first's write), then a reader of y runs after it;
//  * the same with {-1, in} (the flags do not matter at that address);
//  * a dependence at address 0 without the all-memory flag names nothing: of two tasks with
//    only {0, out}, in a team of two, the first waits (30 s at most) for the second to run,
//    which it could not if they were ordered.
// The writer takes its time (10 ms) so that a task that does not wait would run meanwhile.
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "kmp_abi.h"

static ident_t loc = {0, 2, 0, 0, ";file;func;0;0;;"};
static int x, y, seen_x, seen_y;

static int32_t writer(int32_t gtid, kmp_task_t *t) {
  (void)gtid, (void)t;
  usleep(10000);
  __atomic_store_n(&x, 1, __ATOMIC_RELEASE);
  return 0;
}

static int32_t all_memory(int32_t gtid, kmp_task_t *t) {
  (void)gtid, (void)t;
  seen_x = __atomic_load_n(&x, __ATOMIC_ACQUIRE);
  __atomic_store_n(&y, 1, __ATOMIC_RELEASE);
  return 0;
}

static int32_t reader(int32_t gtid, kmp_task_t *t) {
  (void)gtid, (void)t;
  seen_y = __atomic_load_n(&y, __ATOMIC_ACQUIRE);
  return 0;
}

// Submits a task running `f` with the dependences `deps`.
static void submit(int32_t (*f)(int32_t, kmp_task_t *), kmp_depend_info_t *deps, int n) {
  int32_t gtid = __kmpc_global_thread_num(&loc);
  kmp_task_t *t = __kmpc_omp_task_alloc(&loc, gtid, 1, sizeof(kmp_task_t) + 8, 0, f);
  __kmpc_omp_task_with_deps(&loc, gtid, t, n, deps, 0, NULL);
}

static void round_with(uint8_t all_flags) {
  x = y = seen_x = seen_y = 0;
#pragma omp parallel
#pragma omp single
  {
    kmp_depend_info_t wx = {(intptr_t)&x, sizeof x, 2};
    submit(writer, &wx, 1);
    kmp_depend_info_t all = {(intptr_t)-1, 0, all_flags};
    submit(all_memory, &all, 1);
    kmp_depend_info_t ry = {(intptr_t)&y, sizeof y, 1};
    submit(reader, &ry, 1);
  }
  CHECK_EQ(all_flags == 2 ? "{-1, out} ran after the writer of x" : "{-1, in} ran after the writer of x",
           seen_x, 1);
  CHECK_EQ("the reader of y ran after the all-memory task", seen_y, 1);
}

static int second_ran, first_saw_second;

static int32_t first_null(int32_t gtid, kmp_task_t *t) {
  (void)gtid, (void)t;
  double until = omp_get_wtime() + 30.0;
  while (!__atomic_load_n(&second_ran, __ATOMIC_ACQUIRE) && omp_get_wtime() < until) {
  }
  first_saw_second = __atomic_load_n(&second_ran, __ATOMIC_ACQUIRE);
  return 0;
}

static int32_t second_null(int32_t gtid, kmp_task_t *t) {
  (void)gtid, (void)t;
  __atomic_store_n(&second_ran, 1, __ATOMIC_RELEASE);
  return 0;
}

int main(void) {
  round_with(2);
  round_with(1);
  int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    team = omp_get_num_threads();
    if (team == 2) {
      kmp_depend_info_t none = {0, 0, 2};
      submit(first_null, &none, 1);
      submit(second_null, &none, 1);
    }
  }
  if (team == 2) CHECK_EQ("two tasks whose only dependence is {0, out} are not ordered", first_saw_second, 1);
  return failures != 0;
}
