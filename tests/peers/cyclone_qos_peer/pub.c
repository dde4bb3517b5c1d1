/* cyclone_qos_peer pub: the writer's run, on the main thread.
 *
 * Creates the entities, prints "ready", waits for --wait-readers matched readers (counted by
 * the writer's listener, events.c, on a Cyclone thread), writes --count samples at --rate
 * (ids 0..K-1 round-robin, seq from 1), prints "written", disposes the --dispose ids,
 * unregisters the other written ids with --unregister-rest, lingers --linger seconds, deletes
 * everything. Every wait is on the waitset holding the stop guard condition, so SIGINT/SIGTERM
 * cut it short; with MANUAL liveliness and --assert-every the waits assert liveliness when due.
 * A write that returns TIMEOUT (reliable flow control, max_blocking) is retried for up to
 * --timeout seconds.
 */
#include <stdlib.h>

#include "peer.h"
#include "qos_test.h"

enum pub_status { PUB_OK, PUB_STOPPED, PUB_FAILED };

struct pub {
  const struct peer_options* o;
  struct peer_entities e;
  struct peer_events ev;
  dds_time_t next_assert; /* 0: no --assert-every */
  int32_t written;
  QosTest_Sample sample; /* its payload buffer holds --size bytes */
};

static void assert_liveliness(struct pub* p) {
  const bool by_participant = p->o->qos.liveliness == DDS_LIVELINESS_MANUAL_BY_PARTICIPANT;
  dds_return_t rc = dds_assert_liveliness(by_participant ? p->e.participant : p->e.endpoint);
  if (rc != DDS_RETCODE_OK) out_error("assert liveliness: %s", dds_strretcode(rc));
}

/* Waits until the time `until`, asserting liveliness when due; false when stopped. */
static bool pub_sleep_until(struct pub* p, dds_time_t until) {
  while (!stop_requested()) {
    dds_time_t now = dds_time();
    if (p->next_assert > 0 && now >= p->next_assert) {
      assert_liveliness(p);
      p->next_assert = now + DDS_MSECS(p->o->assert_every_ms);
    }
    if (now >= until) return true;
    dds_time_t wake = until;
    if (p->next_assert > 0 && p->next_assert < wake) wake = p->next_assert;
    dds_waitset_wait_until(p->e.waitset, NULL, 0, wake);
  }
  return false;
}

static enum pub_status pub_wait_readers(struct pub* p) {
  const dds_time_t give_up = dds_time() + peer_seconds(p->o->timeout_s);
  while (atomic_load(&p->ev.matched_current) < p->o->wait_readers) {
    dds_time_t now = dds_time();
    if (now >= give_up) {
      out_error("timeout: %d of %d readers matched after %g s", atomic_load(&p->ev.matched_current),
                p->o->wait_readers, p->o->timeout_s);
      return PUB_FAILED;
    }
    dds_time_t poll = now + DDS_MSECS(10);
    if (!pub_sleep_until(p, poll < give_up ? poll : give_up)) return PUB_STOPPED;
  }
  return PUB_OK;
}

/* dds_write, dds_dispose or dds_unregister_instance of p->sample, retried while it times out. */
static dds_return_t pub_retrying(struct pub* p, dds_return_t (*op)(dds_entity_t, const void*)) {
  const dds_time_t give_up = dds_time() + peer_seconds(p->o->timeout_s);
  dds_return_t rc;
  while ((rc = op(p->e.endpoint, &p->sample)) == DDS_RETCODE_TIMEOUT) {
    if (stop_requested() || dds_time() >= give_up) break;
  }
  return rc;
}

static void fill_sample(QosTest_Sample* s, int32_t id, int32_t seq) {
  s->id = id;
  s->seq = seq;
  for (uint32_t i = 0; i < s->payload._length; i++) {
    s->payload._buffer[i] = peer_payload_byte(id, seq, i);
  }
}

static enum pub_status pub_write_all(struct pub* p) {
  const struct peer_options* o = p->o;
  const dds_time_t start = dds_time();
  for (int32_t k = 0; k < o->count; k++) {
    if (o->rate > 0 && !pub_sleep_until(p, start + (dds_time_t)((double)k * 1e9 / o->rate))) {
      return PUB_STOPPED;
    }
    if (stop_requested()) return PUB_STOPPED;
    fill_sample(&p->sample, k % o->keys, k + 1);
    dds_return_t rc = pub_retrying(p, dds_write);
    if (rc != DDS_RETCODE_OK) {
      out_error("write of seq %d failed: %s", k + 1, dds_strretcode(rc));
      return PUB_FAILED;
    }
    p->written++;
  }
  return PUB_OK;
}

static bool is_disposed(const struct peer_options* o, int32_t id) {
  for (int i = 0; i < o->n_dispose; i++) {
    if (o->dispose[i] == id) return true;
  }
  return false;
}

/* One dispose or unregister of instance id (the sample's key; the rest is not sent). */
static enum pub_status pub_end_instance(struct pub* p, int32_t id, bool dispose) {
  p->sample.id = id;
  dds_return_t rc = pub_retrying(p, dispose ? dds_dispose : dds_unregister_instance);
  if (rc == DDS_RETCODE_OK) return PUB_OK;
  out_error("%s of id %d failed: %s", dispose ? "dispose" : "unregister", id, dds_strretcode(rc));
  return PUB_FAILED;
}

static enum pub_status pub_end_instances(struct pub* p) {
  const struct peer_options* o = p->o;
  for (int i = 0; i < o->n_dispose; i++) {
    if (pub_end_instance(p, o->dispose[i], true) != PUB_OK) return PUB_FAILED;
  }
  if (!o->unregister_rest) return PUB_OK;
  const int32_t written_ids = o->count < o->keys ? o->count : o->keys;
  for (int32_t id = 0; id < written_ids; id++) {
    if (!is_disposed(o, id) && pub_end_instance(p, id, false) != PUB_OK) return PUB_FAILED;
  }
  return PUB_OK;
}

static enum pub_status pub_run(struct pub* p) {
  if (p->o->assert_every_ms > 0) p->next_assert = dds_time() + DDS_MSECS(p->o->assert_every_ms);
  enum pub_status st = pub_wait_readers(p);
  if (st != PUB_OK) return st;
  st = pub_write_all(p);
  out_event("{\"event\":\"written\",\"count\":%d}", p->written);
  if (st != PUB_OK) return st;
  st = pub_end_instances(p);
  if (st != PUB_OK) return st;
  return pub_sleep_until(p, dds_time() + peer_seconds(p->o->linger_s)) ? PUB_OK : PUB_STOPPED;
}

struct peer_result run_pub(const struct peer_options* o) {
  struct pub p = {.o = o};
  enum pub_status st = PUB_FAILED;
  atomic_init(&p.ev.matched_current, 0);
  p.sample.payload._buffer = malloc(o->size > 0 ? o->size : 1);
  p.sample.payload._length = p.sample.payload._maximum = o->size;
  dds_listener_t* listener = peer_writer_listener(&p.ev);
  if (p.sample.payload._buffer == NULL) {
    out_error("out of memory for a %u-byte payload", o->size);
  } else if (peer_create_entities(o, listener, &p.e) == 0) {
    out_ready();
    st = pub_run(&p);
  }
  dds_delete_listener(listener);
  peer_delete_entities(&p.e);
  free(p.sample.payload._buffer);
  return (struct peer_result){
      .exit_code = st == PUB_FAILED ? 1 : 0, .samples = p.written, .ok = st != PUB_FAILED};
}
