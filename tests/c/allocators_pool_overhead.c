// allocators_pool_overhead.c - a pool counts what its blocks take from the heap, their headers
// included (as libomp counts them): a 2 MiB pool with null_fb holds one block of 1 MiB but not
// two, so of two threads that each ask for 1 MiB at once exactly one gets null; after the
// frees, 1 MiB can be had again.
// oxiomp-test: threads=none
#include <omp.h>

#include "check.h"

int main(void) {
  omp_alloctrait_t at[] = {{omp_atk_pool_size, 2 * 1024 * 1024}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 2, at);
  void *p[2] = {0, 0};
  int team = 0;
#pragma omp parallel num_threads(2)
  {
    int i = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
#pragma omp barrier
    p[i] = omp_alloc(1024 * 1024, a);
#pragma omp barrier
  }
  if (team == 2) CHECK(("exactly one of two 1 MiB blocks fits a 2 MiB pool"), (p[0] == NULL) != (p[1] == NULL));
  omp_free(p[0], a);
  omp_free(p[1], a);
  void *again = omp_alloc(1024 * 1024, a);
  CHECK(("1 MiB fits again after the frees"), again != NULL);
  omp_free(again, a);
  omp_destroy_allocator(a);
  return failures != 0;
}
