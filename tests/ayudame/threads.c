/* Two regions without a num_threads clause and one with it. */
#include <stdio.h>
#include <omp.h>

int main(void) {
  int first = 0, second = 0, clause = 0;
#pragma omp parallel
#pragma omp single
  first = omp_get_num_threads();
#pragma omp parallel
#pragma omp single
  second = omp_get_num_threads();
#pragma omp parallel num_threads(2)
#pragma omp single
  clause = omp_get_num_threads();
  printf("first=%d second=%d clause=%d\n", first, second, clause);
  return 0;
}
