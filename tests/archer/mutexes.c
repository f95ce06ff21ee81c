// archer: clean
// Updates ordered by critical, locks (simple, nestable, test), ordered and reductions.
#include <omp.h>
int main(void) {
  int c = 0, l = 0, nl = 0, o = 0, r = 0, s = 0;
  omp_lock_t lock;
  omp_nest_lock_t nest;
  omp_init_lock(&lock);
  omp_init_nest_lock(&nest);
#pragma omp parallel reduction(+ : r)
  {
#pragma omp critical
    c++;
    omp_set_lock(&lock);
    l++;
    omp_unset_lock(&lock);
    omp_set_nest_lock(&nest);
    omp_set_nest_lock(&nest);
    nl++;
    omp_unset_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
    while (!omp_test_lock(&lock)) {
    }
    l++;
    omp_unset_lock(&lock);
    r += omp_get_thread_num() + 1;
#pragma omp for ordered schedule(dynamic)
    for (int i = 0; i < 100; i++) {
#pragma omp ordered
      o += i;
    }
  }
#pragma omp parallel for reduction(+ : s)
  for (int i = 0; i < 1000; i++)
    s += i;
  omp_destroy_lock(&lock);
  omp_destroy_nest_lock(&nest);
  int n = omp_get_max_threads();
  return !(c == n && l == 2 * n && nl == n && o == 4950 && r == n * (n + 1) / 2 && s == 499500);
}
