// archer: race
// Every thread adds to one shared sum in a parallel loop, unsynchronised.
#include <stdio.h>
int main(void) {
  int sum = 0;
#pragma omp parallel for
  for (int i = 0; i < 1000; i++)
    sum += i;
  printf("%d\n", sum);
  return 0;
}
