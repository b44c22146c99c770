// `tsctl inspect`: everything stored in an archive, read without LibTorch and
// without reading tensor data.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/code_classes.h"
#include "tsctl/operators.h"
#include "tsctl/output.h"
#include "tsctl/pt2.h"

namespace tsctl {

struct RecordInfo {
  std::string name;  // without the root folder
  uint64_t header_offset = 0;
  uint64_t data_offset = 0;
  uint64_t size = 0;
  uint64_t compressed_size = 0;
  uint16_t method = 0;
  uint32_t crc32 = 0;
  // "ok", "mismatch", "unchecked" (tensor data, unless verify_crc), or "error".
  std::string crc_status = "unchecked";
  bool aligned = false;  // data starts on a 64-byte boundary
  std::string error;     // local header damage or a read error
};

struct TensorInfo {
  std::string name;  // attribute path, e.g. "layer1.0.conv1.weight"
  std::string role;  // parameter, buffer, attribute, constant
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  int64_t storage_offset = 0;
  std::string storage_key;
  std::string device;
  uint64_t numel = 0;
  uint64_t bytes = 0;  // numel * element size
  bool requires_grad = false;
  bool quantized = false;
};

struct ModuleInfo {
  std::string name;  // attribute name in the parent ("" for the root)
  std::string path;  // dotted path from the root
  std::string type;  // qualified class name
  std::vector<TensorInfo> tensors;
  std::vector<AttributeInfo> attributes;
  std::vector<ModuleInfo> children;
  // A legacy (model.json) module's code record, whose top-level defs are its
  // methods (torchscriptArena); "" in other layouts, where classes hold them.
  std::string code_record;
};

struct CodeRecordInfo {
  std::string name;
  uint64_t size = 0;
  uint64_t compressed_size = 0;
  bool has_debug_info = false;  // a .debug_pkl sits beside it
};

struct ExtraInfo {
  std::string name;  // without "extra/"
  uint64_t size = 0;
  std::string content_type;  // json, text, binary, unreadable
  std::string content;       // the text when json or short text
  bool truncated = false;
  std::string error;
};

struct TotalInfo {
  std::string dtype;
  std::string device;
  uint64_t tensors = 0;
  uint64_t numel = 0;
  uint64_t bytes = 0;
};

struct FormatInfo {
  std::optional<int64_t> version;
  std::string version_record;  // "version" or ".data/version"
  std::string byteorder;
  std::string serialization_id;
  bool has_constants_pkl = false;
  bool has_bytecode = false;
  std::optional<int64_t> bytecode_version;
  std::vector<std::string> bytecode_methods;
  bool legacy = false;  // model.json layout
  std::string producer_name;
  std::string producer_version;
  bool traced_inputs = false;  // traced_inputs/ records present
};

struct ArchiveInfo {
  std::string path;
  uint64_t file_size = 0;
  std::string kind;
  std::string root;
  FormatInfo format;
  std::vector<RecordInfo> records;
  std::optional<ModuleInfo> module;
  std::vector<TensorInfo> constants;
  std::vector<AttributeInfo> other_constants;
  std::vector<ClassInfo> classes;
  std::vector<CodeRecordInfo> code;
  std::vector<ExtraInfo> extra;
  OperatorList operators;  // what the methods call (see operators.h)
  std::vector<TotalInfo> totals;
  uint64_t tensor_bytes = 0;   // sum over tensors (views counted per tensor)
  uint64_t storage_bytes = 0;  // sum of the tensor data records
  std::vector<std::string> warnings;
  // A .pt2 archive (kind pt2, pt2-aoti, pt2-early): its programs, weights and
  // AOTInductor models; `module`, `classes` and `code` stay empty.
  std::optional<Pt2Info> pt2;
};

struct InspectOptions {
  bool verify_crc = false;          // also read tensor data records to check CRCs
  uint64_t max_extra_text = 4096;   // show extra/ text up to this size
  uint64_t max_extra_json = 65536;  // show extra/ JSON up to this size
};

// Throws tsctl::Error only if the archive cannot be read at all; damage inside
// it becomes warnings and record errors.
ArchiveInfo Inspect(const Archive& archive, const InspectOptions& options = {});

// ---- Rendering (lib/src/render/render_inspect.cc) ----

inline constexpr int kInspectSchemaVersion = 1;

// JSON text with raw integers, one line without a newline. Every string
// from the archive is made valid UTF-8 (see escape.h).
std::string RenderJson(const ArchiveInfo& info);

struct TextOptions {
  bool show_records = true;
  bool show_code = true;
};
// Text with human units and aligned tables. Every string from the archive is
// escaped (see escape.h).
void RenderText(const ArchiveInfo& info, std::ostream& out, const TextOptions& options = {});
// inspect's document in `format` (text, json).
std::string Render(const ArchiveInfo& info, OutputFormat format, const TextOptions& text = {});

}  // namespace tsctl
