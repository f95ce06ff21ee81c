/* A taskloop of 4 chunks, then a task that depends on the variable the chunks sum into. */
#include <stdio.h>
#include <omp.h>

int main(void) {
  long sum = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskloop num_tasks(4) shared(sum)
    for (int i = 0; i < 100; i++)
      __atomic_fetch_add(&sum, i, __ATOMIC_SEQ_CST);
#pragma omp task depend(inout : sum) shared(sum)
    { sum += 1; }
  }
  printf("sum=%p value=%ld\n", (void *)&sum, sum);
  return sum == 4951 ? 0 : 1;
}
