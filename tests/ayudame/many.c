/* 100000 tasks: 1000 chains of 100 on the elements of an array. */
#include <stdio.h>

#define CHAINS 1000
#define LENGTH 100

int main(void) {
  static int x[CHAINS];
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < LENGTH; k++)
    for (int c = 0; c < CHAINS; c++) {
#pragma omp task depend(inout : x[c]) shared(x)
      x[c]++;
    }
  long sum = 0;
  for (int c = 0; c < CHAINS; c++)
    sum += x[c];
  printf("sum=%ld\n", sum);
  return sum == (long)CHAINS * LENGTH ? 0 : 1;
}
