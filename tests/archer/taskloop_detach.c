// archer: clean
// A taskloop's writes read after it; a detached task completed by another task's
// omp_fulfill_event, ordered before a dependent task and the creator's taskwait.
#include <omp.h>
int a[1000];
int main(void) {
  int total = 0, v = 0, w = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskloop grainsize(50)
    for (int i = 0; i < 1000; i++)
      a[i] = i;
    for (int i = 0; i < 1000; i++)
      total += a[i];
    omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out : v) shared(v)
    v = 41;
#pragma omp task shared(ev)
    omp_fulfill_event(ev);
#pragma omp task depend(in : v) shared(v, w)
    w = v + 1;
#pragma omp taskwait
    v++;
  }
  return !(total == 499500 && v == 42 && w == 42);
}
