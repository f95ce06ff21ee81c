/* Twenty independent tasks. */
#include <stdio.h>

int main(void) {
  int ran = 0;
#pragma omp parallel
#pragma omp single
  for (int i = 0; i < 20; i++) {
#pragma omp task shared(ran)
    __atomic_fetch_add(&ran, 1, __ATOMIC_SEQ_CST);
  }
  printf("ran=%d\n", ran);
  return ran == 20 ? 0 : 1;
}
