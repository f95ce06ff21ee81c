/* One task created first, then six others, all independent. */
#include <stdio.h>
#include <unistd.h>
#include <omp.h>

int main(void) {
  int done = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task shared(done)
    { __atomic_fetch_add(&done, 1, __ATOMIC_SEQ_CST); }
    for (int i = 0; i < 6; i++) {
#pragma omp task shared(done)
      { usleep(2000); __atomic_fetch_add(&done, 1, __ATOMIC_SEQ_CST); }
    }
  }
  printf("done=%d\n", done);
  return done == 7 ? 0 : 1;
}
