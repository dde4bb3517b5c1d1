/* cyclone_qos_peer: declarations shared by its files.
 *
 * The program is one DDS writer (pub) or one reader (sub) of QosTest::Sample whose QoS is set
 * policy by policy from the command line (../README.md). Files:
 *   options.c  command line -> struct peer_options (exit 2 on a bad one)
 *   qos.c      struct peer_qos -> dds_qos_t for the topic, publisher/subscriber, writer/reader;
 *              QoS policy ids -> DDS policy names
 *   output.c   the JSON lines on stdout, one mutex for the main thread and Cyclone's listener
 *              threads
 *   events.c   listeners (run on Cyclone's threads) that print the status events
 *   stop.c     SIGINT/SIGTERM: a signal thread sets a flag and triggers a guard condition
 *   entities.c participant, topic, publisher/subscriber, writer/reader, stop waitset
 *   pub.c      the writer's main loop; sub.c the reader's main loop (both on the main thread)
 */
#ifndef CYCLONE_QOS_PEER_PEER_H
#define CYCLONE_QOS_PEER_PEER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dds/dds.h"

#define PEER_NAME "cyclone_qos_peer"
#define PEER_MAX_LIST 64 /* entries of --dispose and of --partition */

enum peer_role { PEER_PUB, PEER_SUB };

/* The QoS options. A policy the command line did not name stays at Cyclone's default, except
 * reliability (default reliable, max_blocking 100 ms) and history (default keep_all). Times are
 * milliseconds; -1 = not given. */
struct peer_qos {
  dds_reliability_kind_t reliability;
  int64_t max_blocking_ms;
  bool has_durability;
  dds_durability_kind_t durability;
  dds_history_kind_t history;
  int32_t history_depth;
  bool has_resource_limits;
  int32_t max_samples, max_instances, max_samples_per_instance;
  bool has_ownership;
  dds_ownership_kind_t ownership;
  bool has_strength;
  int32_t strength;
  int64_t deadline_ms;
  int64_t latency_budget_ms;
  bool has_liveliness;
  dds_liveliness_kind_t liveliness;
  int64_t lease_ms; /* -1 = infinite */
  int64_t lifespan_ms;
  bool has_destination_order;
  dds_destination_order_kind_t destination_order;
  bool has_presentation;
  dds_presentation_access_scope_kind_t access_scope;
  bool coherent, ordered;
  const char* partitions[PEER_MAX_LIST];
  uint32_t n_partitions;
  const char* user_data; /* NULL = not given */
  const char* topic_data;
  const char* group_data;
  int64_t time_based_filter_ms;
  int data_representation; /* DDS_DATA_REPRESENTATION_XCDR1/2, -1 = not given */
};

struct peer_options {
  enum peer_role role;
  uint32_t domain;
  const char* topic;
  int32_t count;
  int32_t keys;
  uint32_t size;
  double rate;
  int32_t wait_readers;
  int32_t dispose[PEER_MAX_LIST];
  int n_dispose;
  bool unregister_rest;
  double linger_s;
  double timeout_s;
  int64_t assert_every_ms;
  struct peer_qos qos;
};

/* options.c: fills *o; returns 0, or 2 after one line on stderr (bad arguments), or -1 after
 * --help printed the usage (exit 0). */
int peer_parse_options(int argc, char** argv, struct peer_options* o);

/* qos.c: each returns a new dds_qos_t (dds_delete_qos it). */
dds_qos_t* peer_topic_qos(const struct peer_options* o);
dds_qos_t* peer_group_qos(const struct peer_options* o);
dds_qos_t* peer_endpoint_qos(const struct peer_options* o);
/* "DEADLINE", ... or "UNKNOWN_<id>" (in buf, at least 24 bytes). */
const char* peer_policy_name(uint32_t policy_id, char* buf, size_t size);

/* output.c: one JSON object per line on stdout, flushed. Lines before out_ready() are held
 * back and printed right after it; nothing is printed after out_done(). */
void out_event(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void out_ready(void);
void out_done(int64_t samples, bool ok);
/* One line on stderr, "cyclone_qos_peer: ..." */
void out_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* events.c: the matched count the writer's listener keeps (pub waits on it). */
struct peer_events {
  atomic_int matched_current;
};
dds_listener_t* peer_writer_listener(struct peer_events* ev);
dds_listener_t* peer_reader_listener(struct peer_events* ev);

/* stop.c */
void stop_init(void);
bool stop_requested(void);
void stop_set_guard(dds_entity_t guard); /* 0: none */

/* entities.c */
struct peer_entities {
  dds_entity_t participant, topic, group, endpoint; /* group: publisher or subscriber */
  dds_entity_t stop_guard, waitset;                 /* waitset holds stop_guard */
};
int peer_create_entities(const struct peer_options* o, const dds_listener_t* listener,
                         struct peer_entities* e);
void peer_delete_entities(struct peer_entities* e);

/* Seconds (a command-line value) as a DDS duration. */
static inline dds_duration_t peer_seconds(double s) {
  return (dds_duration_t)(s * 1e9);
}

/* The deterministic payload byte i of sample (id, seq). */
static inline uint8_t peer_payload_byte(int32_t id, int32_t seq, uint32_t i) {
  return (uint8_t)((uint32_t)id * 31u + (uint32_t)seq * 7u + i);
}

struct peer_result {
  int exit_code;
  int64_t samples; /* pub: written, sub: received */
  bool ok;
};
struct peer_result run_pub(const struct peer_options* o);
struct peer_result run_sub(const struct peer_options* o);

#endif
