/* cyclone_qos_peer: struct peer_qos -> Cyclone DDS QoS objects, and policy ids -> names.
 *
 * Main thread (entity creation) and listener threads (peer_policy_name); no shared state.
 * Each command-line option sets exactly one policy with its dds_qset_* call: the writer's or
 * reader's QoS for the endpoint policies, the publisher's or subscriber's for partition,
 * presentation and group_data, the topic's for topic_data. Everything else is left unset, so
 * Cyclone's defaults apply, but for reliability and history (always set, options.c has the
 * defaults), durability_service for a transient-local writer (its history, see set_durability)
 * and writer_data_lifecycle with --unregister-rest (autodispose off).
 */
#include <stdio.h>
#include <string.h>

#include "peer.h"

static dds_duration_t ms_to_duration(int64_t ms) {
  return ms < 0 ? DDS_INFINITY : DDS_MSECS(ms);
}

static void set_text(dds_qos_t* q, const char* text,
                     void (*setter)(dds_qos_t* __restrict, const void* __restrict, size_t)) {
  if (text != NULL) setter(q, text, strlen(text));
}

dds_qos_t* peer_topic_qos(const struct peer_options* o) {
  dds_qos_t* q = dds_create_qos();
  set_text(q, o->qos.topic_data, dds_qset_topicdata);
  return q;
}

dds_qos_t* peer_group_qos(const struct peer_options* o) {
  const struct peer_qos* p = &o->qos;
  dds_qos_t* q = dds_create_qos();
  if (p->n_partitions > 0) dds_qset_partition(q, p->n_partitions, (const char**)p->partitions);
  if (p->has_presentation) dds_qset_presentation(q, p->access_scope, p->coherent, p->ordered);
  set_text(q, p->group_data, dds_qset_groupdata);
  return q;
}

/* The policies that are durations, set only when given. */
static void set_durations(dds_qos_t* q, const struct peer_options* o) {
  const struct peer_qos* p = &o->qos;
  if (p->deadline_ms >= 0) dds_qset_deadline(q, DDS_MSECS(p->deadline_ms));
  if (p->latency_budget_ms >= 0) dds_qset_latency_budget(q, DDS_MSECS(p->latency_budget_ms));
  if (p->lifespan_ms >= 0) dds_qset_lifespan(q, DDS_MSECS(p->lifespan_ms));
  if (p->time_based_filter_ms >= 0) {
    dds_qset_time_based_filter(q, DDS_MSECS(p->time_based_filter_ms));
  }
}

/* Cyclone keeps a transient-local writer's data for late joiners per its durability_service
 * history (default keep_last 1), not per its history: the writer gets the same history and
 * resource limits there, so --history keep_last:5 serves the last 5 per instance. */
static void set_durability(dds_qos_t* q, const struct peer_options* o) {
  const struct peer_qos* p = &o->qos;
  if (!p->has_durability) return;
  dds_qset_durability(q, p->durability);
  if (o->role != PEER_PUB || p->durability != DDS_DURABILITY_TRANSIENT_LOCAL) return;
  const bool limits = p->has_resource_limits;
  dds_qset_durability_service(q, 0, p->history, p->history_depth,
                              limits ? p->max_samples : DDS_LENGTH_UNLIMITED,
                              limits ? p->max_instances : DDS_LENGTH_UNLIMITED,
                              limits ? p->max_samples_per_instance : DDS_LENGTH_UNLIMITED);
}

dds_qos_t* peer_endpoint_qos(const struct peer_options* o) {
  const struct peer_qos* p = &o->qos;
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, p->reliability, DDS_MSECS(p->max_blocking_ms));
  dds_qset_history(q, p->history, p->history_depth);
  set_durability(q, o);
  if (p->has_resource_limits) {
    dds_qset_resource_limits(q, p->max_samples, p->max_instances, p->max_samples_per_instance);
  }
  if (p->has_ownership) dds_qset_ownership(q, p->ownership);
  if (p->has_strength && o->role == PEER_PUB) dds_qset_ownership_strength(q, p->strength);
  if (p->has_liveliness) dds_qset_liveliness(q, p->liveliness, ms_to_duration(p->lease_ms));
  if (p->has_destination_order) dds_qset_destination_order(q, p->destination_order);
  set_text(q, p->user_data, dds_qset_userdata);
  if (p->data_representation >= 0) {
    const dds_data_representation_id_t id = (dds_data_representation_id_t)p->data_representation;
    dds_qset_data_representation(q, 1, &id);
  }
  set_durations(q, o);
  /* --unregister-rest: readers are to see those instances unregistered (no writers), which the
   * default autodispose_unregistered_instances = true would turn into disposed. */
  if (o->role == PEER_PUB && o->unregister_rest) dds_qset_writer_data_lifecycle(q, false);
  return q;
}

const char* peer_policy_name(uint32_t policy_id, char* buf, size_t size) {
  switch ((dds_qos_policy_id_t)policy_id) {
    case DDS_USERDATA_QOS_POLICY_ID:
      return "USER_DATA";
    case DDS_DURABILITY_QOS_POLICY_ID:
      return "DURABILITY";
    case DDS_PRESENTATION_QOS_POLICY_ID:
      return "PRESENTATION";
    case DDS_DEADLINE_QOS_POLICY_ID:
      return "DEADLINE";
    case DDS_LATENCYBUDGET_QOS_POLICY_ID:
      return "LATENCY_BUDGET";
    case DDS_OWNERSHIP_QOS_POLICY_ID:
      return "OWNERSHIP";
    case DDS_OWNERSHIPSTRENGTH_QOS_POLICY_ID:
      return "OWNERSHIP_STRENGTH";
    case DDS_LIVELINESS_QOS_POLICY_ID:
      return "LIVELINESS";
    case DDS_TIMEBASEDFILTER_QOS_POLICY_ID:
      return "TIME_BASED_FILTER";
    case DDS_PARTITION_QOS_POLICY_ID:
      return "PARTITION";
    case DDS_RELIABILITY_QOS_POLICY_ID:
      return "RELIABILITY";
    case DDS_DESTINATIONORDER_QOS_POLICY_ID:
      return "DESTINATION_ORDER";
    case DDS_HISTORY_QOS_POLICY_ID:
      return "HISTORY";
    case DDS_RESOURCELIMITS_QOS_POLICY_ID:
      return "RESOURCE_LIMITS";
    case DDS_ENTITYFACTORY_QOS_POLICY_ID:
      return "ENTITY_FACTORY";
    case DDS_WRITERDATALIFECYCLE_QOS_POLICY_ID:
      return "WRITER_DATA_LIFECYCLE";
    case DDS_READERDATALIFECYCLE_QOS_POLICY_ID:
      return "READER_DATA_LIFECYCLE";
    case DDS_TOPICDATA_QOS_POLICY_ID:
      return "TOPIC_DATA";
    case DDS_GROUPDATA_QOS_POLICY_ID:
      return "GROUP_DATA";
    case DDS_TRANSPORTPRIORITY_QOS_POLICY_ID:
      return "TRANSPORT_PRIORITY";
    case DDS_LIFESPAN_QOS_POLICY_ID:
      return "LIFESPAN";
    case DDS_DURABILITYSERVICE_QOS_POLICY_ID:
      return "DURABILITY_SERVICE";
    case DDS_PROPERTY_QOS_POLICY_ID:
      return "PROPERTY";
    case DDS_TYPE_CONSISTENCY_ENFORCEMENT_QOS_POLICY_ID:
      return "TYPE_CONSISTENCY_ENFORCEMENT";
    case DDS_DATA_REPRESENTATION_QOS_POLICY_ID:
      return "DATA_REPRESENTATION";
    case DDS_INVALID_QOS_POLICY_ID:
      break;
  }
  snprintf(buf, size, "UNKNOWN_%u", policy_id);
  return buf;
}
