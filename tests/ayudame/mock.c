/* A recording Ayudame library for the tests: every event as one line, in the order the
 * calls take its lock (so an event that happens before another is written before it), to
 * the file AYU_MOCK_OUT names (standard error without it). */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

static const char *names[] = {
    "NULL", "PREINIT", "INIT", "FINISH", "REGISTERFUNCTION", "ADDTASK", "ADDHIDDENTASK",
    "ADDDEPENDENCY", "ADDTASKTOQUEUE", "PRESELECTTASK", "PRERUNTASK", "RUNTASK",
    "POSTRUNTASK", "RUNTASKFAILED", "REMOVETASK", "WAITON", "BARRIER", "ADDWAITONTASK",
};

void AYU_event(int event, const int64_t id, void *data) {
  pthread_mutex_lock(&lock);
  if (!out) {
    const char *path = getenv("AYU_MOCK_OUT");
    out = path ? fopen(path, "w") : stderr;
    if (!out)
      out = stderr;
  }
  const char *name = event >= 0 && event <= 17 ? names[event] : "UNKNOWN";
  fprintf(out, "%s %" PRId64, name, id);
  switch (event) {
  case 1:
    fprintf(out, " runtime=%d", *(int *)data);
    break;
  case 4:
    fprintf(out, " name=%s", (const char *)data);
    break;
  case 5: {
    const int64_t *d = data;
    fprintf(out, " function=%" PRId64 " priority=%" PRId64, d[0], d[1]);
    break;
  }
  case 7: {
    const uintptr_t *d = data;
    fprintf(out, " predecessor=%" PRIuPTR " address=%#" PRIxPTR " original=%#" PRIxPTR, d[0], d[1], d[2]);
    break;
  }
  case 8:
  case 10:
    fprintf(out, " thread=%" PRIdPTR, *(const intptr_t *)data);
    break;
  default:
    if (data)
      fprintf(out, " data=%p", data);
  }
  fputc('\n', out);
  fflush(out);
  pthread_mutex_unlock(&lock);
}
