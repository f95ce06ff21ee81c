// kmp_ext.c - libomp's kmp_* extensions that omp.h declares (a program calling
// the ones below did not load before):
//  * kmp_set_stacksize_s before the first region: workers get that stack
//    (pthread_getattr_np), kmp_get_stacksize_s reports it
//  * kmp_malloc / kmp_calloc / kmp_aligned_malloc / kmp_realloc / kmp_free
//  * kmp_set_library_serial: the caller's regions run on one thread;
//    throughput gives the default team back; kmp_get_library follows
//  * the affinity mask routines: kmp_get_affinity reads the thread's CPU set
//    (compared with sched_getaffinity), kmp_set_affinity binds the thread to a
//    one-CPU mask, out-of-range CPUs are refused; kmp_get_affinity_max_proc
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: cflags=-lpthread
// oxiomp-test: gcc=skip: uses libomp's kmp_* extensions, which libgomp lacks
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define STACK (16u << 20)

int main(void) {
  kmp_set_stacksize_s(STACK);
  CHECK_EQ("kmp_get_stacksize_s", kmp_get_stacksize_s(), STACK);
  int small_stack = 0;
#pragma omp parallel num_threads(3) reduction(+ : small_stack)
  if (omp_get_thread_num() != 0) {
    pthread_attr_t a;
    size_t sz = 0;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstacksize(&a, &sz);
    pthread_attr_destroy(&a);
    small_stack += sz < STACK;
  }
  CHECK_EQ("workers have the stack size set", small_stack, 0);

  char *p = kmp_malloc(100);
  CHECK("kmp_malloc", p != NULL);
  memset(p, 7, 100);
  p = kmp_realloc(p, 1000);
  int kept = p != NULL;
  for (int i = 0; p && i < 100; i++) kept &= p[i] == 7;
  CHECK("kmp_realloc keeps the bytes", kept);
  kmp_free(p);
  int *z = kmp_calloc(50, sizeof(int));
  int zero = z != NULL;
  for (int i = 0; z && i < 50; i++) zero &= z[i] == 0;
  CHECK("kmp_calloc zeroes", zero);
  kmp_free(z);
  void *al = kmp_aligned_malloc(10, 256);
  CHECK("kmp_aligned_malloc", al != NULL && (uintptr_t)al % 256 == 0);
  kmp_free(al);

  CHECK_EQ("library starts as throughput", kmp_get_library(), 3);
  kmp_set_library_serial();
  CHECK_EQ("library serial", kmp_get_library(), 1);
  int n = 0;
#pragma omp parallel
#pragma omp single
  n = omp_get_num_threads();
  CHECK_EQ("serial library: one thread", n, 1);
  kmp_set_library_throughput();
  CHECK_EQ("library throughput", kmp_get_library(), 3);
#pragma omp parallel
#pragma omp single
  n = omp_get_num_threads();
  CHECK_EQ("throughput: the default team again", n, omp_get_max_threads());

  int maxp = kmp_get_affinity_max_proc();
  CHECK("kmp_get_affinity_max_proc", maxp >= 1);
  kmp_affinity_mask_t m;
  kmp_create_affinity_mask(&m);
  CHECK_EQ("kmp_get_affinity", kmp_get_affinity(&m), 0);
  cpu_set_t os;
  sched_getaffinity(0, sizeof os, &os);
  int same = 1, first = -1;
  for (int c = 0; c < maxp; c++) {
    same &= kmp_get_affinity_mask_proc(c, &m) == (CPU_ISSET(c, &os) ? 1 : 0);
    if (first < 0 && CPU_ISSET(c, &os)) first = c;
  }
  CHECK("the mask is the thread's CPU set", same);
  CHECK("a CPU number below 0 is refused", kmp_set_affinity_mask_proc(-1, &m) != 0);
  kmp_affinity_mask_t one;
  kmp_create_affinity_mask(&one);
  CHECK_EQ("set a CPU in a mask", kmp_set_affinity_mask_proc(first, &one), 0);
  CHECK_EQ("bind to it", kmp_set_affinity(&one), 0);
  cpu_set_t now;
  sched_getaffinity(0, sizeof now, &now);
  CHECK("bound to that CPU only", CPU_COUNT(&now) == 1 && CPU_ISSET(first, &now));
  CHECK_EQ("unset it", kmp_unset_affinity_mask_proc(first, &one), 0);
  CHECK_EQ("no longer in the mask", kmp_get_affinity_mask_proc(first, &one), 0);
  CHECK_EQ("bind back", kmp_set_affinity(&m), 0);
  sched_getaffinity(0, sizeof now, &now);
  CHECK("the old CPU set again", CPU_EQUAL(&now, &os));
  kmp_destroy_affinity_mask(&one);
  kmp_destroy_affinity_mask(&m);
  return failures != 0;
}
