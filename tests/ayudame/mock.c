/* A recording Ayudame library for the tests: every event as one line, in the order the
 * calls take its lock (so an event that happens before another is written before it), to
 * the file AYU_MOCK_OUT names (standard error without it), and each access oxiomp tells
 * (`oxiomp_ayu_access`) as a line `ACCESS task address=A type=T`. Its requests, set by the
 * environment (neutral without it):
 *   AYU_MOCK_BLOCK=f:n      tasks of function f (a REGISTERFUNCTION name) are blocked until n
 *                           tasks of other functions have been removed;
 *   AYU_MOCK_BREAK=n        the breakpoint is set from the start (logged as
 *                           "BREAKPOINT 0 state=on") until the n-th task is added
 *                           (n = edge: until the first edge is told);
 *   AYU_MOCK_PRIORITY=f:p   tasks of function f get priority p;
 *   AYU_MOCK_THREADS=n      the number of threads requested (0: none);
 *   AYU_MOCK_DELAY_US=n     every event blocks its thread n microseconds (as a library that
 *                           pauses inside AYU_event does, briefly). */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

#define MAX_FUNCTIONS 64
#define MAX_TASKS 65536
static char functions[MAX_FUNCTIONS][128]; /* by function id */
static int task_function[MAX_TASKS];       /* by task id (ids below MAX_TASKS) */
static int removed_other;                  /* tasks removed that are not of the blocked function */
static int breakpoint, added;

/* The value of "f:n" setting `name` for function `f` (its id), or `none`. */
static int setting_for(const char *name, int function, int none) {
  const char *v = getenv(name);
  if (!v || function <= 0 || function >= MAX_FUNCTIONS)
    return none;
  const char *colon = strrchr(v, ':');
  if (!colon || strncmp(v, functions[function], colon - v) || functions[function][colon - v])
    return none;
  return atoi(colon + 1);
}

/* Clears the breakpoint (called with the lock held, in the middle of an event's line). */
static void break_off(void) {
  __atomic_store_n(&breakpoint, 0, __ATOMIC_SEQ_CST);
  fprintf(out, "\nBREAKPOINT 0 state=off");
}

/* Opens the log (called with the lock held). */
static void open_out(void) {
  if (!out) {
    const char *path = getenv("AYU_MOCK_OUT");
    out = path ? fopen(path, "w") : stderr;
    if (!out)
      out = stderr;
  }
}

static int function_of(int64_t id) { return id > 0 && id < MAX_TASKS ? task_function[id] : 0; }

static const char *names[] = {
    "NULL", "PREINIT", "INIT", "FINISH", "REGISTERFUNCTION", "ADDTASK", "ADDHIDDENTASK",
    "ADDDEPENDENCY", "ADDTASKTOQUEUE", "PRESELECTTASK", "PRERUNTASK", "RUNTASK",
    "POSTRUNTASK", "RUNTASKFAILED", "REMOVETASK", "WAITON", "BARRIER", "ADDWAITONTASK",
};

void AYU_event(int event, const int64_t id, void *data) {
  pthread_mutex_lock(&lock);
  open_out();
  const char *name = event >= 0 && event <= 17 ? names[event] : "UNKNOWN";
  fprintf(out, "%s %" PRId64, name, id);
  switch (event) {
  case 1:
    fprintf(out, " runtime=%d", *(int *)data);
    if (getenv("AYU_MOCK_BREAK")) {
      __atomic_store_n(&breakpoint, 1, __ATOMIC_SEQ_CST);
      fprintf(out, "\nBREAKPOINT 0 state=on");
    }
    break;
  case 4:
    fprintf(out, " name=%s", (const char *)data);
    if (id > 0 && id < MAX_FUNCTIONS)
      snprintf(functions[id], sizeof functions[id], "%s", (const char *)data);
    break;
  case 5: {
    const int64_t *d = data;
    fprintf(out, " function=%" PRId64 " priority=%" PRId64, d[0], d[1]);
    if (id > 0 && id < MAX_TASKS)
      task_function[id] = (int)d[0];
    if (getenv("AYU_MOCK_BREAK") && ++added == atoi(getenv("AYU_MOCK_BREAK")))
      break_off();
    break;
  }
  case 7: {
    const uintptr_t *d = data;
    fprintf(out, " predecessor=%" PRIuPTR " address=%#" PRIxPTR " original=%#" PRIxPTR, d[0], d[1], d[2]);
    const char *b = getenv("AYU_MOCK_BREAK");
    if (b && !strcmp(b, "edge") && __atomic_load_n(&breakpoint, __ATOMIC_SEQ_CST))
      break_off();
    break;
  }
  case 8:
  case 10:
    fprintf(out, " thread=%" PRIdPTR, *(const intptr_t *)data);
    break;
  case 14:
    if (setting_for("AYU_MOCK_BLOCK", function_of(id), -1) < 0)
      removed_other++;
    break;
  default:
    if (data)
      fprintf(out, " data=%p", data);
  }
  fputc('\n', out);
  fflush(out);
  pthread_mutex_unlock(&lock);
  const char *delay = getenv("AYU_MOCK_DELAY_US");
  if (delay) {
    struct timespec t = {0, atol(delay) * 1000L};
    nanosleep(&t, NULL);
  }
}

void oxiomp_ayu_access(int64_t id, uintptr_t address, int type) {
  pthread_mutex_lock(&lock);
  open_out();
  fprintf(out, "ACCESS %" PRId64 " address=%#" PRIxPTR " type=%d\n", id, address, type);
  fflush(out);
  pthread_mutex_unlock(&lock);
}

int AYU_getBreakpoint(void) { return __atomic_load_n(&breakpoint, __ATOMIC_SEQ_CST); }

bool AYU_isBlocked(const int id) {
  pthread_mutex_lock(&lock);
  int until = setting_for("AYU_MOCK_BLOCK", function_of(id), -1);
  bool blocked = until >= 0 && removed_other < until;
  pthread_mutex_unlock(&lock);
  return blocked;
}

int AYU_getPriorityLevel(int id) {
  pthread_mutex_lock(&lock);
  int level = setting_for("AYU_MOCK_PRIORITY", function_of(id), -1);
  pthread_mutex_unlock(&lock);
  return level;
}

unsigned int AYU_getNumThreads(void) {
  const char *v = getenv("AYU_MOCK_THREADS");
  return v ? (unsigned)atoi(v) : 0;
}
