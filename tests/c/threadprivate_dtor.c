// threadprivate_dtor.c - destructors registered with __kmpc_threadprivate_register (what
// clang emits for a C++ threadprivate object under -fnoopenmp-use-tls) run once on every
// other thread's copy when the program ends, after main, and never on the variable itself
// (the program's own static destructor owns it): each copy is made by the registered
// constructor on its thread's first access, keeps its identity across regions, and is
// destroyed exactly once. The destructor counts; the last expected call writes the line the
// harness looks for on stderr (it cannot return a status after main).
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
// oxiomp-test: stderr-contains=threadprivate_dtor: every copy destroyed once
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

typedef struct { int32_t r1, flags, r2, r3; const char *psource; } ident_t;
static ident_t loc = {0, 2, 0, 22, ";threadprivate_dtor.c;main;0;0;;"};
int32_t __kmpc_global_thread_num(ident_t *);
void __kmpc_threadprivate_register(ident_t *, void *, void *(*)(void *),
                                   void *(*)(void *, void *), void (*)(void *));
void *__kmpc_threadprivate_cached(ident_t *, int32_t, void *, size_t, void ***);

#define MAGIC 0x5eed
#define MAXG 64
typedef struct { int magic, destroyed, uses; } obj;

static obj var = {MAGIC, 0, 0};
static void **cache;
static obj *copy_of[MAXG];
static atomic_int expected = -1, destroyed = 0, bad = 0;

static void *ctor(void *p) {
  obj *o = p;
  o->magic = MAGIC;
  o->destroyed = 0;
  o->uses = 0;
  return p;
}

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

static void dtor(void *p) {
  obj *o = p;
  if (o == &var || o->magic != MAGIC || o->destroyed) atomic_fetch_add(&bad, 1);
  o->destroyed = 1;
  int n = atomic_fetch_add(&destroyed, 1) + 1, want = atomic_load(&expected);
  if (n == want && atomic_load(&bad) == 0) say("threadprivate_dtor: every copy destroyed once\n");
  if (n > want) say("FAIL: threadprivate_dtor: more destructor calls than copies\n");
}

static void use(int *wrong) {
  int32_t g = __kmpc_global_thread_num(&loc);
  obj *o = __kmpc_threadprivate_cached(&loc, g, &var, sizeof var, &cache);
  if (o->magic != MAGIC || o->destroyed) ++*wrong;
  o->uses++;
  if (o == &var || g < 0 || g >= MAXG) return;
  if (copy_of[g] && copy_of[g] != o) ++*wrong; /* a thread keeps its copy */
  copy_of[g] = o;
}

int main(void) {
  __kmpc_threadprivate_register(&loc, &var, ctor, NULL, dtor);
  int wrong = 0;
  for (int rep = 0; rep < 3; rep++) {
#pragma omp parallel reduction(+ : wrong)
    use(&wrong);
#pragma omp parallel num_threads(3) reduction(+ : wrong)
    use(&wrong);
  }
  int copies = 0;
  for (int g = 0; g < MAXG; g++) copies += copy_of[g] != NULL;
  CHECK_EQ("copies valid and kept across regions", wrong, 0);
  CHECK("a num_threads(3) region made copies", copies >= 2);
  CHECK_EQ("no destructor ran before the end", atomic_load(&destroyed), 0);
  CHECK_EQ("the variable itself is not a copy", var.destroyed, 0);
  atomic_store(&expected, copies);
  return failures != 0;
}
