// num_threads_list.c - the num_threads entries newer compilers emit, by direct calls:
//  * __kmpc_push_num_threads_list(3, {3, 2, 1}) before a region: it has 3 threads, each of
//    them sees nthreads-var 2 (omp_get_max_threads), a region nested in it has 2 threads, and
//    a region nested in that has nthreads-var 1; the next region without a clause is back to
//    the default;
//  * __kmpc_push_num_threads_strict that can be met: the region has the threads and nothing
//    is reported;
//  * strict with severity warning (1) that cannot be met (nested, inactive: max-active-levels
//    is 1): the region runs with one thread, and a warning naming the message is printed;
//  * __kmpc_set_thread_limit(3) on the initial task: omp_get_thread_limit() is 3 and a region
//    asking for 4 threads gets 3; a non-positive limit changes nothing;
//  * strict with severity fatal (2) that cannot be met ends the program unsuccessfully (in a
//    forked child, whose exit status is checked);
//  * __kmpc_get_target_offload(): what kmp_set_defaults sets, before and after the runtime
//    started.
// reference=skip: libomp 19 runs a region whose fatal strict clause it cannot meet.
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: stderr-contains=num_threads(strict: 2) gets only 1 thread
// oxiomp-test: stderr-contains=strict-warning-message
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "kmp_abi.h"

void __kmpc_push_num_threads_list(ident_t *, int32_t, uint32_t, int32_t *);
void __kmpc_push_num_threads_strict(ident_t *, int32_t, int32_t, int, const char *);
void __kmpc_set_thread_limit(ident_t *, int32_t, int32_t);
int __kmpc_get_target_offload(void);
void __kmpc_fork_call(ident_t *, int32_t, void (*)(int32_t *, int32_t *, ...), ...);
void kmp_set_defaults(const char *);

static ident_t loc = {0, 2, 0, 0, ";num_threads_list.c;main;1;1;;"};
static int outer_n, inner_n, bad_max, inner_max, count;

static void inner2(int32_t *g, int32_t *b) {
  (void)g, (void)b;
  if (omp_get_thread_num() == 0) inner_max = omp_get_max_threads();
}

static void inner(int32_t *g, int32_t *b) {
  (void)g, (void)b;
  if (omp_get_thread_num() == 0) {
    inner_n = omp_get_num_threads();
    __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))inner2);
  }
}

static void outer(int32_t *g, int32_t *b) {
  (void)g, (void)b;
  if (omp_get_max_threads() != 2) __atomic_fetch_add(&bad_max, 1, __ATOMIC_SEQ_CST);
  if (omp_get_thread_num() == 0) {
    outer_n = omp_get_num_threads();
    __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))inner);
  }
}

static void counting(int32_t *g, int32_t *b) {
  (void)g, (void)b;
  __atomic_fetch_add(&count, 1, __ATOMIC_SEQ_CST);
}

static void strict_nested(int32_t *g, int32_t *b) {
  (void)g, (void)b;
  if (omp_get_thread_num() == 0) {
    int32_t gtid = __kmpc_global_thread_num(&loc);
    __kmpc_push_num_threads_strict(&loc, gtid, 2, 1, "strict-warning-message");
    count = 0;
    __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))counting);
  }
}

int main(void) {
  kmp_set_defaults("OMP_TARGET_OFFLOAD=mandatory");
  CHECK_EQ("target offload set before start", __kmpc_get_target_offload(), 2);
  kmp_set_defaults("OMP_TARGET_OFFLOAD=Disabled");
  CHECK_EQ("target offload set after start", __kmpc_get_target_offload(), 0);

  omp_set_dynamic(0);
  omp_set_max_active_levels(3);
  int32_t gtid = __kmpc_global_thread_num(&loc);
  int32_t list[3] = {3, 2, 1};
  __kmpc_push_num_threads_list(&loc, gtid, 3, list);
  __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))outer);
  CHECK_EQ("list: region threads", outer_n, 3);
  CHECK_EQ("list: implicit tasks with nthreads-var other than 2", bad_max, 0);
  CHECK_EQ("list: nested region threads", inner_n, 2);
  CHECK_EQ("list: nthreads-var two levels down", inner_max, 1);
  omp_set_num_threads(4);
  count = 0;
  __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))counting);
  CHECK_EQ("the list applied to one region only", count, 4);

  __kmpc_push_num_threads_strict(&loc, gtid, 3, 2, "never printed");
  count = 0;
  __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))counting);
  CHECK_EQ("strict, met", count, 3);

  omp_set_max_active_levels(1);
  omp_set_num_threads(2);
  __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))strict_nested);
  CHECK_EQ("strict warning: the region ran with one thread", count, 1);

  __kmpc_set_thread_limit(&loc, gtid, 0);
  int before = omp_get_thread_limit();
  CHECK(("thread_limit(0) changes nothing"), before > 3);
  __kmpc_set_thread_limit(&loc, gtid, 3);
  CHECK_EQ("thread_limit(3)", omp_get_thread_limit(), 3);
  omp_set_num_threads(4);
  count = 0;
  __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))counting);
  CHECK_EQ("a region under thread_limit(3)", count, 3);

  pid_t child = fork();
  if (child == 0) {
    __kmpc_set_thread_limit(&loc, __kmpc_global_thread_num(&loc), 1);
    __kmpc_push_num_threads_strict(&loc, __kmpc_global_thread_num(&loc), 2, 2, "strict-fatal-message");
    __kmpc_fork_call(&loc, 0, (void (*)(int32_t *, int32_t *, ...))counting);
    _exit(0); // not reached: the strict clause cannot be met
  }
  int status = 0;
  CHECK_EQ("waitpid", waitpid(child, &status, 0), child);
  CHECK(("a fatal strict clause that cannot be met ends the program unsuccessfully"),
        (WIFEXITED(status) && WEXITSTATUS(status) != 0) || WIFSIGNALED(status));
  return failures != 0;
}
