// trace_fill.c - many short regions: a trace of several megabytes per thread (for the full-disk
// test, whose trace directory is on a small file system).
#include <omp.h>

int main(void) {
  long sum = 0;
  for (int r = 0; r < 100000; r++) {
#pragma omp parallel reduction(+ : sum)
    sum += omp_get_thread_num();
  }
  return sum < 0;
}
