/* A KASTORS-like blocked LU factorisation with task dependences (dense, 4x4 blocks): lu0 on
 * the diagonal block, fwd along its row, bdiv down its column, bmod on the trailing blocks.
 * Its task graph, drawn by oxiomp's Ayudame library, is docs/ayudame-sparselu.svg. */
#include <stdio.h>

#define NB 4
#define BS 8

static double a[NB][NB][BS][BS];

static void lu0(double d[BS][BS]) {
  for (int k = 0; k < BS; k++)
    for (int i = k + 1; i < BS; i++) {
      d[i][k] /= d[k][k];
      for (int j = k + 1; j < BS; j++)
        d[i][j] -= d[i][k] * d[k][j];
    }
}

static void fwd(double d[BS][BS], double c[BS][BS]) {
  for (int k = 0; k < BS; k++)
    for (int i = k + 1; i < BS; i++)
      for (int j = 0; j < BS; j++)
        c[i][j] -= d[i][k] * c[k][j];
}

static void bdiv(double d[BS][BS], double r[BS][BS]) {
  for (int i = 0; i < BS; i++)
    for (int k = 0; k < BS; k++) {
      r[i][k] /= d[k][k];
      for (int j = k + 1; j < BS; j++)
        r[i][j] -= r[i][k] * d[k][j];
    }
}

static void bmod(double r[BS][BS], double c[BS][BS], double t[BS][BS]) {
  for (int i = 0; i < BS; i++)
    for (int j = 0; j < BS; j++)
      for (int k = 0; k < BS; k++)
        t[i][j] -= r[i][k] * c[k][j];
}

int main(void) {
  for (int i = 0; i < NB; i++)
    for (int j = 0; j < NB; j++)
      for (int x = 0; x < BS; x++)
        for (int y = 0; y < BS; y++)
          a[i][j][x][y] = (i == j && x == y) ? 4.0 * NB * BS : 1.0 / (1 + x + y + i + j);
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < NB; k++) {
#pragma omp task depend(inout : a[k][k])
    lu0(a[k][k]);
    for (int j = k + 1; j < NB; j++) {
#pragma omp task depend(in : a[k][k]) depend(inout : a[k][j])
      fwd(a[k][k], a[k][j]);
    }
    for (int i = k + 1; i < NB; i++) {
#pragma omp task depend(in : a[k][k]) depend(inout : a[i][k])
      bdiv(a[k][k], a[i][k]);
    }
    for (int i = k + 1; i < NB; i++)
      for (int j = k + 1; j < NB; j++) {
#pragma omp task depend(in : a[i][k], a[k][j]) depend(inout : a[i][j])
        bmod(a[i][k], a[k][j], a[i][j]);
      }
  }
  printf("a[%d][%d][0][0] = %f\n", NB - 1, NB - 1, a[NB - 1][NB - 1][0][0]);
  return 0;
}
