// lock_null.c - a lock routine given a null lock pointer stops the program with one error that
// names the call and the null pointer (omp_set_nest_lock(NULL) said "not initialized"); so does
// omp_set_lock on a lock whose bytes are garbage (all 0xff), naming the call and the lock not
// initialized. Each call is made in a child process of its own, which must die of SIGABRT
// having written that line.
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: env=OMP_OVNI=0
// oxiomp-test: gcc-reference=skip
// (libgomp crashes on a null lock instead of reporting it.)
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void set_lock(void) { omp_set_lock(NULL); }
static void unset_lock(void) { omp_unset_lock(NULL); }
static void test_lock(void) { (void)omp_test_lock(NULL); }
static void set_nest_lock(void) { omp_set_nest_lock(NULL); }
static void unset_nest_lock(void) { omp_unset_nest_lock(NULL); }
static void test_nest_lock(void) { (void)omp_test_nest_lock(NULL); }
static void destroy_nest_lock(void) { omp_destroy_nest_lock(NULL); }
static void init_nest_lock(void) { omp_init_nest_lock(NULL); }
static void init_lock(void) { omp_init_lock(NULL); }
static void destroy_lock(void) { omp_destroy_lock(NULL); }
static void set_garbage_lock(void) {
  omp_lock_t l;
  memset(&l, 0xff, sizeof l);
  omp_set_lock(&l);
}

#define NULL_PTR "the lock pointer is null"
static const struct {
  const char *name;
  void (*call)(void);
  const char *why;
} calls[] = {
    {"omp_set_lock", set_lock, NULL_PTR},
    {"omp_unset_lock", unset_lock, NULL_PTR},
    {"omp_test_lock", test_lock, NULL_PTR},
    {"omp_set_nest_lock", set_nest_lock, NULL_PTR},
    {"omp_unset_nest_lock", unset_nest_lock, NULL_PTR},
    {"omp_test_nest_lock", test_nest_lock, NULL_PTR},
    {"omp_destroy_nest_lock", destroy_nest_lock, NULL_PTR},
    {"omp_init_nest_lock", init_nest_lock, NULL_PTR},
    {"omp_init_lock", init_lock, NULL_PTR},
    {"omp_destroy_lock", destroy_lock, NULL_PTR},
    {"omp_set_lock", set_garbage_lock, "the lock is not initialized (or was destroyed)"},
};

int main(void) {
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
    int fd[2];
    if (pipe(fd) != 0) return 2;
    pid_t pid = fork();
    if (pid == 0) {
      dup2(fd[1], 2);
      calls[i].call();
      _exit(0);
    }
    close(fd[1]);
    char err[4096];
    size_t len = 0;
    ssize_t got;
    while ((got = read(fd[0], err + len, sizeof err - 1 - len)) > 0) len += (size_t)got;
    err[len] = 0;
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    char want[200], what[250];
    snprintf(want, sizeof want, "oxiomp: error: %s: %s; aborting\n", calls[i].name, calls[i].why);
    snprintf(what, sizeof what, "%s (%s): died of SIGABRT", calls[i].name, calls[i].why);
    CHECK(what, WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    snprintf(what, sizeof what, "%s (%s): the error line", calls[i].name, calls[i].why);
    CHECK(what, strcmp(err, want) == 0);
    if (strcmp(err, want) != 0) fprintf(stderr, "got: %s", err);
  }
  return failures != 0;
}
