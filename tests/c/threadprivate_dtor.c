// threadprivate_dtor.c - destructors registered with __kmpc_threadprivate_register (what
// clang emits for a C++ threadprivate object under -fnoopenmp-use-tls) run once on every
// other thread's copy when the program ends, after main, and never on the variable itself
// (the program's own static destructor owns it): each copy is made by the registered
// constructor on its thread's first access, keeps its identity across regions, and is
// destroyed exactly once. The destructor counts; the last expected call writes the line the
// harness looks for on stderr, and a wrong call (on the variable, on a copy twice, one call
// too many) ends the process with status 1 at once (the status after main is otherwise 0).
// Two children, forked before the parent's count is set (so that any destructor call in them
// is one too many), check when no copy may be destroyed: a child that exits with the copies it
// inherited (the parent's objects), and a child that made copies of its own but exits while
// another initial thread (a pthread) is inside a parallel region whose threads use theirs.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
// oxiomp-test: cflags=-lpthread
// oxiomp-test: stderr-contains=threadprivate_dtor: every copy destroyed once
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#include "kmp_abi.h"
static ident_t loc = {0, 2, 0, 22, ";threadprivate_dtor.c;main;0;0;;"};

#define MAGIC 0x5eed
#define MAXG 64
typedef struct { int magic, destroyed, uses; } obj;

static obj var = {MAGIC, 0, 0};
static void **cache;
static obj *copy_of[MAXG];
static atomic_int expected = -1, destroyed = 0;

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
  if (o == &var || o->magic != MAGIC || o->destroyed) {
    say("FAIL: threadprivate_dtor: a destructor call on the variable or on a destroyed copy\n");
    _exit(1);
  }
  o->destroyed = 1;
  int n = atomic_fetch_add(&destroyed, 1) + 1, want = atomic_load(&expected);
  if (n > want) {
    say("FAIL: threadprivate_dtor: more destructor calls than copies\n");
    _exit(1);
  }
  if (n == want) say("threadprivate_dtor: every copy destroyed once\n");
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

static atomic_int inside = 0;

/* A pthread (an initial thread of its own) in a region whose threads use their copies, until
 * the process ends. */
static void *busy_root(void *arg) {
  (void)arg;
  int wrong = 0;
#pragma omp parallel num_threads(2)
  {
    use(&wrong);
    atomic_fetch_add(&inside, 1);
    for (;;) sched_yield();
  }
  return NULL;
}

/* Runs `body` in a child and returns its exit status (-1 if it did not exit). */
static int in_child(void (*body)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    body();
    exit(0); /* runs the library's unload, where the copies would be destroyed */
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

static void exit_with_inherited_copies(void) {}

static void exit_while_another_root_is_in_a_region(void) {
  int wrong = 0;
#pragma omp parallel num_threads(3) reduction(+ : wrong)
  use(&wrong); /* copies of the child's own */
  pthread_t t;
  pthread_create(&t, NULL, busy_root, NULL);
  while (atomic_load(&inside) < 2) sched_yield();
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
  CHECK_EQ("a forked child destroys no inherited copy", in_child(exit_with_inherited_copies), 0);
  CHECK_EQ("no copy destroyed while another initial thread is in a region",
           in_child(exit_while_another_root_is_in_a_region), 0);
  atomic_store(&expected, copies);
  return failures != 0;
}
