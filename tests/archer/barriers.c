// archer: clean
// Writes ordered by explicit barriers and by the implicit barriers of for, single and
// sections; copyprivate.
#include <omp.h>
int a[64];
int main(void) {
  int total = 0, shared_sec = 0, cp = 0;
#pragma omp parallel
  {
    int me = omp_get_thread_num(), n = omp_get_num_threads();
    a[me] = me + 1;
#pragma omp barrier
    if (me == 0)
      for (int i = 0; i < n; i++)
        total += a[i];
#pragma omp barrier
    a[me] = 0;
#pragma omp barrier
#pragma omp for
    for (int i = 0; i < 64; i++)
      a[i] = i;
#pragma omp single
    {
      int s = 0;
      for (int i = 0; i < 64; i++)
        s += a[i];
      total += s;
    }
#pragma omp sections
    {
#pragma omp section
      shared_sec += 1;
#pragma omp section
      a[0] = 100;
    }
    int mine;
#pragma omp single copyprivate(mine)
    mine = a[0] + shared_sec;
#pragma omp atomic
    cp += mine;
  }
  int n = omp_get_max_threads();
  return !(total == n * (n + 1) / 2 + 2016 && cp == 101 * n);
}
