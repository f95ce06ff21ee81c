// env_display.c - OMP_DISPLAY_ENV=true: the runtime prints the OpenMP
// environment banner (to stderr) at initialisation; the program just runs a
// region and checks it worked.
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_DISPLAY_ENV=true
// oxiomp-test: stderr-contains=OPENMP DISPLAY ENVIRONMENT BEGIN
// oxiomp-test: stderr-contains=OPENMP DISPLAY ENVIRONMENT END
// oxiomp-test: stderr-contains=OMP_NUM_THREADS
#include <omp.h>
#include <stdio.h>

int main(void) {
  int failures = 0;
  int cnt = 0, nt = -1;
#pragma omp parallel num_threads(2)
  {
    __atomic_fetch_add(&cnt, 1, __ATOMIC_SEQ_CST);
    if (omp_get_thread_num() == 0) nt = omp_get_num_threads();
  }
  if (nt != 2) {
    fprintf(stderr, "FAIL: team size (got %d, expected 2)\n", nt);
    failures++;
  }
  if (cnt != 2) {
    fprintf(stderr, "FAIL: region executions (got %d, expected 2)\n", cnt);
    failures++;
  }
  if (failures) return 1;
  printf("ok env_display\n");
  return 0;
}
