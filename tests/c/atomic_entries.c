// atomic_entries.c - libomp's __kmpc_atomic_* entries (called by Flang and Intel's compilers;
// clang-19 emits atomic instructions instead), by direct calls:
//  * concurrent updates lose nothing: every thread adds, multiplies-by-one-then-adds, or
//    subtracts through the integer (1, 2, 4, 8 bytes), float, double, long double and complex
//    entries 1000 times, and the totals are exact;
//  * max/min entries converge to the extreme operand any thread passes;
//  * the capturing forms return the value after (flag 1) or before (flag 0) the update; the
//    reversed forms compute `rhs OP *lhs`; rd, wr and swp; the mixed-type forms (_float8,
//    _cmplx8) compute in the wider type; the logical and eqv forms;
//  * the compare-and-swap forms (bool_/val_, with and without capture) as OpenMP 5.1 defines
//    `atomic compare`, and a concurrent counter built on val_4_cas;
//  * the generic entries (__kmpc_atomic_4 with a combiner; __kmpc_atomic_16 under the lock);
//  * __kmpc_atomic_start/end exclude each other.
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <complex.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "kmp_abi.h"

#define N 1000
typedef float _Complex c4;
typedef double _Complex c8;
typedef long double _Complex c10;

void __kmpc_atomic_fixed1_add(ident_t *, int, int8_t *, int8_t);
void __kmpc_atomic_fixed2_add(ident_t *, int, int16_t *, int16_t);
void __kmpc_atomic_fixed4_add(ident_t *, int, int32_t *, int32_t);
void __kmpc_atomic_fixed8_sub(ident_t *, int, int64_t *, int64_t);
void __kmpc_atomic_float4_add(ident_t *, int, float *, float);
void __kmpc_atomic_float8_add(ident_t *, int, double *, double);
void __kmpc_atomic_float10_add(ident_t *, int, long double *, long double);
void __kmpc_atomic_cmplx4_add(ident_t *, int, c4 *, c4);
void __kmpc_atomic_cmplx8_add(ident_t *, int, c8 *, c8);
void __kmpc_atomic_cmplx10_sub(ident_t *, int, c10 *, c10);
void __kmpc_atomic_fixed4_max(ident_t *, int, int32_t *, int32_t);
void __kmpc_atomic_float8_min(ident_t *, int, double *, double);
void __kmpc_atomic_float10_max(ident_t *, int, long double *, long double);
int32_t __kmpc_atomic_fixed4_add_cpt(ident_t *, int, int32_t *, int32_t, int);
int32_t __kmpc_atomic_fixed4_sub_cpt_rev(ident_t *, int, int32_t *, int32_t, int);
void __kmpc_atomic_fixed4_sub_rev(ident_t *, int, int32_t *, int32_t);
uint8_t __kmpc_atomic_fixed1u_shr_cpt(ident_t *, int, uint8_t *, uint8_t, int);
int8_t __kmpc_atomic_fixed1_shr_cpt(ident_t *, int, int8_t *, int8_t, int);
int16_t __kmpc_atomic_fixed2_eqv_cpt(ident_t *, int, int16_t *, int16_t, int);
int32_t __kmpc_atomic_fixed4_andl_cpt(ident_t *, int, int32_t *, int32_t, int);
int64_t __kmpc_atomic_fixed8_orl_cpt(ident_t *, int, int64_t *, int64_t, int);
void __kmpc_atomic_fixed4_mul_float8(ident_t *, int, int32_t *, double);
void __kmpc_atomic_float4_div_float8(ident_t *, int, float *, double);
double __kmpc_atomic_float8_div_cpt_rev(ident_t *, int, double *, double, int);
long double __kmpc_atomic_float10_rd(ident_t *, int, long double *);
void __kmpc_atomic_float10_wr(ident_t *, int, long double *, long double);
int64_t __kmpc_atomic_fixed8_swp(ident_t *, int, int64_t *, int64_t);
void __kmpc_atomic_cmplx4_mul_cpt(ident_t *, int, c4 *, c4, c4 *, int);
void __kmpc_atomic_cmplx4_swp(ident_t *, int, c4 *, c4, c4 *);
c4 __kmpc_atomic_cmplx4_rd(ident_t *, int, c4 *);
void __kmpc_atomic_cmplx4_add_cmplx8(ident_t *, int, c4 *, c8);
c8 __kmpc_atomic_cmplx8_div_cpt(ident_t *, int, c8 *, c8, int);
c10 __kmpc_atomic_cmplx10_swp(ident_t *, int, c10 *, c10);
bool __kmpc_atomic_bool_4_cas(ident_t *, int, int32_t *, int32_t, int32_t);
int8_t __kmpc_atomic_val_1_cas(ident_t *, int, int8_t *, int8_t, int8_t);
bool __kmpc_atomic_bool_8_cas_cpt(ident_t *, int, int64_t *, int64_t, int64_t, int64_t *);
int16_t __kmpc_atomic_val_2_cas_cpt(ident_t *, int, int16_t *, int16_t, int16_t, int16_t *);
int32_t __kmpc_atomic_val_4_cas(ident_t *, int, int32_t *, int32_t, int32_t);
void __kmpc_atomic_4(ident_t *, int, void *, void *, void (*)(void *, void *, void *));
void __kmpc_atomic_16(ident_t *, int, void *, void *, void (*)(void *, void *, void *));
void __kmpc_atomic_start(void);
void __kmpc_atomic_end(void);

static void add_i32(void *out, void *a, void *b) { *(int32_t *)out = *(int32_t *)a + *(int32_t *)b; }
static void add_2xi64(void *out, void *a, void *b) {
  int64_t *o = out, *x = a, *y = b;
  o[0] = x[0] + y[0];
  o[1] = x[1] + y[1];
}

int main(void) {
  int8_t i1 = 0;
  int16_t i2 = 0;
  int32_t i4 = 0, mx = -1000000, cas_counter = 0, gen = 0;
  int64_t i8 = 0, pair[2] __attribute__((aligned(16))) = {0, 0};
  float f4 = 0;
  double f8 = 0, mn = 1e300;
  long double f10 = 0, mx10 = -1e300L;
  c4 z4 = 0;
  c8 z8 = 0;
  c10 z10 = 0;
  int inside = 0, overlap = 0, threads = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    int g = __kmpc_global_thread_num(NULL);
#pragma omp atomic
    threads++;
    for (int k = 0; k < N; k++) {
      __kmpc_atomic_fixed1_add(NULL, g, &i1, 1); // wraps: checked modulo 256
      __kmpc_atomic_fixed2_add(NULL, g, &i2, 1);
      __kmpc_atomic_fixed4_add(NULL, g, &i4, 3);
      __kmpc_atomic_fixed8_sub(NULL, g, &i8, 5);
      __kmpc_atomic_float4_add(NULL, g, &f4, 0.5f);
      __kmpc_atomic_float8_add(NULL, g, &f8, 0.25);
      __kmpc_atomic_float10_add(NULL, g, &f10, 0.125L);
      __kmpc_atomic_cmplx4_add(NULL, g, &z4, 1.0f + 2.0f * I);
      __kmpc_atomic_cmplx8_add(NULL, g, &z8, 2.0 - 1.0 * I);
      __kmpc_atomic_cmplx10_sub(NULL, g, &z10, 1.0L + 1.0L * I);
      __kmpc_atomic_fixed4_max(NULL, g, &mx, t * N + k);
      __kmpc_atomic_float8_min(NULL, g, &mn, -(double)(t * N + k));
      __kmpc_atomic_float10_max(NULL, g, &mx10, (long double)(t * N + k));
      int32_t seen = __atomic_load_n(&cas_counter, __ATOMIC_RELAXED), was;
      while ((was = __kmpc_atomic_val_4_cas(NULL, g, &cas_counter, seen, seen + 1)) != seen) seen = was;
      int32_t one = 1;
      __kmpc_atomic_4(NULL, g, &gen, &one, add_i32);
      int64_t d[2] = {1, 2};
      __kmpc_atomic_16(NULL, g, pair, d, add_2xi64);
      if (k % 50 == 0) {
        __kmpc_atomic_start();
        if (__atomic_fetch_add(&inside, 1, __ATOMIC_SEQ_CST) != 0) overlap = 1;
        for (volatile int spin = 0; spin < 1000; spin++) {
        }
        __atomic_fetch_sub(&inside, 1, __ATOMIC_SEQ_CST);
        __kmpc_atomic_end();
      }
    }
  }
  long n = (long)threads * N;
  CHECK_EQ("fixed1_add (mod 256)", (uint8_t)i1, (uint8_t)n);
  CHECK_EQ("fixed2_add", i2, (int16_t)n);
  CHECK_EQ("fixed4_add", i4, 3 * n);
  CHECK_EQ("fixed8_sub", i8, -5 * n);
  CHECK_EQ("float4_add", f4 == 0.5f * n, 1);
  CHECK_EQ("float8_add", f8 == 0.25 * n, 1);
  CHECK_EQ("float10_add", f10 == 0.125L * n, 1);
  CHECK_EQ("cmplx4_add", crealf(z4) == n && cimagf(z4) == 2 * n, 1);
  CHECK_EQ("cmplx8_add", creal(z8) == 2 * n && cimag(z8) == -n, 1);
  CHECK_EQ("cmplx10_sub", creall(z10) == -n && cimagl(z10) == -n, 1);
  CHECK_EQ("fixed4_max", mx, (threads - 1) * N + N - 1);
  CHECK_EQ("float8_min", mn == -(double)((threads - 1) * N + N - 1), 1);
  CHECK_EQ("float10_max", mx10 == (long double)((threads - 1) * N + N - 1), 1);
  CHECK_EQ("counter on val_4_cas", cas_counter, n);
  CHECK_EQ("generic __kmpc_atomic_4", gen, n);
  CHECK_EQ("generic __kmpc_atomic_16", pair[0] == n && pair[1] == 2 * n, 1);
  CHECK_EQ("__kmpc_atomic_start/end overlapped", overlap, 0);

  // Capturing, reversed, mixed, logical forms, one thread.
  int32_t x = 10;
  CHECK_EQ("add_cpt flag 1 returns the new value", __kmpc_atomic_fixed4_add_cpt(NULL, 0, &x, 5, 1), 15);
  CHECK_EQ("add_cpt flag 0 returns the old value", __kmpc_atomic_fixed4_add_cpt(NULL, 0, &x, 5, 0), 15);
  CHECK_EQ("after two add_cpt", x, 20);
  __kmpc_atomic_fixed4_sub_rev(NULL, 0, &x, 50);
  CHECK_EQ("sub_rev computes rhs - x", x, 30);
  CHECK_EQ("sub_cpt_rev flag 0", __kmpc_atomic_fixed4_sub_cpt_rev(NULL, 0, &x, 100, 0), 30);
  CHECK_EQ("after sub_cpt_rev", x, 70);
  uint8_t u = 0x80;
  CHECK_EQ("fixed1u_shr_cpt is logical", __kmpc_atomic_fixed1u_shr_cpt(NULL, 0, &u, 3, 1), 0x10);
  int8_t s8 = -128;
  CHECK_EQ("fixed1_shr_cpt is arithmetic", __kmpc_atomic_fixed1_shr_cpt(NULL, 0, &s8, 3, 1), -16);
  int16_t e = 0x0f0f;
  CHECK_EQ("eqv is x ^ ~y", __kmpc_atomic_fixed2_eqv_cpt(NULL, 0, &e, 0x00ff, 1), (int16_t)(0x0f0f ^ ~0x00ff));
  int32_t l = 7;
  CHECK_EQ("andl gives 0 or 1", __kmpc_atomic_fixed4_andl_cpt(NULL, 0, &l, 9, 1), 1);
  int64_t o = 0;
  CHECK_EQ("orl of 0 and 0", __kmpc_atomic_fixed8_orl_cpt(NULL, 0, &o, 0, 1), 0);
  int32_t m = 10;
  __kmpc_atomic_fixed4_mul_float8(NULL, 0, &m, 2.55);
  CHECK_EQ("fixed4_mul_float8 computes in double, then truncates", m, 25);
  float q = 1.0f;
  __kmpc_atomic_float4_div_float8(NULL, 0, &q, 4.0);
  CHECK_EQ("float4_div_float8", q == 0.25f, 1);
  double r = 4.0;
  CHECK_EQ("float8_div_cpt_rev flag 1", __kmpc_atomic_float8_div_cpt_rev(NULL, 0, &r, 2.0, 1) == 0.5, 1);
  long double w = 0;
  __kmpc_atomic_float10_wr(NULL, 0, &w, 1.0L / 3.0L);
  CHECK_EQ("float10 wr/rd keep every bit", __kmpc_atomic_float10_rd(NULL, 0, &w) == 1.0L / 3.0L, 1);
  int64_t sw = 5;
  CHECK_EQ("fixed8_swp returns the old value", __kmpc_atomic_fixed8_swp(NULL, 0, &sw, 9), 5);
  CHECK_EQ("fixed8_swp stores", sw, 9);
  c4 zc = 1.0f + 1.0f * I, out;
  __kmpc_atomic_cmplx4_mul_cpt(NULL, 0, &zc, 2.0f * I, &out, 1);
  CHECK_EQ("cmplx4_mul_cpt returns through out", crealf(out) == -2 && cimagf(out) == 2, 1);
  __kmpc_atomic_cmplx4_swp(NULL, 0, &zc, 3.0f, &out);
  CHECK_EQ("cmplx4_swp old value", crealf(out) == -2 && cimagf(out) == 2, 1);
  CHECK_EQ("cmplx4_rd", crealf(__kmpc_atomic_cmplx4_rd(NULL, 0, &zc)) == 3, 1);
  __kmpc_atomic_cmplx4_add_cmplx8(NULL, 0, &zc, 0.5 + 0.5 * I);
  CHECK_EQ("cmplx4_add_cmplx8", crealf(zc) == 3.5f && cimagf(zc) == 0.5f, 1);
  c8 zd = 4.0;
  CHECK_EQ("cmplx8_div_cpt flag 0", creal(__kmpc_atomic_cmplx8_div_cpt(NULL, 0, &zd, 2.0, 0)) == 4, 1);
  CHECK_EQ("after cmplx8_div_cpt", creal(zd) == 2, 1);
  c10 ze = 1.0L;
  CHECK_EQ("cmplx10_swp", creall(__kmpc_atomic_cmplx10_swp(NULL, 0, &ze, 2.0L)) == 1 && creall(ze) == 2, 1);

  // atomic compare (OpenMP 5.1).
  int32_t c = 1;
  CHECK_EQ("bool_4_cas fails when x != e", __kmpc_atomic_bool_4_cas(NULL, 0, &c, 0, 7), 0);
  CHECK_EQ("bool_4_cas leaves x", c, 1);
  CHECK_EQ("bool_4_cas succeeds when x == e", __kmpc_atomic_bool_4_cas(NULL, 0, &c, 1, 7), 1);
  CHECK_EQ("bool_4_cas stores d", c, 7);
  int8_t c1 = 3;
  CHECK_EQ("val_1_cas returns the old value", __kmpc_atomic_val_1_cas(NULL, 0, &c1, 3, 4), 3);
  CHECK_EQ("val_1_cas stores d", c1, 4);
  int64_t c8v = 10, v8 = -1;
  CHECK_EQ("bool_8_cas_cpt fails", __kmpc_atomic_bool_8_cas_cpt(NULL, 0, &c8v, 11, 12, &v8), 0);
  CHECK_EQ("bool_8_cas_cpt captures the old value on failure", v8, 10);
  v8 = -1;
  CHECK_EQ("bool_8_cas_cpt succeeds", __kmpc_atomic_bool_8_cas_cpt(NULL, 0, &c8v, 10, 12, &v8), 1);
  CHECK_EQ("bool_8_cas_cpt leaves v on success", v8, -1);
  int16_t c2 = 5, v2 = 0;
  CHECK_EQ("val_2_cas_cpt returns the old value", __kmpc_atomic_val_2_cas_cpt(NULL, 0, &c2, 5, 6, &v2), 5);
  CHECK_EQ("val_2_cas_cpt captures the new value", v2, 6);
  CHECK_EQ("val_2_cas_cpt failing returns the old value", __kmpc_atomic_val_2_cas_cpt(NULL, 0, &c2, 5, 9, &v2), 6);
  CHECK_EQ("val_2_cas_cpt failing captures x", v2, 6);
  return failures != 0;
}
