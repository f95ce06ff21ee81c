// check.h - the failure reporting every self-checking test program shares: CHECK_EQ / CHECK
// print one "FAIL: what (got X, expected Y)" line on stderr per failed check (the first 50),
// and count them in `failures`; the program exits non-zero when failures > 0.
#ifndef OXIOMP_TEST_CHECK_H
#define OXIOMP_TEST_CHECK_H
#include <stdio.h>

static int failures = 0;
__attribute__((unused)) static void fail_int(const char *what, long long got, long long exp) {
  if (__atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST) < 50)
    fprintf(stderr, "FAIL: %s (got %lld, expected %lld)\n", what, got, exp);
}
#define CHECK_EQ(what, got, exp)                                               \
  do {                                                                         \
    long long g_ = (long long)(got), e_ = (long long)(exp);                    \
    if (g_ != e_) fail_int(what, g_, e_);                                      \
  } while (0)
#define CHECK(what, cond) CHECK_EQ(what, !!(cond), 1)
#endif
