// pi.c - the bundled example: integrates 4/(1+x^2) over [0,1] with nested parallel regions and
// prints what the runtime reports about its teams. Build with clang-19 -fopenmp.
#include <omp.h>
#include <stdio.h>

int main(void) {
  const long n = 200000000;
  const double h = 1.0 / (double)n;
  double pi = 0.0;
  int outer = 0, inner = 0;
  omp_set_max_active_levels(2);
  double t0 = omp_get_wtime();
#pragma omp parallel num_threads(2)
  {
#pragma omp single nowait
    outer = omp_get_num_threads();
#pragma omp parallel
    {
      // Each of the outer*inner threads takes one contiguous slice.
      int nt = omp_get_num_threads() * omp_get_team_size(1);
      int id = omp_get_ancestor_thread_num(1) * omp_get_num_threads() + omp_get_thread_num();
      if (omp_get_thread_num() == 0 && omp_get_ancestor_thread_num(1) == 0) inner = omp_get_num_threads();
      long lo = n * id / nt, hi = n * (id + 1) / nt;
      double sum = 0.0;
      for (long i = lo; i < hi; i++) {
        double x = h * ((double)i + 0.5);
        sum += 4.0 / (1.0 + x * x);
      }
#pragma omp atomic
      pi += sum * h;
    }
  }
  double t = omp_get_wtime() - t0;
  printf("pi = %.12f (error %.1e) with %d x %d threads on %d procs in %.3f s\n", pi, pi - 3.141592653589793,
         outer, inner, omp_get_num_procs(), t);
  return (pi > 3.14159265 && pi < 3.14159266) ? 0 : 1;
}
