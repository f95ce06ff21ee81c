// stack_default.c - without OMP_STACKSIZE, worker threads get a stack as large as the initial
// thread's soft limit (`ulimit -s`), at least 4 MiB and at most 64 MiB, as libomp propagates
// it: code that runs on the initial thread runs on a worker too.
//  * kmp_get_stacksize_s() is that size;
//  * every thread of a region uses (size - 1 MiB) of its stack in a variable-length array.
// Under the usual 8 MiB limit the workers use 7 MiB, more than the 4 MiB of a fixed default.
// oxiomp-test: threads=2,4
// oxiomp-test: gcc=skip: uses libomp's kmp_* extensions, which libgomp lacks
#include <omp.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"

static __attribute__((noinline)) long use_stack(size_t bytes) {
  volatile char buf[bytes];
  for (size_t i = 0; i < bytes; i += 4096) buf[i] = (char)i;
  long s = 0;
  for (size_t i = 0; i < bytes; i += 4096) s += buf[i];
  return s + 1;
}

int main(void) {
  struct rlimit r;
  CHECK_EQ("getrlimit", getrlimit(RLIMIT_STACK, &r), 0);
  uint64_t lim = r.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)r.rlim_cur;
  uint64_t expect = lim < (4u << 20) ? (4u << 20) : lim > (64u << 20) ? (64u << 20) : lim;
  CHECK_EQ("kmp_get_stacksize_s() follows the initial thread's limit", kmp_get_stacksize_s(), expect);
  size_t use = (size_t)expect - (1u << 20);
  long ok = 0;
#pragma omp parallel reduction(+ : ok)
  ok += use_stack(use) != 0;
  CHECK_EQ("threads that used size - 1 MiB of stack", ok, omp_get_max_threads());
  return failures != 0;
}
