// Decoding for `pubsub-replay export --decode` and the schemas of `--format mcap`: the types of
// the selected topics, from IDL files (types/idl.hpp) or else from the recording's stored
// definitions, and the CSV flattening of decoded values. Private to
// service/src/replay; used on the exporting thread only.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "service/result.hpp"
#include "types/catalog.hpp"
#include "types/cdr.hpp"
#include "types/type_model.hpp"

namespace service::replay::detail {

class SampleDecoder {
 public:
  // Parses the IDL files (in order; the first that defines a type name wins), then the
  // recording's definitions of the selected topics' types (sel.recorded_types: IDL-sourced
  // before looked-up), and finds the type of every selected topic by its recorded type name.
  // Errors: an IDL file that does not parse or read (the parser's "FILE:LINE:COLUMN: ..."
  // message), or (with require_one) no selected topic has its type. Topics without a type are
  // named in `missing`; stored definitions that do not parse in `warnings`.
  static Result<SampleDecoder> create(const std::vector<std::string>& idl_files,
                                      const ResolvedSelection& sel,
                                      std::vector<std::string>& missing,
                                      std::vector<std::string>& warnings, bool require_one = true);

  struct TopicType {
    const types::TypeLibrary* lib = nullptr;
    types::TypeId id = types::kNoType;
    std::string name;
    const char* source = "idl";  // "idl" (--idl, or the recording's IDL) or "lookup"
  };
  // The type of a topic, or nullptr.
  const TopicType* type_of(storage::TopicId topic) const {
    auto it = topics_.find(topic);
    return it == topics_.end() ? nullptr : &it->second;
  }
  // The value of one sample of that type.
  // `trailing`: see types::decode_cdr.
  static Result<types::Json> decode(const TopicType& type, storage::ByteSpan payload,
                                    size_t* trailing = nullptr);
  // The type name shared by every selected topic that has a type, or "" when they differ.
  std::string single_type_name() const;
  // Topics whose type came from --idl although the recording holds a definition that differs:
  // "topic T: type N from FILE differs from the one recorded (lookup): member x: double here,
  // float in the recording", one per topic.
  const std::vector<std::string>& type_mismatches() const { return mismatches_; }
  // CSV: the leaf columns of the (single) type, each under "value" as in the JSON lines:
  // "value.pose.position.x", ... ("value" for a type that is not a struct). Never one of the
  // metadata columns (topic, writer, seq, ..., decode_error).
  const std::vector<std::string>& csv_columns() const { return columns_; }
  // Appends ",v1,v2,..." for the columns (an empty field for a missing or null value).
  void append_csv_values(std::string& out, const types::Json& value) const;

 private:
  void flatten(const types::TypeLibrary& lib, types::TypeId id, std::vector<std::string>& path,
               int depth);

  types::TypeCatalog catalog_;  // owns the libraries topics_ point into
  std::map<storage::TopicId, TopicType> topics_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> column_paths_;
  std::vector<std::string> mismatches_;
};

}  // namespace service::replay::detail
