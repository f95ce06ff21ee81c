// Explicit tasks three deep, each waiting for its child: the innermost stops.
#include <stdio.h>
void stop_here(void) { __asm__ volatile("" ::: "memory"); }
static int depth_reached;
static void level(int d) {
  if (d == 3) {
    depth_reached = d;
    stop_here();
    return;
  }
#pragma omp task
  level(d + 1);
#pragma omp taskwait
}
int main(void) {
#pragma omp parallel
#pragma omp single
  level(0);
  printf("%d\n", depth_reached);
  return 0;
}
