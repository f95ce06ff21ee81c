/* A KASTORS-like blocked Jacobi sweep with task dependences: a 3x3 grid of blocks, three
 * iterations; each block's update reads its four neighbours of the previous iteration.
 * Its task graph, drawn by oxiomp's Ayudame library, is docs/ayudame-jacobi.svg. */
#include <stdio.h>

#define NB 3
#define BS 16
#define ITERS 3

static double u[2][NB][NB][BS * BS];

static void sweep(double *out, const double *in, const double *n, const double *s, const double *w,
                  const double *e) {
  for (int k = 0; k < BS * BS; k++)
    out[k] = 0.2 * (in[k] + n[k] + s[k] + w[k] + e[k]);
}

int main(void) {
  for (int i = 0; i < NB; i++)
    for (int j = 0; j < NB; j++)
      for (int k = 0; k < BS * BS; k++)
        u[0][i][j][k] = i + j;
#pragma omp parallel
#pragma omp single
  for (int it = 0; it < ITERS; it++) {
    int from = it % 2, to = 1 - from;
    for (int i = 0; i < NB; i++)
      for (int j = 0; j < NB; j++) {
        double *c = u[from][i][j];
        double *n = u[from][i > 0 ? i - 1 : i][j], *s = u[from][i < NB - 1 ? i + 1 : i][j];
        double *w = u[from][i][j > 0 ? j - 1 : j], *e = u[from][i][j < NB - 1 ? j + 1 : j];
#pragma omp task depend(in : c[0], n[0], s[0], w[0], e[0]) depend(out : u[to][i][j][0])
        sweep(u[to][i][j], c, n, s, w, e);
      }
  }
  printf("u[1][1][0] = %f\n", u[ITERS % 2][1][1][0]);
  return 0;
}
