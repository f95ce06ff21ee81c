// task_proxy.c - proxy tasks (flag 0x10; device runtimes make them for
// asynchronous work, through the kmp ABI as here): the task completes when
// __kmpc_proxy_task_completed_ooo says so, from another thread, after its body
// has returned: a task depending on it runs only then, and taskwait waits for
// it (the completion comes 50 ms after the body; the order is what is checked)
// oxiomp-test: threads=1,2,4
// oxiomp-test: cflags=-lpthread
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"

#include "kmp_abi.h"
void __kmpc_proxy_task_completed_ooo(kmp_task_t *);

static ident_t loc = {0, 2, 0, 22, ";task_proxy.c;main;0;0;;"};
static atomic_int completed = 0;
static pthread_t completer;

static void *complete_later(void *t) {
  usleep(50000);
  atomic_store(&completed, 1);
  __kmpc_proxy_task_completed_ooo(t);
  return NULL;
}

static int32_t proxy_body(int32_t gtid, kmp_task_t *t) {
  (void)gtid;
  pthread_create(&completer, NULL, complete_later, t);
  return 0;
}

int main(void) {
  int x = 0, seen = -1, after_wait = -1;
#pragma omp parallel
#pragma omp single
  {
    int32_t gtid = __kmpc_global_thread_num(&loc);
    kmp_depend_info_t dep = {(intptr_t)&x, sizeof x, 3}; // in | out
    kmp_task_t *p = __kmpc_omp_task_alloc(&loc, gtid, 0x11, sizeof(kmp_task_t), 0, proxy_body);
    __kmpc_omp_task_with_deps(&loc, gtid, p, 1, &dep, 0, NULL);
#pragma omp task depend(in : x) shared(seen)
    seen = atomic_load(&completed);
#pragma omp taskwait
    after_wait = atomic_load(&completed);
  }
  pthread_join(completer, NULL);
  CHECK_EQ("the dependent task ran after the proxy's completion", seen, 1);
  CHECK_EQ("taskwait waited for the proxy's completion", after_wait, 1);
  return failures != 0;
}
