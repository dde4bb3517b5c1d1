// Sink: where the recorder puts what it receives. RecordingSink ("mode": "record") is the
// recording at storage.path (a storage::SegmentWriter); SnapshotSink ("mode": "snapshot",
// snapshot_sink.hpp) keeps the last seconds in memory and writes a recording per snapshot.
// Every method may be called from any thread (the implementations lock inside).
#pragma once

#include <memory>
#include <string>

#include "service/result.hpp"
#include "storage/segment_writer.hpp"

namespace service {

class SnapshotSink;

// How full the sink's memory is (the stats line's "queue", status queue_fill).
struct SinkFill {
  uint64_t in_use_bytes = 0;  // waiting for the disk (closed chunks), or the snapshot buffer
  uint64_t max_bytes = 0;
  uint64_t open_bytes = 0;  // in the chunk being filled (not yet waiting for anything)
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual Result<storage::TopicId> add_topic(const storage::TopicDef& def) = 0;
  virtual Result<storage::WriterId> add_writer(const storage::WriterDef& def) = 0;
  virtual Status add_type(const storage::TypeDef& def) = 0;
  virtual Status add_mark(const storage::Mark& mark) = 0;
  // The writer's records up to `sequence` were left out on purpose (a paused topic).
  virtual Status skip_to(storage::WriterId writer, int64_t sequence) = 0;
  // The writer's records `first` to `last` are missing (it went away before they were
  // delivered): a gap, as a sequence jump would have recorded.
  virtual Status add_gap(storage::WriterId writer, int64_t first, int64_t last) = 0;
  // kFull: no room now (back-pressure: the sample is not acknowledged, offered again later).
  virtual Status try_append(const storage::RecordMeta& meta, storage::ByteSpan payload) = 0;
  // How appends may be batched under one lock (the recorder's receive threads take it for a
  // datagram's samples): the storage writer's (SegmentWriter::AppendLock, record mode) or the
  // snapshot ring's (snapshot mode); neither when the sink locks per record.
  virtual storage::SegmentWriter* batch_writer() { return nullptr; }
  virtual SnapshotSink* batch_snapshot() { return nullptr; }
  virtual Result<uint64_t> split() = 0;
  virtual SinkFill fill() const = 0;
  // For the log when it changes: how data is written (or kept).
  virtual std::string io_description() const = 0;
  // Finishes everything accepted; the first error of the sink's life, if any.
  virtual Status close() = 0;
};

class RecordingSink final : public Sink {
 public:
  explicit RecordingSink(std::unique_ptr<storage::SegmentWriter> w) : w_(std::move(w)) {}
  Result<storage::TopicId> add_topic(const storage::TopicDef& d) override {
    return w_->add_topic(d);
  }
  Result<storage::WriterId> add_writer(const storage::WriterDef& d) override {
    return w_->add_writer(d);
  }
  Status add_type(const storage::TypeDef& d) override { return w_->add_type(d); }
  Status add_mark(const storage::Mark& m) override { return w_->add_mark(m); }
  Status skip_to(storage::WriterId w, int64_t seq) override { return w_->skip_to(w, seq); }
  Status add_gap(storage::WriterId w, int64_t first, int64_t last) override {
    return w_->add_gap(w, first, last);
  }
  Status try_append(const storage::RecordMeta& m, storage::ByteSpan p) override {
    return w_->try_append(m, p);
  }
  storage::SegmentWriter* batch_writer() override { return w_.get(); }
  Result<uint64_t> split() override { return w_->split(); }
  SinkFill fill() const override {
    const auto s = w_->stats();
    return {s.queue_in_use_bytes - s.open_chunk_capacity, s.queue_max_bytes, s.open_chunk_bytes};
  }
  std::string io_description() const override { return w_->io_description(); }
  Status close() override { return w_->close(); }

 private:
  std::unique_ptr<storage::SegmentWriter> w_;
};

}  // namespace service
