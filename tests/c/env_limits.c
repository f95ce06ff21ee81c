// env_limits.c - values that are well formed but beyond what oxiomp does, or incomplete, give
// one warning each that says what was done, and the program runs on:
//  * OMP_ALLOCATOR=omp_default_mem_space: (a ':' with no traits) is refused: the default
//    allocator stays omp_default_mem_alloc;
//  * KMP_BLOCKTIME=99999999999 is cut down to the longest block time (it used to become
//    infinite without a word): kmp_get_blocktime() says 2147483647;
//  * OMP_AFFINITY_FORMAT with a field 1000 wide: fields are padded to at most 256;
//  * OMP_PLACES naming a CPU the machine does not have (set by the program before the runtime
//    starts, with the first CPU it may use): it is ignored, with a warning naming it (it was
//    dropped silently);
//  * omp_set_affinity_format with a field 300 wide: one warning naming the call.
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: env=OMP_ALLOCATOR=omp_default_mem_space:
// oxiomp-test: env=KMP_BLOCKTIME=99999999999
// oxiomp-test: env=OMP_AFFINITY_FORMAT=[%1000n]
// oxiomp-test: gcc=skip: uses libomp's kmp_* extensions, which libgomp lacks
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stderr_capture.h"

extern int kmp_get_blocktime(void);

int main(void) {
  capture_stderr();
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &set)) first++;
  char places[64];
  snprintf(places, sizeof places, "{%d},{1000000}", first);
  setenv("OMP_PLACES", places, 1);
  CHECK_EQ("default allocator", (long long)omp_get_default_allocator(), (long long)omp_default_mem_alloc);
  CHECK_EQ("kmp_get_blocktime()", kmp_get_blocktime(), 2147483647);
  char buf[4096];
  size_t n = omp_capture_affinity(buf, sizeof buf, NULL);
  CHECK_EQ("affinity line length: '[' + 256 + ']'", n, 258);
  CHECK_EQ("places", omp_get_num_places(), 1);
  omp_set_affinity_format("%300n");
  n = omp_capture_affinity(buf, sizeof buf, NULL);
  CHECK_EQ("affinity line length after omp_set_affinity_format", n, 256);
  const char *err = captured_stderr();
  CHECK_EQ("OMP_ALLOCATOR warnings", lines_containing(err, "OMP_ALLOCATOR='omp_default_mem_space:' is not valid (no traits after"), 1);
  CHECK_EQ("KMP_BLOCKTIME warnings", lines_containing(err, "KMP_BLOCKTIME='99999999999' is longer than the longest block time"), 1);
  CHECK_EQ("OMP_AFFINITY_FORMAT warnings", lines_containing(err, "OMP_AFFINITY_FORMAT='[%1000n]': a field is 1000 characters wide"), 1);
  CHECK_EQ("OMP_PLACES warnings", lines_containing(err, "this machine does not have (1000000)"), 1);
  CHECK_EQ("OMP_PLACES warnings naming the value", lines_containing(err, places), 1);
  CHECK_EQ("omp_set_affinity_format warnings", lines_containing(err, "omp_set_affinity_format: a field is 300 characters wide"), 1);
  CHECK_EQ("warnings in all", lines_containing(err, "warning"), 5);
  return failures != 0;
}
