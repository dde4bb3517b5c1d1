// What the recorder defines in the recording besides samples (Recorder::Impl,
// recorder_impl.hpp): matched writers prepared by the registrar thread (their topics, types and
// encoded QoS; recorder_samples.cpp appends a writer's definition with its first sample), types
// from types.idl or TypeLookup replies (participant threads), writers the recorder cannot read
// (discovery thread), and writers gone with samples not delivered (discovery thread: counted
// lost; their gaps stored when the recording closes, store_departures).

#include "recorder_impl.hpp"
#include "service/recording_schema.hpp"
#include "types/idl_writer.hpp"
#include "types/type_object.hpp"

namespace service {

Result<types::TypeCatalog> load_idl_types(const config::RecorderConfig& c) {
  auto catalog = types::TypeCatalog::from_idl_files(c.types.idl);
  if (!catalog) return Error{Errc::kInvalidArgument, catalog.error().message};
  return catalog;
}

TopicState* Recorder::Impl::topic_locked(const pubsub::TopicInfo* info,
                                         const pubsub::GuidPrefix& from) {
  auto it = topics.find(info);
  if (it != topics.end()) return it->second.get();
  auto id = store->add_topic(topic_def(*info));
  if (!id) {
    fail(id.error());
    return nullptr;
  }
  auto t = std::make_unique<TopicState>();
  t->id = id.value();
  t->name = info->name;
  t->paused.store(pause_all, std::memory_order_relaxed);
  if (!store_idl_type(info->type_name)) look_up_type(*info, from);
  log->info("topic {} ({}, {}{}{})", info->name, info->type_name,
            info->reliability == pubsub::ReliabilityKind::kReliable ? "reliable" : "best effort",
            info->keyed ? ", keyed" : "",
            info->type_information.empty() ? "" : ", with type information");
  return topics.emplace(info, std::move(t)).first->second.get();
}

bool Recorder::Impl::is_elsewhere(const pubsub::WriterInfo& w) const {
  return cfg.topics.writers == config::WritersScope::kLocal && !w.same_host;
}

void Recorder::Impl::on_writer_matched(const pubsub::TopicInfo& t, const pubsub::WriterInfo& w) {
  {
    std::lock_guard lk(maps_mu);
    if (is_elsewhere(w)) {
      (void)elsewhere_locked(w);
      return;
    }
    if (auto it = writers.find(w.guid); it == writers.end()) {
      prepared.try_emplace(w.guid);  // queued, not prepared yet
    } else if (WriterState& s = *it->second; s.departed_last) {
      // Back after it was gone: what it sends again is recorded, and a later sample's sequence
      // gap counts what it does not.
      s.lost.fetch_sub(static_cast<uint64_t>(s.departed_last - s.departed_first + 1),
                       std::memory_order_relaxed);
      s.departed_first = s.departed_last = 0;
    }
  }
  log->info("writer {} on {} matched", guid_hex(w.guid), t.name);
  {
    std::lock_guard lk(reg_mu);
    reg_queue.push_back({&t, std::make_shared<const pubsub::WriterInfo>(w)});
  }
  reg_cv.notify_one();
}

void Recorder::Impl::on_writer_lost(const pubsub::TopicInfo& t, const pubsub::Guid& g,
                                    const pubsub::UndeliveredSamples& undelivered) {
  log->info("writer {} on {} gone", guid_hex(g), t.name);
  std::lock_guard lk(maps_mu);
  WriterState* w = undelivered.count ? departed_writer_locked(t, g) : nullptr;
  prepared.erase(g);  // never defined (no sample came): forgotten; the registrar skips it
  if (!w || w->elsewhere) return;
  // No sample of it is delivered any more (its proxy is gone), so `last` is settled. Samples at
  // or below it were recorded (a durable writer matched again sends them once more).
  const pubsub::SequenceNumber first = std::max(undelivered.first, w->last + 1);
  if (first > undelivered.last) return;
  w->departed_first = first;
  w->departed_last = undelivered.last;
  w->lost.fetch_add(static_cast<uint64_t>(undelivered.last - first + 1), std::memory_order_relaxed);
  log->warn(
      "writer {} on {} gone with samples {} to {} not recorded (held back by back-pressure, or "
      "sent and never received): counted as lost, and stored as a gap when the recording closes "
      "unless it comes back",
      guid_hex(g), t.name, first, undelivered.last);
}

WriterState* Recorder::Impl::departed_writer_locked(const pubsub::TopicInfo& t,
                                                    const pubsub::Guid& g) {
  if (auto it = writers.find(g); it != writers.end()) return it->second.get();
  const pubsub::RawReader* r = reader_ready.load(std::memory_order_acquire);
  auto offer = r ? r->writer_info(g) : nullptr;
  if (!offer) return nullptr;
  if (is_elsewhere(*offer)) return elsewhere_locked(*offer);
  PreparedWriter* p = prepare_locked(&t, *offer);
  return p ? define_locked(g, *p, {}) : nullptr;
}

void Recorder::Impl::store_departures() {
  std::lock_guard lk(maps_mu);
  for (auto& [g, w] : writers) {
    if (!w->departed_last) continue;
    if (auto st = store->add_gap(w->id, w->departed_first, w->departed_last); !st) {
      fail(st.error());
      return;
    }
    w->departed_first = w->departed_last = 0;
  }
}

Recorder::Impl::PreparedWriter* Recorder::Impl::prepare_locked(const pubsub::TopicInfo* topic,
                                                               const pubsub::WriterInfo& w) {
  PreparedWriter& p = prepared[w.guid];
  if (p.topic) return &p;
  TopicState* t = topic_locked(topic, w.guid.prefix);
  if (!t) return nullptr;
  RecordedQos qos = recorded_qos(w);
  p.reliable = w.topic.reliability == pubsub::ReliabilityKind::kReliable;
  p.qos = encode_qos(qos);
  if (qos.data_representation.empty()) {
    qos.data_representation = {2};
    p.qos_xcdr2 = encode_qos(qos);
  }
  p.topic = t;
  return &p;
}

WriterState* Recorder::Impl::elsewhere_locked(const pubsub::WriterInfo& w) {
  auto it = writers.find(w.guid);
  if (it != writers.end()) return it->second.get();
  std::string at;
  for (const auto& l : w.unicast) at += (at.empty() ? "" : ", ") + l.address_string();
  log->info("writer {} on {} matched, on another host ({}): not recorded (topics.writers local)",
            guid_hex(w.guid), w.topic.name, at.empty() ? "no address announced" : at);
  auto s = std::make_unique<WriterState>();
  s->elsewhere = true;
  elsewhere_writers.fetch_add(1, std::memory_order_relaxed);
  return writers.emplace(w.guid, std::move(s)).first->second.get();
}

void Recorder::Impl::registrar_loop() {
  std::unique_lock lk(reg_mu);
  for (;;) {
    reg_cv.wait(lk, [&] { return reg_stop || !reg_queue.empty(); });
    if (reg_stop) return;
    if (opts.test_registrar_delay.count() > 0) {
      reg_cv.wait_for(lk, opts.test_registrar_delay, [&] { return reg_stop; });
      if (reg_stop) return;
    }
    std::vector<Registration> batch;
    batch.swap(reg_queue);
    lk.unlock();
    for (const auto& r : batch) {
      std::lock_guard maps(maps_mu);
      // Defined meanwhile (a best-effort writer's first sample), or lost before it was reached.
      if (writers.count(r.writer->guid) || !prepared.count(r.writer->guid)) continue;
      (void)prepare_locked(r.topic, *r.writer);
    }
    lk.lock();
  }
}

void Recorder::Impl::stop_registrar() {
  {
    std::lock_guard lk(reg_mu);
    reg_stop = true;
  }
  reg_cv.notify_one();
  if (registrar.joinable()) registrar.join();
}

bool Recorder::Impl::store_idl_type(const std::string& type_name) {
  auto found = idl_types.find(type_name);
  if (!found) return false;
  storage::TypeDef def{
      type_name, storage::TypeSource::kIdl, types::to_idl(*found->lib, found->id), {}};
  if (auto s = store->add_type(def); !s) {
    log->warn("type {} from {} not stored: {}", type_name, *found->origin, s.error().message);
    return true;
  }
  log->info("type {} from {}", type_name, *found->origin);
  return true;
}

void Recorder::Impl::look_up_type(const pubsub::TopicInfo& info, const pubsub::GuidPrefix& from) {
  if (info.type_information.empty()) return;
  auto ti = types::decode_type_information(info.type_information);
  if (!ti) {
    log->warn("type {}: TypeInformation not understood ({}); recorded without its type",
              info.type_name, ti.error().message);
    return;
  }
  {
    std::lock_guard lk(types_mu);
    if (!types_asked.insert(info.type_name).second) return;
  }
  std::vector<types::HashedTypeId> ids{
      types::hashed_type_id(types::kEkComplete, ti->complete.hash)};
  for (const auto& d : ti->complete_dependencies)
    ids.push_back(types::hashed_type_id(types::kEkComplete, d.hash));
  log->info("type {}: asking participant {} for {} TypeObject(s)", info.type_name,
            pubsub::Guid{from, {}}.to_string(), ids.size());
  participant->request_types(
      from, ids, kTypeLookupTimeout,
      [this, name = info.type_name, top = ti->complete.hash](const pubsub::TypeLookupReply& r) {
        return on_type_reply(name, top, r);
      });
}

bool Recorder::Impl::on_type_reply(const std::string& name, const types::EquivalenceHash& top,
                                   const pubsub::TypeLookupReply& r) {
  const std::string from = pubsub::Guid{r.from, {}}.to_string();
  if (r.kind != pubsub::TypeLookupReply::Kind::kReply) {
    log->warn(
        "type {}: {}; recorded without its type", name,
        r.kind == pubsub::TypeLookupReply::Kind::kTimeout
            ? "no TypeLookup reply within " + std::to_string(kTypeLookupTimeout.count()) + " s"
            : "participant " + from + " offers no TypeLookup service");
    std::lock_guard lk(types_mu);
    types_asked.erase(name);
    return true;
  }
  if (r.types.empty()) return false;  // an error or empty answer: another may still come
  const auto order = r.little_endian ? types::ByteOrder::kLittle : types::ByteOrder::kBig;
  auto set = types::parse_get_types_out(r.types, order);
  if (!set) return false;
  auto decoded = types::decode_type_objects(set->pairs, top);
  if (!decoded) {
    log->debug("type {}: reply from {} does not give it: {}", name, from, decoded.error().message);
    return false;
  }
  storage::TypeDef def{
      name, storage::TypeSource::kLookup, types::to_idl(decoded->library, decoded->top),
      storage::Bytes(reinterpret_cast<const std::byte*>(r.types.data()),
                     reinterpret_cast<const std::byte*>(r.types.data()) + r.types.size())};
  if (auto s = store->add_type(def); !s) {
    log->warn("type {} (looked up) not stored: {}", name, s.error().message);
  } else {
    log->info("type {}: looked up from participant {} ({} TypeObjects)", name, from,
              set->pairs.size());
  }
  return true;
}

void Recorder::Impl::on_writer_refused(const pubsub::TopicInfo& t, const pubsub::Guid& g,
                                       pubsub::QosPolicyId policy, const std::string& reason) {
  (void)policy;  // named at the start of `reason` ("DATA_REPRESENTATION: requested ...")
  const std::string& why = reason;
  log->warn("writer {} on {} not recorded: {}", guid_hex(g), t.name, why);
  std::lock_guard lk(maps_mu);
  if (writers.count(g)) return;
  const pubsub::RawReader* r = reader_ready.load(std::memory_order_acquire);
  auto offer = r ? r->writer_info(g) : nullptr;
  if (offer && is_elsewhere(*offer)) {
    (void)elsewhere_locked(*offer);
    return;
  }
  TopicState* ts = topic_locked(&t, g.prefix);
  if (!ts) return;
  RecordedQos qos = offer ? recorded_qos(*offer) : recorded_qos(t);
  qos.not_matched = why;
  if (auto id = store->add_writer(storage::WriterDef{ts->id, g.bytes(), encode_qos(qos)}); !id) {
    fail(id.error());
    return;
  }
  refused_writers.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace service
