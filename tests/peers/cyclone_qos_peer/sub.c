/* cyclone_qos_peer sub: the reader's run, on the main thread.
 *
 * Creates the entities (the reader's listener, events.c, prints the status events on Cyclone's
 * threads), prints "ready", then waits on a waitset holding a read condition (any sample
 * state) and the stop guard condition. Each wake-up takes everything with dds_take (loaned
 * buffers): a "sample" line per valid sample, its payload checked against the pattern, and an
 * "instance" line whenever an instance's state changes to disposed or no-writers (seen on
 * invalid samples and on valid ones). With --count N it ends once N samples are in (after
 * --linger more seconds, an extension, default 0); with --count 0 at --timeout; with fewer than
 * N at --timeout it fails (exit 1).
 */
#include <stdio.h>
#include <stdlib.h>

#include "peer.h"
#include "qos_test.h"

#define SUB_BATCH 64
#define SUB_WRITER_NAMES 64

enum sub_status { SUB_DONE, SUB_TIMEOUT, SUB_FAILED };
enum instance_seen { SEEN_ALIVE, SEEN_DISPOSED, SEEN_UNREGISTERED };

struct instance {
  int32_t id;
  enum instance_seen seen;
};

struct writer_name {
  dds_instance_handle_t handle;
  char text[40];
};

struct sub {
  const struct peer_options* o;
  struct peer_entities e;
  struct peer_events ev;
  int64_t received;
  bool all_ok;
  struct instance* instances;
  size_t n_instances, cap_instances;
  struct writer_name writers[SUB_WRITER_NAMES];
  size_t n_writers;
  char scratch[40]; /* a writer's name when the cache is full */
};

/* The writer's GUID as "<24 hex digits of the prefix>:<8 of the entity id>", or its instance
 * handle in decimal if Cyclone no longer knows it as matched. */
static void format_writer(const struct sub* s, dds_instance_handle_t handle, char* out) {
  dds_builtintopic_endpoint_t* ep = dds_get_matched_publication_data(s->e.endpoint, handle);
  if (ep == NULL) {
    snprintf(out, 40, "%llu", (unsigned long long)handle);
    return;
  }
  const uint8_t* g = ep->key.v;
  for (int i = 0; i < 12; i++) snprintf(out + 2 * i, 3, "%02x", g[i]);
  snprintf(out + 24, 16, ":%02x%02x%02x%02x", g[12], g[13], g[14], g[15]);
  dds_builtintopic_free_endpoint(ep);
}

static const char* writer_text(struct sub* s, dds_instance_handle_t handle) {
  for (size_t i = 0; i < s->n_writers; i++) {
    if (s->writers[i].handle == handle) return s->writers[i].text;
  }
  char* out = s->scratch;
  if (s->n_writers < SUB_WRITER_NAMES) {
    s->writers[s->n_writers].handle = handle;
    out = s->writers[s->n_writers++].text;
  }
  format_writer(s, handle, out);
  return out;
}

static bool payload_ok(const QosTest_Sample* m) {
  for (uint32_t i = 0; i < m->payload._length; i++) {
    if (m->payload._buffer[i] != peer_payload_byte(m->id, m->seq, i)) return false;
  }
  return true;
}

static void print_sample(struct sub* s, const QosTest_Sample* m, const dds_sample_info_t* info) {
  const bool ok = payload_ok(m);
  s->received++;
  s->all_ok = s->all_ok && ok;
  out_event(
      "{\"event\":\"sample\",\"id\":%d,\"seq\":%d,\"size\":%u,\"ok\":%s,\"source_ts\":%lld,"
      "\"writer\":\"%s\"}",
      m->id, m->seq, m->payload._length, ok ? "true" : "false", (long long)info->source_timestamp,
      writer_text(s, info->publication_handle));
}

static struct instance* find_instance(struct sub* s, int32_t id) {
  for (size_t i = 0; i < s->n_instances; i++) {
    if (s->instances[i].id == id) return &s->instances[i];
  }
  if (s->n_instances == s->cap_instances) {
    size_t cap = s->cap_instances ? 2 * s->cap_instances : 16;
    struct instance* grown = realloc(s->instances, cap * sizeof *grown);
    if (grown == NULL) return NULL;
    s->instances = grown;
    s->cap_instances = cap;
  }
  s->instances[s->n_instances] = (struct instance){id, SEEN_ALIVE};
  return &s->instances[s->n_instances++];
}

/* An "instance" line when instance id is seen in a not-alive state it was not in before. */
static void note_instance_state(struct sub* s, int32_t id, dds_instance_state_t state) {
  enum instance_seen now = state == DDS_IST_NOT_ALIVE_DISPOSED     ? SEEN_DISPOSED
                           : state == DDS_IST_NOT_ALIVE_NO_WRITERS ? SEEN_UNREGISTERED
                                                                   : SEEN_ALIVE;
  struct instance* in = find_instance(s, id);
  if (in == NULL || in->seen == now) return;
  in->seen = now;
  if (now == SEEN_ALIVE) return;
  out_event("{\"event\":\"instance\",\"id\":%d,\"state\":\"%s\"}", id,
            now == SEEN_DISPOSED ? "disposed" : "unregistered");
}

/* One dds_take's worth: the samples first, then the instance states (all samples of an
 * instance in one take carry the same state). Invalid samples carry only the key. */
static void handle_batch(struct sub* s, void** ptrs, const dds_sample_info_t* infos, int n) {
  for (int i = 0; i < n; i++) {
    if (infos[i].valid_data) print_sample(s, ptrs[i], &infos[i]);
  }
  for (int i = 0; i < n; i++) {
    const QosTest_Sample* m = ptrs[i];
    note_instance_state(s, m->id, infos[i].instance_state);
  }
}

static int take_all(struct sub* s) {
  void* ptrs[SUB_BATCH];
  dds_sample_info_t infos[SUB_BATCH];
  for (;;) {
    ptrs[0] = NULL; /* loan */
    dds_return_t n = dds_take(s->e.endpoint, ptrs, infos, SUB_BATCH, SUB_BATCH);
    if (n < 0) {
      out_error("take failed: %s", dds_strretcode(n));
      return -1;
    }
    if (n == 0) return 0;
    handle_batch(s, ptrs, infos, n);
    dds_return_loan(s->e.endpoint, ptrs, n);
    if (n < SUB_BATCH) return 0;
  }
}

static enum sub_status sub_loop(struct sub* s) {
  const struct peer_options* o = s->o;
  const dds_time_t give_up = dds_time() + peer_seconds(o->timeout_s);
  dds_time_t linger_end = -1; /* set once --count samples are in */
  for (;;) {
    if (take_all(s) != 0) return SUB_FAILED;
    dds_time_t now = dds_time();
    if (linger_end < 0 && o->count > 0 && s->received >= o->count) {
      linger_end = now + peer_seconds(o->linger_s);
    }
    if (stop_requested() || (linger_end >= 0 && now >= linger_end)) return SUB_DONE;
    if (linger_end < 0 && now >= give_up) return o->count == 0 ? SUB_DONE : SUB_TIMEOUT;
    dds_waitset_wait_until(s->e.waitset, NULL, 0, linger_end >= 0 ? linger_end : give_up);
  }
}

static enum sub_status sub_run(struct sub* s) {
  dds_entity_t cond = dds_create_readcondition(s->e.endpoint, DDS_ANY_STATE);
  dds_return_t rc = cond < 0 ? cond : dds_waitset_attach(s->e.waitset, cond, 0);
  if (rc < 0) {
    out_error("cannot wait for data: %s", dds_strretcode(rc));
    return SUB_FAILED;
  }
  out_ready();
  enum sub_status st = sub_loop(s);
  if (st == SUB_TIMEOUT) {
    out_error("timeout: %lld of %d samples after %g s", (long long)s->received, s->o->count,
              s->o->timeout_s);
  }
  return st;
}

struct peer_result run_sub(const struct peer_options* o) {
  struct sub s = {.o = o, .all_ok = true};
  enum sub_status st = SUB_FAILED;
  atomic_init(&s.ev.matched_current, 0);
  dds_listener_t* listener = peer_reader_listener(&s.ev);
  if (peer_create_entities(o, listener, &s.e) == 0) st = sub_run(&s);
  dds_delete_listener(listener);
  peer_delete_entities(&s.e);
  free(s.instances);
  return (struct peer_result){.exit_code = st == SUB_DONE ? 0 : 1,
                              .samples = s.received,
                              .ok = s.all_ok && st != SUB_FAILED};
}
