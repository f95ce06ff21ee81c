// allocators_ours.c - allocator behaviour where Debian's libomp 19 differs:
//  * unsupported traits give omp_null_allocator and a message naming the call
//    (libomp stops the program with an assertion)
//  * pinned=true locks the block in memory: VmLck grows by the blocks, freeing
//    each small block unlocks one page (pinned blocks share no page), and the
//    frees unlock everything (libomp ignores the trait on the host)
//  * an allocator destroyed with live blocks: the blocks stay usable and free
//    (libomp frees the allocator at once and its free then touches it)
//  * def-allocator-var is a task's ICV: a task inherits its creator's, on
//    whichever thread it runs (libomp keeps it per thread: a task run by
//    another thread sees that thread's)
//  * OMP_ALLOCATOR with a memory space and traits sets def-allocator-var (its
//    pool of 4096 bytes with null_fb: omp_alloc beyond it returns null)
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: reference=skip
// oxiomp-test: env=OMP_ALLOCATOR=omp_default_mem_space:pool_size=4096,fallback=null_fb
// oxiomp-test: stderr-contains=omp_init_allocator: trait alignment cannot be 3
// oxiomp-test: gcc-reference=skip
// (libgomp rejects the OMP_ALLOCATOR values and allocator traits oxiomp accepts as libomp does.)
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"

static omp_allocator_handle_t make(int n, omp_alloctrait_t *t) {
  return omp_init_allocator(omp_default_mem_space, n, t);
}

static long vmlck_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmLck: %ld", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

static void unsupported(void) {
  omp_alloctrait_t t1[] = {{omp_atk_alignment, 3}};
  omp_alloctrait_t t2[] = {{omp_atk_fallback, omp_atv_allocator_fb}};
  CHECK("alignment not a power of two", make(1, t1) == omp_null_allocator);
  CHECK("allocator_fb without fb_data", make(1, t2) == omp_null_allocator);
}

static void pinned(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur < (64 << 10) ||
      vmlck_kb() < 0) {
    printf("pinned: skipped (RLIMIT_MEMLOCK below 64 KiB or no VmLck)\n");
    return;
  }
  long page_kb = sysconf(_SC_PAGESIZE) / 1024;
  omp_alloctrait_t t[] = {{omp_atk_pinned, omp_atv_true}};
  omp_allocator_handle_t a = make(1, t);
  long before = vmlck_kb();
  // Below malloc's mmap threshold: the heap's pages, which small blocks would
  // share if they were not given pages of their own.
  char *big = omp_alloc(16 * 1024, a), *small[8];
  for (int i = 0; i < 8; i++) small[i] = omp_alloc(100, a);
  CHECK("pinned blocks", big && small[0] && small[7]);
  long during = vmlck_kb();
  CHECK("pinned: VmLck grows by the blocks", during - before >= 16 + 8 * page_kb);
  int one_page_each = 1;
  for (int i = 0; i < 8; i++) {
    long was = vmlck_kb();
    if (small[i]) memset(small[i], 1, 100);
    omp_free(small[i], a);
    one_page_each &= was - vmlck_kb() == page_kb;
  }
  CHECK("freeing each small block unlocks its own page, and only it", one_page_each);
  omp_free(big, a);
  CHECK_EQ("all unlocked after the frees", vmlck_kb(), before);
  omp_destroy_allocator(a);
}

static void from_environment(void) {
  omp_allocator_handle_t d = omp_get_default_allocator();
  CHECK("OMP_ALLOCATOR made an allocator", d != omp_default_mem_alloc && d != omp_null_allocator);
  void *p = omp_alloc(3000, omp_null_allocator);
  CHECK("within the OMP_ALLOCATOR pool", p != NULL);
  CHECK("beyond the OMP_ALLOCATOR pool: null_fb", omp_alloc(3000, omp_null_allocator) == NULL);
  omp_free(p, omp_null_allocator);
  int ok = 1;
#pragma omp parallel reduction(&& : ok)
  ok = omp_get_default_allocator() == d;
  CHECK("every thread starts with it", ok);
}

static void task_inherits(void) {
  omp_alloctrait_t t[] = {{omp_atk_alignment, 64}};
  omp_allocator_handle_t a = make(1, t);
  int bad = 0;
#pragma omp parallel reduction(+ : bad)
  {
    omp_allocator_handle_t want =
        omp_get_thread_num() % 2 ? a : omp_large_cap_mem_alloc;
    omp_set_default_allocator(want);
    for (int i = 0; i < 20; i++) {
#pragma omp task firstprivate(want) shared(bad)
      if (omp_get_default_allocator() != want) {
#pragma omp atomic
        bad++;
      }
    }
#pragma omp taskwait
  }
  CHECK_EQ("tasks run with their creator's default allocator", bad, 0);
  omp_destroy_allocator(a);
}

static void destroyed_with_live_blocks(void) {
  omp_alloctrait_t t[] = {{omp_atk_pool_size, 100000}};
  omp_allocator_handle_t a = make(1, t);
  int *p = omp_alloc(1000 * sizeof(int), a);
  omp_destroy_allocator(a);
  for (int i = 0; p && i < 1000; i++) p[i] = i;
  long s = 0;
  for (int i = 0; p && i < 1000; i++) s += p[i];
  CHECK_EQ("a block outlives its destroyed allocator", s, 999L * 1000 / 2);
  omp_free(p, omp_null_allocator);
}

int main(void) {
  task_inherits();
  unsupported();
  pinned();
  from_environment();
  destroyed_with_live_blocks();
  return failures != 0;
}
