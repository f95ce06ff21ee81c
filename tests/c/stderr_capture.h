// stderr_capture.h - a program that checks its own warnings: capture_stderr() sends file
// descriptor 2 to a temporary file (call it before the runtime starts, so that its start-up
// warnings land there too); captured_stderr() puts stderr back, copies what was captured to
// it (so that the harness sees it as well) and returns it; lines_containing() counts lines.
#ifndef OXIOMP_TEST_STDERR_CAPTURE_H
#define OXIOMP_TEST_STDERR_CAPTURE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *capture_file;
static int capture_saved_fd = -1;

static void capture_stderr(void) {
  fflush(stderr);
  capture_file = tmpfile();
  if (!capture_file) return;
  capture_saved_fd = dup(2);
  dup2(fileno(capture_file), 2);
}

/* The text written on stderr since capture_stderr() (a static buffer). */
static const char *captured_stderr(void) {
  static char text[1 << 16];
  fflush(stderr);
  if (!capture_file) return "";
  dup2(capture_saved_fd, 2);
  long n = ftell(capture_file);
  if (n < 0) n = 0;
  if (n > (long)sizeof text - 1) n = sizeof text - 1;
  rewind(capture_file);
  n = (long)fread(text, 1, (size_t)n, capture_file);
  text[n] = 0;
  fputs(text, stderr);
  return text;
}

static int lines_containing(const char *text, const char *needle) {
  int count = 0;
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *hit = strstr(line, needle);
    if (hit && hit < line + len) count++;
    line += len + (end ? 1 : 0);
  }
  return count;
}
#endif
