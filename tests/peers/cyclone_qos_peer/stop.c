/* cyclone_qos_peer: SIGINT and SIGTERM end the program cleanly ("done", exit 0).
 *
 * stop_init() runs on the main thread before any DDS call: it blocks both signals, so every
 * thread started later (Cyclone's included) inherits the mask, and starts one signal thread that
 * takes them with sigwait(). That thread sets the stop flag and triggers the guard condition the
 * main thread's waitset holds, so a wait in pub.c or sub.c returns at once. The main thread
 * checks stop_requested() after each wait.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "peer.h"

static atomic_bool stop_flag;
static atomic_int stop_guard; /* dds_entity_t of the guard condition, 0 = none */
static sigset_t stop_signals;

static void* signal_thread(void* arg) {
  (void)arg;
  for (;;) {
    int sig;
    if (sigwait(&stop_signals, &sig) != 0) continue;
    atomic_store(&stop_flag, true);
    dds_entity_t guard = atomic_load(&stop_guard);
    if (guard > 0) dds_set_guardcondition(guard, true);
  }
  return NULL;
}

void stop_init(void) {
  pthread_t thread;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  int rc = pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
  if (rc == 0) rc = pthread_create(&thread, NULL, signal_thread, NULL);
  if (rc == 0) rc = pthread_detach(thread);
  if (rc != 0) {
    out_error("cannot set up the signal thread (error %d)", rc);
    exit(1);
  }
}

bool stop_requested(void) {
  return atomic_load(&stop_flag);
}

void stop_set_guard(dds_entity_t guard) {
  atomic_store(&stop_guard, guard);
  /* A signal that came before the guard existed. */
  if (guard > 0 && stop_requested()) dds_set_guardcondition(guard, true);
}
