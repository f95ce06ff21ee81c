// archer: race
// The second loop reads what other threads' iterations of the first wrote, but the first has
// no barrier at its end (nowait).
#include <stdio.h>
int a[1000], b[1000];
int main(void) {
#pragma omp parallel
  {
#pragma omp for nowait schedule(static)
    for (int i = 0; i < 1000; i++)
      a[i] = i;
#pragma omp for schedule(static)
    for (int i = 0; i < 1000; i++)
      b[i] = a[999 - i];
  }
  printf("%d\n", b[0]);
  return 0;
}
