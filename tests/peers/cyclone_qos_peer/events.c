/* cyclone_qos_peer: the status events, printed by listeners.
 *
 * Cyclone calls these on its own threads (receive, discovery, timed-event threads), sometimes
 * from inside a dds_create_* call of the main thread; output.c serialises the lines. Each
 * callback gets the status with its counts and resets it, so every change is printed once.
 * The writer's matched count also goes to struct peer_events, which pub's --wait-readers reads.
 */
#include "peer.h"

static void on_publication_matched(dds_entity_t writer, const dds_publication_matched_status_t s,
                                   void* arg) {
  (void)writer;
  struct peer_events* ev = arg;
  atomic_store(&ev->matched_current, (int)s.current_count);
  out_event("{\"event\":\"matched\",\"current\":%u,\"total\":%u}", s.current_count, s.total_count);
}

static void on_subscription_matched(dds_entity_t reader, const dds_subscription_matched_status_t s,
                                    void* arg) {
  (void)reader;
  struct peer_events* ev = arg;
  atomic_store(&ev->matched_current, (int)s.current_count);
  out_event("{\"event\":\"matched\",\"current\":%u,\"total\":%u}", s.current_count, s.total_count);
}

static void print_incompatible(uint32_t policy_id, uint32_t total) {
  char buf[32];
  out_event("{\"event\":\"incompatible_qos\",\"policy\":\"%s\",\"total\":%u}",
            peer_policy_name(policy_id, buf, sizeof buf), total);
}

static void on_offered_incompatible_qos(dds_entity_t writer,
                                        const dds_offered_incompatible_qos_status_t s, void* arg) {
  (void)writer;
  (void)arg;
  print_incompatible(s.last_policy_id, s.total_count);
}

static void on_requested_incompatible_qos(dds_entity_t reader,
                                          const dds_requested_incompatible_qos_status_t s,
                                          void* arg) {
  (void)reader;
  (void)arg;
  print_incompatible(s.last_policy_id, s.total_count);
}

static void on_offered_deadline_missed(dds_entity_t writer,
                                       const dds_offered_deadline_missed_status_t s, void* arg) {
  (void)writer;
  (void)arg;
  out_event("{\"event\":\"deadline_missed\",\"total\":%u}", s.total_count);
}

static void on_requested_deadline_missed(dds_entity_t reader,
                                         const dds_requested_deadline_missed_status_t s,
                                         void* arg) {
  (void)reader;
  (void)arg;
  out_event("{\"event\":\"deadline_missed\",\"total\":%u}", s.total_count);
}

static void on_liveliness_changed(dds_entity_t reader, const dds_liveliness_changed_status_t s,
                                  void* arg) {
  (void)reader;
  (void)arg;
  out_event("{\"event\":\"liveliness_changed\",\"alive\":%u,\"not_alive\":%u}", s.alive_count,
            s.not_alive_count);
}

dds_listener_t* peer_writer_listener(struct peer_events* ev) {
  dds_listener_t* l = dds_create_listener(ev);
  dds_lset_publication_matched(l, on_publication_matched);
  dds_lset_offered_incompatible_qos(l, on_offered_incompatible_qos);
  dds_lset_offered_deadline_missed(l, on_offered_deadline_missed);
  return l;
}

dds_listener_t* peer_reader_listener(struct peer_events* ev) {
  dds_listener_t* l = dds_create_listener(ev);
  dds_lset_subscription_matched(l, on_subscription_matched);
  dds_lset_requested_incompatible_qos(l, on_requested_incompatible_qos);
  dds_lset_requested_deadline_missed(l, on_requested_deadline_missed);
  dds_lset_liveliness_changed(l, on_liveliness_changed);
  return l;
}
