// The public classes of libpubsub (pubsub::Participant, Writer, Reader, RawReader, Loan,
// LoanedSample) over their detail:: implementations, and the data path of those handles.
// participant_impl.hpp has the overview of ParticipantImpl (what lives in which file, who owns
// what, which thread runs what, the lock order).
//
// - Participant holds the ParticipantImpl and closes it when destroyed. Writer/Reader/RawReader
//   hold a WriterImpl/ReaderImpl/RawReaderImpl, which keeps the participant alive, and remove it
//   from the participant when destroyed.
// - WriterImpl::write/loan/write_loan run on the application's thread and take no participant
//   lock: they add the encapsulation header and padding and call the StatefulWriter, which may
//   block for history space except on a transport receive thread.
// - ReaderImpl::deliver is the StatefulReader's delivery callback. It runs with the reader's lock
//   held, where the sample arrives: a receive worker, the shared-memory thread, the writing
//   thread (intra-process) or the event thread (a retried delivery). It strips the encapsulation
//   header and calls the listener, with a LoanedSample for a loaning reader.
// - A Loan holds history space of its writer until written or released; a LoanedSample holds its
//   sample in the source (shared-memory slot or in-process writer's history) until released, or
//   owns a copy of a network sample.
#include "participant_impl.hpp"

#include <cstring>

#include "wire/constants.hpp"

namespace pubsub {
namespace detail {

// ---- reader delivery ------------------------------------------------------------------------

struct LoanedSampleAccess {
  static LoanedSample make(const SampleInfo& info, Bytes body, const rtps::ReceivedSample& s) {
    LoanedSample l;
    l.info_ = info;
    l.valid_ = true;
    if (s.loan_source) {
      s.loan_source->registry->retain(s.sn);
      l.registry_ = s.loan_source->registry;
      l.anchor_ = s.loan_source->anchor.lock();
      l.body_ = body;
    } else if (!body.empty()) {  // the datagram's buffer is reused: a copy of its own
      l.copy_.reset(new std::byte[body.size()]);
      std::memcpy(l.copy_.get(), body.data(), body.size());
      l.body_ = Bytes(l.copy_.get(), body.size());
    }
    return l;
  }
};

bool ReaderImpl::deliver(const rtps::ReceivedSample& s) {
  if (!callback && !loan_callback) return true;
  SampleInfo info;
  info.writer = s.writer;
  info.sequence_number = s.sn;
  if (s.has_timestamp) info.source_timestamp = s.source_timestamp;
  info.reception_timestamp = s.reception_timestamp;
  if (s.has_key_hash) info.key_hash = s.key_hash;
  info.status_info = s.status_info;
  Bytes body;
  if (s.size >= wire::kEncapsulationSize) {
    info.encapsulation = static_cast<uint16_t>(s.data[0] << 8 | s.data[1]);
    const size_t pad = s.data[3] & 3u;
    const size_t n = s.size - wire::kEncapsulationSize;
    body = Bytes(reinterpret_cast<const std::byte*>(s.data) + wire::kEncapsulationSize,
                 n >= pad ? n - pad : 0);
  }
  if (loan_callback) {
    loan_callback(LoanedSampleAccess::make(info, body, s));
  } else {
    callback(info, body);
  }
  return true;
}

// ---- writer ---------------------------------------------------------------------------------

Result<void> WriterImpl::write(Bytes data, const WriteOptions& o, bool serialized) {
  if (closed) return make_error(ErrorCode::kClosed, "participant closed");
  if (topic.keyed && !o.key_hash && !serialized) {
    return make_error(ErrorCode::kInvalidArgument,
                      "keyed topic '" + topic.name + "': write needs a key hash");
  }
  rtps::WriteRequest r;
  uint8_t encap[4] = {0x00, 0x01, 0x00, 0x00};  // CDR_LE
  r.body = reinterpret_cast<const uint8_t*>(data.data());
  r.body_size = data.size();
  if (!serialized) {
    const size_t pad = (4 - data.size() % 4) % 4;
    encap[3] = static_cast<uint8_t>(pad);
    r.encapsulation = encap;
    r.encapsulation_size = 4;
    r.padding = pad;
  }
  r.key_hash = o.key_hash;
  r.status_info = o.status_info;
  r.timestamp = o.timestamp ? *o.timestamp : Time::now();
  return rtps->write(r, !participant->transport().on_receive_thread());
}

// A loan covers the encapsulation header, the body and its padding to 4 bytes; the caller
// sees the body.
Result<uint8_t*> WriterImpl::loan(size_t body_size) {
  if (closed) return make_error(ErrorCode::kClosed, "participant closed");
  const size_t pad = (4 - body_size % 4) % 4;
  auto r = rtps->loan(wire::kEncapsulationSize + body_size + pad,
                      !participant->transport().on_receive_thread());
  if (!r) return r.error();
  return r.value() + wire::kEncapsulationSize;
}

Result<void> WriterImpl::write_loan(size_t body_size, const WriteOptions& o) {
  if (closed) {
    rtps->release_loan();
    return make_error(ErrorCode::kClosed, "participant closed");
  }
  if (topic.keyed && !o.key_hash) {
    rtps->release_loan();
    return make_error(ErrorCode::kInvalidArgument,
                      "keyed topic '" + topic.name + "': write needs a key hash");
  }
  rtps::WriteRequest r;
  r.key_hash = o.key_hash;
  r.status_info = o.status_info;
  r.timestamp = o.timestamp ? *o.timestamp : Time::now();
  const size_t pad = (4 - body_size % 4) % 4;
  return rtps->write_loan(r, pad, !participant->transport().on_receive_thread());
}

}  // namespace detail

// ---- public facade --------------------------------------------------------------------------

Result<std::unique_ptr<Participant>> Participant::create(const ParticipantOptions& options) {
  auto impl = detail::ParticipantImpl::create(options);
  if (!impl) return impl.error();
  return std::unique_ptr<Participant>(new Participant(std::move(impl).value()));
}

Participant::Participant(std::shared_ptr<detail::ParticipantImpl> impl) : impl_(std::move(impl)) {}
Participant::~Participant() {
  impl_->close();
}

Result<std::unique_ptr<Writer>> Participant::create_writer(const TopicDescription& topic,
                                                           const WriterQos& qos) {
  auto w = impl_->create_writer(topic, qos);
  if (!w) return w.error();
  return std::unique_ptr<Writer>(new Writer(std::move(w).value()));
}

Result<std::unique_ptr<Reader>> Participant::create_reader(const TopicDescription& topic,
                                                           const ReaderQos& qos,
                                                           SampleCallback on_sample) {
  auto r = impl_->create_reader(topic, qos, std::move(on_sample));
  if (!r) return r.error();
  return std::unique_ptr<Reader>(new Reader(std::move(r).value()));
}

Result<std::unique_ptr<Reader>> Participant::create_loaning_reader(const TopicDescription& topic,
                                                                   const ReaderQos& qos,
                                                                   LoanCallback on_sample) {
  if (!on_sample)
    return make_error(ErrorCode::kInvalidArgument, "a loaning reader needs a listener");
  auto r = impl_->create_reader(topic, qos, nullptr, std::move(on_sample));
  if (!r) return r.error();
  return std::unique_ptr<Reader>(new Reader(std::move(r).value()));
}

LoanedSample& LoanedSample::operator=(LoanedSample&& o) noexcept {
  if (this != &o) {
    (void)release();
    info_ = o.info_;
    body_ = std::exchange(o.body_, Bytes{});
    valid_ = std::exchange(o.valid_, false);
    registry_ = std::move(o.registry_);
    anchor_ = std::move(o.anchor_);
    copy_ = std::move(o.copy_);
  }
  return *this;
}

LoanedSample::~LoanedSample() {
  (void)release();
}

Result<void> LoanedSample::release() {
  if (!valid_) return make_error(ErrorCode::kInvalidArgument, "sample already released");
  valid_ = false;
  if (registry_) registry_->release(info_.sequence_number);
  registry_.reset();
  anchor_.reset();
  copy_.reset();
  body_ = {};
  return {};
}

Result<std::unique_ptr<RawReader>> Participant::create_raw_reader(const RawReaderOptions& options,
                                                                  RawReaderListener listener) {
  auto r = impl_->create_raw_reader(options, std::move(listener));
  if (!r) return r.error();
  return std::unique_ptr<RawReader>(new RawReader(std::move(r).value()));
}

Guid Participant::guid() const {
  return impl_->guid();
}
const ParticipantOptions& Participant::options() const {
  return impl_->options();
}
const ReceptionClock& Participant::reception_clock() const {
  return impl_->reception_clock();
}
void Participant::request_types(const GuidPrefix& participant,
                                std::span<const std::array<uint8_t, 15>> type_ids, Duration timeout,
                                TypeLookupCallback done) {
  impl_->request_types(participant, type_ids, timeout, std::move(done));
}

void Participant::add_type_objects(std::span<const TypeObjectEntry> types) {
  impl_->add_type_objects(types);
}

std::vector<DiscoveredParticipant> Participant::discovered_participants() const {
  return impl_->discovered_participants();
}
std::vector<DiscoveredTopic> Participant::discovered_topics() const {
  return impl_->discovered_topics();
}
ParticipantStats Participant::stats() const {
  return impl_->stats();
}
Locator Participant::unicast_locator() const {
  return impl_->transport().locators().user_unicast;
}

Writer::Writer(std::shared_ptr<detail::WriterImpl> impl) : impl_(std::move(impl)) {}
Writer::~Writer() {
  impl_->rtps->flush();
  impl_->participant->remove_writer(*impl_);
}
Result<void> Writer::write(Bytes cdr_body, const WriteOptions& options) {
  return impl_->write(cdr_body, options, false);
}
Result<void> Writer::write_serialized(Bytes payload, const WriteOptions& options) {
  // A dispose or unregister may carry only its key hash, as Fast DDS sends them: no payload.
  const bool key_hash_only = payload.empty() && options.status_info != 0 && options.key_hash;
  if (payload.size() < 4 && !key_hash_only) {
    return make_error(ErrorCode::kInvalidArgument, "serialized payload shorter than its header");
  }
  return impl_->write(payload, options, true);
}
Result<Loan> Writer::loan(size_t body_size) {
  auto p = impl_->loan(body_size);
  if (!p) return p.error();
  Loan l;
  l.writer_ = impl_;
  l.data_ = reinterpret_cast<std::byte*>(p.value());
  l.size_ = body_size;
  return l;
}

Result<void> Writer::write(Loan&& loan, const WriteOptions& options) {
  if (loan.writer_ != impl_) {
    return make_error(ErrorCode::kInvalidArgument,
                      loan.writer_ ? "loan of another writer" : "loan already written or released");
  }
  const size_t size = loan.size_;
  loan.writer_.reset();
  return impl_->write_loan(size, options);
}

Loan& Loan::operator=(Loan&& o) noexcept {
  if (this != &o) {
    (void)release();
    writer_ = std::move(o.writer_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

Loan::~Loan() {
  (void)release();
}

Result<void> Loan::release() {
  if (!writer_) {
    return make_error(ErrorCode::kInvalidArgument, "loan already written or released");
  }
  writer_->rtps->release_loan();
  writer_.reset();
  return {};
}

void Writer::flush() {
  impl_->rtps->flush();
}
size_t Writer::matched_readers() const {
  return impl_->rtps->matched_readers();
}
std::vector<Guid> Writer::matched_reader_guids() const {
  return impl_->rtps->matched_reader_guids();
}
bool Writer::wait_for_readers(size_t n, Duration timeout) {
  return impl_->rtps->wait_for_readers(n, std::chrono::steady_clock::now() + timeout);
}
bool Writer::wait_for_acknowledgments(Duration timeout) {
  return impl_->rtps->wait_for_acknowledgments(std::chrono::steady_clock::now() + timeout);
}
const Guid& Writer::guid() const {
  return impl_->endpoint.guid;
}
WriterStats Writer::stats() const {
  return impl_->rtps->stats();
}

Reader::Reader(std::shared_ptr<detail::ReaderImpl> impl) : impl_(std::move(impl)) {}
Reader::~Reader() {
  impl_->participant->remove_reader(*impl_);
}
size_t Reader::matched_writers() const {
  return impl_->rtps->matched_writers();
}
bool Reader::wait_for_writers(size_t n, Duration timeout) {
  return impl_->rtps->wait_for_writers(n, std::chrono::steady_clock::now() + timeout);
}
const Guid& Reader::guid() const {
  return impl_->endpoint.guid;
}
ReaderStats Reader::stats() const {
  return impl_->rtps->stats();
}

RawReader::RawReader(std::shared_ptr<detail::RawReaderImpl> impl) : impl_(std::move(impl)) {}
RawReader::~RawReader() {
  impl_->participant->remove_raw_reader(*impl_);
}
void RawReader::resume() {
  impl_->participant->raw_resume(*impl_);
}
size_t RawReader::matched_writers() const {
  return impl_->participant->raw_matched(*impl_);
}
std::shared_ptr<const WriterInfo> RawReader::writer_info(const Guid& writer) const {
  std::lock_guard lk(impl_->writers_mu);
  auto it = impl_->writer_infos.find(writer);
  return it == impl_->writer_infos.end() ? nullptr : it->second;
}

std::vector<TopicInfo> RawReader::topics() const {
  return impl_->participant->raw_topics(*impl_);
}
ReaderStats RawReader::stats() const {
  return impl_->participant->raw_stats(*impl_);
}

}  // namespace pubsub
