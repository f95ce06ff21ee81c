// allocators.c - OpenMP allocators with traits (omp_init_allocator and
// friends; a program calling them did not load before):
//  * alignment: blocks aligned to the trait, or more when omp_aligned_alloc asks
//  * pool_size with each fallback: null_fb returns null beyond the pool and the
//    pool is whole again after frees; default_mem_fb still allocates;
//    allocator_fb takes from the fb_data allocator until that one is full too
//  * omp_calloc zeroes, omp_realloc keeps the bytes (and null_fb on failure)
//  * def-allocator-var: omp_null_allocator means the default allocator, which
//    omp_set_default_allocator changes for the calling task only (each thread
//    of a region its own; the region's end restores the outer one)
//  * an `allocate` clause takes a private variable's memory from its allocator
//  * `uses_allocators` on a target region (run on the host) makes the allocator
// (allocators_ours.c: what libomp does differently)
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: uses_allocators, which gcc 12 does not parse
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"

#define ALIGNED(p, a) (((uintptr_t)(p) % (a)) == 0)

static omp_allocator_handle_t make(int n, omp_alloctrait_t *t) {
  return omp_init_allocator(omp_default_mem_space, n, t);
}

static void alignment(void) {
  omp_alloctrait_t t[] = {{omp_atk_alignment, 4096}};
  omp_allocator_handle_t a = make(1, t);
  CHECK("alignment allocator made", a != omp_null_allocator);
  void *p = omp_alloc(100, a), *q = omp_aligned_alloc(8192, 10, a);
  void *r = omp_aligned_alloc(64, 100, omp_default_mem_alloc);
  CHECK("trait alignment", p && ALIGNED(p, 4096));
  CHECK("larger requested alignment", q && ALIGNED(q, 8192));
  CHECK("requested alignment", r && ALIGNED(r, 64));
  omp_free(p, a);
  omp_free(q, a);
  omp_free(r, omp_default_mem_alloc);
  omp_destroy_allocator(a);
}

static void pools(void) {
  omp_alloctrait_t tn[] = {{omp_atk_pool_size, 10000},
                           {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t n = make(2, tn);
  CHECK("pool allocator made", n != omp_null_allocator);
  void *b[4];
  for (int i = 0; i < 4; i++) {
    b[i] = omp_alloc(1000, n);
    CHECK("within the pool", b[i] != NULL);
  }
  CHECK("beyond the pool: null_fb", omp_alloc(7000, n) == NULL);
  for (int i = 0; i < 4; i++) omp_free(b[i], n);
  void *big = omp_alloc(7000, n);
  CHECK("the pool is whole again after the frees", big != NULL);
  omp_free(big, n);

  omp_alloctrait_t td[] = {{omp_atk_pool_size, 1000}};
  omp_allocator_handle_t d = make(1, td);
  void *over = omp_alloc(5000, d);
  CHECK("beyond the pool: default_mem_fb allocates", over != NULL);
  omp_free(over, d);

  omp_alloctrait_t tf[] = {{omp_atk_pool_size, 2000},
                           {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t f = make(2, tf);
  omp_alloctrait_t ta[] = {{omp_atk_pool_size, 2000},
                           {omp_atk_fallback, omp_atv_allocator_fb},
                           {omp_atk_fb_data, (omp_uintptr_t)f}};
  omp_allocator_handle_t a = make(3, ta);
  CHECK("allocator_fb allocator made", a != omp_null_allocator);
  void *x = omp_alloc(1500, a), *y = omp_alloc(1500, a), *z = omp_alloc(1500, a);
  CHECK("first from the allocator", x != NULL);
  CHECK("then from its fb_data allocator", y != NULL);
  CHECK("then nothing: both pools are full", z == NULL);
  omp_free(x, a);
  omp_free(y, a);

  // calloc and realloc, within a pool
  int *c = omp_calloc(100, sizeof(int), n);
  int zero = 1;
  for (int i = 0; c && i < 100; i++) zero &= c[i] == 0;
  CHECK("omp_calloc zeroes", c && zero);
  for (int i = 0; c && i < 100; i++) c[i] = i;
  int *c2 = omp_realloc(c, 3000 * sizeof(int), n, n);
  CHECK("realloc beyond the pool fails (null_fb)", c2 == NULL);
  c2 = omp_realloc(c, 200 * sizeof(int), n, n);
  int kept = c2 != NULL;
  for (int i = 0; c2 && i < 100; i++) kept &= c2[i] == i;
  CHECK("realloc keeps the bytes", kept);
  omp_free(c2, n);
  omp_destroy_allocator(a);
  omp_destroy_allocator(f);
  omp_destroy_allocator(d);
  omp_destroy_allocator(n);
}

static void default_allocator(void) {
  CHECK("default allocator at start",
        omp_get_default_allocator() == omp_default_mem_alloc);
  omp_alloctrait_t t[] = {{omp_atk_pool_size, 1000},
                          {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t small = make(2, t);
  omp_allocator_handle_t mine[16];
  int ok = 1;
#pragma omp parallel
  {
    int me = omp_get_thread_num();
    omp_allocator_handle_t want =
        me % 2 ? small : omp_large_cap_mem_alloc;
    omp_set_default_allocator(want);
#pragma omp barrier
    if (omp_get_default_allocator() != want) {
#pragma omp atomic write
      ok = 0;
    }
    if (me < 16) mine[me] = want;
  }
  (void)mine;
  CHECK("each thread its own default allocator", ok);
  CHECK("the region's end restores the outer one",
        omp_get_default_allocator() == omp_default_mem_alloc);
  omp_set_default_allocator(small);
  CHECK("omp_null_allocator means the default: beyond its pool",
        omp_alloc(5000, omp_null_allocator) == NULL);
  void *p = omp_alloc(500, omp_null_allocator);
  CHECK("omp_null_allocator means the default: within its pool", p != NULL);
  omp_free(p, omp_null_allocator);
  omp_set_default_allocator(omp_default_mem_alloc);
  omp_destroy_allocator(small);
}

static void allocate_clause(void) {
  omp_alloctrait_t t[] = {{omp_atk_alignment, 4096}};
  omp_allocator_handle_t a = make(1, t);
  int bad = 0;
  double x = 0;
#pragma omp parallel private(x) allocate(a : x) reduction(+ : bad)
  {
    x = omp_get_thread_num();
    bad += !ALIGNED(&x, 4096) || x != omp_get_thread_num();
  }
  CHECK_EQ("allocate clause: private copies from the allocator", bad, 0);
  omp_destroy_allocator(a);
}

// `uses_allocators` on a (host) target region: clang calls __kmpc_init_allocator
// and __kmpc_destroy_allocator around it.
static void uses_allocators(void) {
  omp_alloctrait_t traits[] = {{omp_atk_alignment, 128}};
  omp_allocator_handle_t my;
  int ok = 0;
#pragma omp target uses_allocators(my(traits)) map(from : ok)
  {
    double *p = omp_alloc(64, my);
    ok = p && ALIGNED(p, 128);
    omp_free(p, my);
  }
  CHECK("uses_allocators: an allocator with the traits", ok);
}

int main(void) {
  alignment();
  pools();
  default_allocator();
  allocate_clause();
  uses_allocators();
  return failures != 0;
}
