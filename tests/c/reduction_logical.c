// reduction_logical.c - && and || reductions on floating and complex types (reduction.c has
// them on integers): the combined value is 1 or 0 as the logical operators give it, whichever
// thread holds the one false (&&) or true (||) operand, with the original value taking part;
// on parallel for, on a for inside a region, and with nowait.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: cflags=-latomic
#include <complex.h>
#include <omp.h>

#include "check.h"

#define N 257

int main(void) {
  for (int odd = -1; odd < N; odd += 64) { /* the one iteration whose operand differs; -1: none */
    double dand = 1.0, dor = 0.0;
    long double ldand = 1.0L, ldor = 0.0L;
    float fand = 2.5f, f_or = 0.0f;
    _Complex double cand = 1.0 + 1.0 * I, cor = 0.0;
#pragma omp parallel for reduction(&& : dand, ldand, fand, cand) reduction(|| : dor, ldor, f_or, cor)
    for (int i = 0; i < N; i++) {
      double a = i == odd ? 0.0 : 0.5, o = i == odd ? -3.0 : 0.0;
      dand = dand && a;
      ldand = ldand && (long double)a;
      fand = fand && (float)a;
      cand = cand && (a * I);
      dor = dor || o;
      ldor = ldor || (long double)o;
      f_or = f_or || (float)o;
      cor = cor || (o * I);
    }
    int any = odd >= 0;
    CHECK_EQ("&& on double", dand, !any);
    CHECK_EQ("&& on long double", (int)ldand, !any);
    CHECK_EQ("&& on float", (int)fand, !any);
    CHECK_EQ("&& on complex (real part)", (int)creal(cand), !any);
    CHECK_EQ("&& on complex (imaginary part)", (int)cimag(cand), 0);
    CHECK_EQ("|| on double", dor, any);
    CHECK_EQ("|| on long double", (int)ldor, any);
    CHECK_EQ("|| on float", (int)f_or, any);
    CHECK_EQ("|| on complex (real part)", (int)creal(cor), any);

    /* the original value takes part: a false original makes && false, a true one || true */
    double d0 = 0.0, d1 = 7.0;
#pragma omp parallel
    {
#pragma omp for reduction(&& : d0) reduction(|| : d1) nowait
      for (int i = 0; i < N; i++) {
        d0 = d0 && 1.0;
        d1 = d1 || (i == odd ? 1.0 : 0.0);
      }
#pragma omp barrier
    }
    CHECK_EQ("&& with a false original", d0, 0);
    CHECK_EQ("|| with a true original", d1, 1);
  }
  return failures != 0;
}
