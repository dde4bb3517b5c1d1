/* cyclone_qos_peer: the JSON lines on stdout (../README.md, "Output").
 *
 * Called from the main thread and from Cyclone's listener threads, so every line is written and
 * flushed under one mutex. "ready" is the first line: a status event that comes while the
 * entities are still being created (Cyclone may call a listener from inside dds_create_writer)
 * waits in a buffer until out_ready() has printed "ready". "done" is the last line: after
 * out_done() further events are dropped.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool ready_printed;
static bool done_printed;
static char* held;      /* lines before "ready", each ending in '\n' */
static size_t held_len; /* bytes in held */

static void hold_line(const char* line) {
  size_t n = strlen(line);
  char* grown = realloc(held, held_len + n + 2);
  if (grown == NULL) return; /* out of memory: the line is lost, nothing else */
  held = grown;
  memcpy(held + held_len, line, n);
  held[held_len + n] = '\n';
  held_len += n + 1;
  held[held_len] = '\0';
}

void out_event(const char* fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&lock);
  if (done_printed) {
    /* after the last line: dropped */
  } else if (!ready_printed) {
    hold_line(line);
  } else {
    printf("%s\n", line);
    fflush(stdout);
  }
  pthread_mutex_unlock(&lock);
}

void out_ready(void) {
  pthread_mutex_lock(&lock);
  if (!ready_printed && !done_printed) {
    printf("{\"event\":\"ready\"}\n");
    if (held != NULL) fputs(held, stdout);
    fflush(stdout);
    ready_printed = true;
  }
  free(held);
  held = NULL;
  held_len = 0;
  pthread_mutex_unlock(&lock);
}

void out_done(int64_t samples, bool ok) {
  pthread_mutex_lock(&lock);
  if (!done_printed) {
    printf("{\"event\":\"done\",\"samples\":%lld,\"ok\":%s}\n", (long long)samples,
           ok ? "true" : "false");
    fflush(stdout);
    done_printed = true;
  }
  pthread_mutex_unlock(&lock);
}

void out_error(const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, PEER_NAME ": %s\n", msg);
  fflush(stderr);
}
