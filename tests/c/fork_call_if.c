// fork_call_if.c - `parallel if(...)` built with clang's OpenMPIRBuilder, which emits
// __kmpc_fork_call_if: with a true condition the region runs on a team, with a false one on
// the encountering thread alone (a serialized region: level 1, active level 0).
// oxiomp-test: cflags=-fopenmp-enable-irbuilder
// oxiomp-test: gcc=skip: built with a clang-only flag (-fopenmp-enable-irbuilder)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  (void)argv;
  int failures = 0;
  int yes = argc > 0, no = argc < 0;
  int count = 0, size = 0, level = -1, active = -1;
#pragma omp parallel if (yes)
  {
#pragma omp atomic
    count++;
    if (omp_get_thread_num() == 0) size = omp_get_num_threads();
  }
  if (count != omp_get_max_threads() || size != count) {
    fprintf(stderr, "FAIL: if(true) ran on %d threads, team size %d\n", count, size);
    failures++;
  }
  count = 0;
#pragma omp parallel if (no)
  {
#pragma omp atomic
    count++;
    size = omp_get_num_threads();
    level = omp_get_level();
    active = omp_get_active_level();
  }
  if (count != 1 || size != 1 || level != 1 || active != 0) {
    fprintf(stderr, "FAIL: if(false): %d threads, size %d, level %d, active %d\n", count, size, level, active);
    failures++;
  }
  if (failures) return 1;
  printf("ok fork_call_if\n");
  return 0;
}
