// trace_demo.c - a small program to look at with tracing on (scripts/example.sh runs it with
// OMP_OVNI=1 and draws target/example/trace.svg): a static and a dynamic loop, a critical
// section, a task tree with taskwait, and a dependence chain, on 4 threads.
#include <omp.h>
#include <stdio.h>

static double work(int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += 1.0 / (1.0 + i);
  return s;
}

static double tree(int depth) {
  if (depth == 0) return work(20000);
  double a, b;
#pragma omp task shared(a)
  a = tree(depth - 1);
#pragma omp task shared(b)
  b = tree(depth - 1);
#pragma omp taskwait
  return a + b;
}

int main(void) {
  double total = 0, chain = 0;
#pragma omp parallel num_threads(4) reduction(+ : total)
  {
#pragma omp for schedule(static)
    for (int i = 0; i < 64; i++) total += work(20000);
#pragma omp for schedule(dynamic, 4)
    for (int i = 0; i < 64; i++) total += work(1000 * (i % 8 + 1));
    for (int k = 0; k < 8; k++) {
#pragma omp critical
      total += work(5000);
    }
#pragma omp single
    {
      total += tree(6);
      for (int i = 0; i < 32; i++) {
#pragma omp task depend(inout : chain) shared(chain)
        chain += work(10000);
      }
    }
  }
  printf("total %.3f chain %.3f\n", total, chain);
  return 0;
}
