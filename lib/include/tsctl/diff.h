// `tsctl diff A B`: what changed between two archives, read without LibTorch.
// Each section compares one aspect (format, records, module tree, tensors,
// constants, code, operators, extra/ records) and can be switched off.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/inspect.h"
#include "tsctl/output.h"

namespace tsctl {

inline constexpr int kDiffSchemaVersion = 1;

// The sections, in report order.
enum class DiffSection {
  kFormat,      // archive kind, format/bytecode version, byteorder, producer
  kRecords,     // ZIP records added/removed, size/CRC/compression/alignment
  kModules,     // submodules added/removed/retyped, non-tensor attributes
  kParameters,  // parameters, buffers and tensor attributes, values included
  kConstants,   // constants.pkl
  kCode,        // stored TorchScript source per class and method
  kOperators,   // operators used (hook: not wired yet, see DiffOperators)
  kExtra,       // extra/ records
};
inline constexpr int kDiffSectionCount = 8;

const char* DiffSectionName(DiffSection section);
// Parses "format", "records", ... Throws tsctl::Error (kUsage) naming the
// valid names if `name` is none of them.
DiffSection ParseDiffSection(const std::string& name);

struct DiffOptions {
  bool sections[kDiffSectionCount] = {true, true, true, true, true, true, true, true};
  // Two elements a (from A) and b (from B) count as equal when
  // |a - b| <= atol + rtol * |a| (NaN equals NaN).
  double rtol = 0;
  double atol = 0;
  // Records (and tensor storages) whose size and CRC-32 match are taken as
  // equal without reading them, unless `exact`.
  bool exact = false;
  // Leave out `___torch_mangle_N` namespaces (TorchScript's numbering of
  // recompiled classes) from class names, types and code before comparing;
  // classes that then share a name are matched in record order.
  bool ignore_mangle = false;
  int context_lines = 3;          // of the unified code and text diffs
  uint64_t max_text_bytes = 1 << 20;  // extra/ text and JSON diffed up to this size

  bool Enabled(DiffSection s) const { return sections[static_cast<int>(s)]; }
};

enum class ChangeKind { kAdded, kRemoved, kChanged };
const char* ChangeKindName(ChangeKind kind);  // "added", "removed", "changed"

// One field whose value differs: `a` in A, `b` in B.
struct FieldChange {
  std::string field;
  std::string a;
  std::string b;
};

struct RecordChange {
  std::string name;  // without the root folder
  ChangeKind kind = ChangeKind::kChanged;
  std::vector<FieldChange> fields;  // size, crc32, method, aligned, bytes
  // The section that compares this record's contents ("" if none). A record
  // whose bytes changed but that another section covers counts as a
  // difference only through that section.
  std::string covered_by;
  bool counts = true;  // makes the archives different by itself
};

struct ModuleChange {
  std::string path;  // dotted path ("" for the root)
  std::string what;  // "submodule" or "attribute"
  ChangeKind kind = ChangeKind::kChanged;
  std::vector<FieldChange> fields;  // type, value
};

// Element-wise comparison of two tensors of the same dtype and shape.
struct ValueStats {
  uint64_t numel = 0;
  uint64_t differing = 0;   // elements outside the tolerance
  double max_abs = 0;       // max |a - b| over all elements
  double max_rel = 0;       // max |a - b| / |a| (infinite where a == 0 != b)
  bool nan_mismatch = false;  // NaN on one side only somewhere
};

struct TensorChange {
  std::string name;  // attribute path, or "c<N>" for constants
  std::string role;  // parameter, buffer, attribute, constant
  ChangeKind kind = ChangeKind::kChanged;
  std::string dtype_a, dtype_b;
  std::vector<int64_t> shape_a, shape_b;
  // For the same name, dtype and shape: whether values were read and compared
  // (false when the storages' size and CRC matched, or they could not be read).
  bool values_compared = false;
  ValueStats values;
  std::string note;  // why values were not compared, or what else differs
};

struct CodeChange {
  std::string class_name;  // qualified; "" for module-level functions
  std::string method;      // "" when the whole class was added or removed
  ChangeKind kind = ChangeKind::kChanged;
  std::string unified_diff;  // "@@ ..." hunks, for changed methods
  std::string class_b;       // B's name where it differs (matched modulo ___torch_mangle_N)
};

struct JsonChange {
  std::string pointer;  // RFC 6901 path, "" for the root
  ChangeKind kind = ChangeKind::kChanged;
  std::string a, b;     // compact JSON of each side ("" where absent)
};

struct ExtraChange {
  std::string name;  // without "extra/"
  ChangeKind kind = ChangeKind::kChanged;
  std::string content_type;  // json, text, binary
  std::vector<JsonChange> json_changes;
  std::string unified_diff;  // for text
  std::vector<FieldChange> fields;  // size, crc32 (binary or too large)
};

struct SectionResult {
  DiffSection section = DiffSection::kFormat;
  bool compared = false;
  std::string not_compared_reason;  // when !compared: ignored, or not available
  bool equal = true;
};

struct DiffResult {
  std::string path_a, path_b;
  std::string kind_a, kind_b;  // ArchiveKindName of each
  bool formats_differ = false;  // kinds, legacy/bytecode layout or format version
  std::vector<SectionResult> sections;  // one per DiffSection, in order
  std::vector<FieldChange> format;
  std::vector<RecordChange> records;
  std::vector<ModuleChange> modules;
  std::vector<TensorChange> parameters;
  std::vector<TensorChange> constants;
  std::vector<CodeChange> code;
  std::vector<std::string> operators_added, operators_removed;
  std::vector<ExtraChange> extra;
  std::vector<std::string> warnings;  // damage met on either side

  bool Equal() const;
  const SectionResult& Section(DiffSection s) const { return sections[static_cast<int>(s)]; }
};

// Compares `a` with `b`. Damage inside either archive becomes warnings or a
// note on the affected entry; throws tsctl::Error (message starting with the
// archive's name) only if one cannot be inspected at all.
DiffResult DiffArchives(const Archive& a, const Archive& b, const DiffOptions& options = {});
// The same over what Inspect returned for each (`ia` of `a`, `ib` of `b`),
// for a caller that has inspected them already (tsctl report A B).
DiffResult DiffArchives(const Archive& a, const ArchiveInfo& ia, const Archive& b, const ArchiveInfo& ib,
                        const DiffOptions& options = {});

// The "operators" section: fills operators_added/removed and returns true,
// or returns false with `reason` when neither archive has code or bytecode
// (the static operator list, tsctl/operators.h).
bool DiffOperators(const Archive& a, const Archive& b, DiffResult& result, std::string& reason);

// Compares `n` elements of `dtype` (little-endian storage bytes, as PyTorch
// writes them) and adds them to `stats`. Supports float16/32/64, bfloat16,
// complex32/64/128, int8/16/32/64, uint8, bool and the quantized storages
// (their raw integers). Throws tsctl::Error (kFormat) for another dtype.
void CompareElements(const std::string& dtype, const char* a, const char* b, uint64_t n,
                     double rtol, double atol, ValueStats& stats);
// Bytes per element of `dtype` (as CompareElements knows it), 0 if unknown.
uint64_t DiffElementSize(const std::string& dtype);

// Compares two ExecuTorch files (.pte, .bpte, .ptd; tsctl/pte.h) in the same
// sections: format (kind, identifier, header, program version), records (the
// parts of the size breakdown), modules (each method's inputs, outputs,
// delegates, instruction counts and memory plan), parameters (stored tensors
// by fully qualified name, values compared from the files' bytes), code
// (each method's chains as tsctl graph prints them), operators (name.overload);
// constants and extra are not compared. Throws tsctl::Error as ReadPte does.
DiffResult DiffPteFiles(const std::string& path_a, const std::string& path_b, const DiffOptions& options = {},
                        uint64_t max_input_bytes = uint64_t{4} << 30);

// JSON text (schema_version, sections, changes), one line without a newline.
std::string RenderJson(const DiffResult& result);
void RenderDiffText(const DiffResult& result, std::ostream& out);
// diff's document in `format` (text, json).
std::string Render(const DiffResult& result, OutputFormat format);

}  // namespace tsctl
