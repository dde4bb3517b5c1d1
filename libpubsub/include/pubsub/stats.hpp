// Counters that writers, readers and participants expose. Snapshots: each call copies them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pubsub/qos.hpp"

namespace pubsub {

struct WriterStats {
  uint64_t samples_written = 0;
  uint64_t bytes_written = 0;
  uint64_t datagrams_sent = 0;
  uint64_t heartbeats_sent = 0;
  uint64_t acknacks_received = 0;
  uint64_t samples_retransmitted = 0;
  uint64_t fragments_retransmitted = 0;
  uint64_t gaps_sent = 0;
  uint64_t write_blocked = 0;        // write() calls that had to wait for acknowledgements
  uint64_t write_timeouts = 0;       // ... and gave up after max_blocking_time
  uint64_t datagram_fallbacks = 0;   // readers that lost too many big datagrams (IP fragments)
  uint64_t heartbeat_probes = 0;     // HEARTBEATs repeated by a blocked writer that heard nothing
  uint64_t repairs_held_back = 0;    // requests for big-datagram samples left to their backoff
  uint64_t liveliness_asserted = 0;  // MANUAL_BY_TOPIC liveliness HEARTBEATs sent
  size_t matched_readers = 0;
  size_t history_samples = 0;
  size_t history_bytes = 0;
  size_t window_bytes = 0;      // congestion window now
  size_t window_cap_bytes = 0;  // its ceiling (more than max_unacked_bytes: a late answerer)
  uint64_t ack_delay_us = 0;    // the slowest reader's smoothed HEARTBEAT-to-ACKNACK delay (of
                                // readers late by design: not a Cyclone DDS reader's queue)
  uint64_t pacing_rate = 0;     // bytes/s large samples are paced at now (0: not pacing)
  uint64_t pacing_cuts = 0;     // times a loss lowered the pacing rate
};

struct ReaderStats {
  uint64_t samples_delivered = 0;
  uint64_t bytes_delivered = 0;
  uint64_t duplicates = 0;
  uint64_t out_of_order = 0;       // samples buffered behind a hole
  uint64_t lost = 0;               // best-effort gaps, or samples the writer no longer had
  uint64_t gapped = 0;             // sequence numbers a GAP declared irrelevant
  uint64_t buffer_full_drops = 0;  // out-of-order samples dropped at the resource limits
  uint64_t too_large_drops = 0;    // samples above max_sample_size
  uint64_t refused = 0;            // deliveries the application refused (back-pressure)
  uint64_t acknacks_sent = 0;
  uint64_t nackfrags_sent = 0;
  uint64_t fragments_received = 0;
  // Of samples_delivered: read from a writer's shared-memory segment / handed over in-process
  // (the rest came over the network).
  uint64_t samples_shm = 0;
  uint64_t samples_intra = 0;
  size_t matched_writers = 0;
  size_t buffered_bytes = 0;  // out-of-order and partial samples, with their bookkeeping

  ReaderStats& operator+=(const ReaderStats& o) {
    samples_delivered += o.samples_delivered;
    bytes_delivered += o.bytes_delivered;
    duplicates += o.duplicates;
    out_of_order += o.out_of_order;
    lost += o.lost;
    gapped += o.gapped;
    buffer_full_drops += o.buffer_full_drops;
    too_large_drops += o.too_large_drops;
    refused += o.refused;
    acknacks_sent += o.acknacks_sent;
    nackfrags_sent += o.nackfrags_sent;
    fragments_received += o.fragments_received;
    samples_shm += o.samples_shm;
    samples_intra += o.samples_intra;
    matched_writers += o.matched_writers;
    buffered_bytes += o.buffered_bytes;
    return *this;
  }
};

struct ParticipantStats {
  uint64_t datagrams_received = 0;
  uint64_t bytes_received = 0;
  uint64_t datagrams_sent = 0;
  uint64_t bytes_sent = 0;
  // UDP segmentation offload and receive coalescing (TransportStats).
  uint64_t gso_messages_sent = 0;
  uint64_t gro_messages_received = 0;
  uint64_t coalescing_sleeps = 0;
  uint64_t malformed_messages = 0;  // datagrams dropped by the decoder (see malformed_by_reason)
  uint64_t malformed_by_reason[16] = {};  // indexed by the decoder's error kind
  size_t remote_participants = 0;
  size_t remote_writers = 0;
  size_t remote_readers = 0;
  // Pairs of a local and a remote endpoint on the same topic that do not match because a
  // requested/offered rule fails (DDS's OFFERED/REQUESTED_INCOMPATIBLE_QOS), by QosPolicyId.
  uint64_t incompatible_qos = 0;
  uint64_t incompatible_by_policy[kQosPolicyCount] = {};
  // Announcements refused by ParticipantOptions::discovery_limits: new participants (SPDP) and
  // new endpoints (SEDP), counted each time they are announced again.
  uint64_t participants_refused = 0;
  uint64_t endpoints_refused = 0;
};

}  // namespace pubsub
