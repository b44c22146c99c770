// ExecuTorch files read without ExecuTorch, Python or LibTorch: programs
// (.pte, file identifier "ET12" at bytes 4-8), external data (.ptd, "FT01")
// and bundled programs (.bpte, "BP08"). The FlatBuffers verifier checks every
// file before anything is read, and every offset and size of the headers and
// segments is checked against the file's size: a damaged or hostile file
// becomes one tsctl::Error (kFormat), never a crash or a read out of bounds.
// Segment data (weights, delegate blobs) is never read, only placed, so a
// program of gigabytes costs the reading of its flatbuffer. Strings taken
// from the file (method, operator, backend and tensor names, keys, String
// values) are untrusted: escape them before showing them (tsctl/escape.h).
#pragma once

#include "tsctl/output.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tsctl {

class ByteSource;  // tsctl/source.h

enum class PteKind {
  kProgram,     // .pte, ET12
  kFlatTensor,  // .ptd, FT01
  kBundled,     // .bpte, BP08: a program with test inputs and expected outputs
};
const char* PteKindName(PteKind kind);  // "program", "flat_tensor", "bundled_program"

// The header after the identifier: a program's optional extended header
// ("eh00") or a .ptd's FlatTensor header ("FH01").
struct PteHeader {
  bool present = false;
  std::string magic;        // "eh00" or "FH01"
  uint32_t length = 0;      // bytes of the header, magic and length field included (24 or 32; FH01: 40)
  uint64_t program_size = 0;  // bytes of the flatbuffer from offset 0, headers included (FH01: offset + size)
  uint64_t flatbuffer_offset = 0;  // FH01 only: where the flatbuffer's data starts
  uint64_t segment_base_offset = 0;  // where segment offsets count from (0: no segments)
  std::optional<uint64_t> segment_data_size;  // eh00 of 32 bytes or more, FH01
};

// What an EValue holds, named as ExecuTorch's EValue tags.
enum class PteValueKind {
  kNone,
  kInt,
  kBool,
  kDouble,
  kTensor,
  kString,
  kIntList,
  kDoubleList,
  kBoolList,
  kTensorList,
  kOptionalTensorList,
  kUnknown,  // a union type this schema does not know
};
const char* PteValueKindName(PteValueKind kind);  // "None", "Int", ..., "TensorList"

enum class PteShapeDynamism { kStatic, kDynamicBound, kDynamicUnbound, kUnknown };
const char* PteShapeDynamismName(PteShapeDynamism d);  // "static", "dynamic_bound", "dynamic_unbound"

// Where a tensor's bytes are.
enum class PteDataLocation {
  kNone,     // not in the file: an input or an activation (memory-planned or given at run time)
  kInline,   // Program.constant_buffer[data_buffer_idx] (the layout before 2024-09)
  kSegment,  // the constant segment, at constant_segment.offsets[data_buffer_idx]
  kMutable,  // initial value of a mutable tensor, in mutable_data_segments
  kExternal, // in a .ptd, found by the fully qualified name
};
const char* PteDataLocationName(PteDataLocation l);  // "none", "inline", "segment", "mutable", "external"

struct PteTensor {
  std::string dtype;  // ExecuTorch's ScalarType name ("Float", "Long", "QUInt8"); "ScalarType(N)" if unknown
  std::vector<int64_t> sizes;  // upper bounds when dynamic_bound
  std::vector<uint8_t> dim_order;
  PteShapeDynamism dynamism = PteShapeDynamism::kStatic;
  uint64_t nbytes = 0;  // elements x element size; 0 if a size is negative or the dtype's size unknown
  std::string fqn;      // fully qualified name ("linear.weight"); "" if none
  PteDataLocation location = PteDataLocation::kNone;
  uint32_t data_buffer_idx = 0;
  std::optional<uint32_t> segment_index;  // kSegment, kMutable: index into PteProgram::segments
  uint64_t segment_offset = 0;            // kSegment, kMutable: offset into that segment's data
  // kInline, kSegment, kMutable: where the bytes start, from the start of the
  // program (the file; a .bpte's embedded program: PteBundled::program_offset).
  uint64_t data_offset = 0;
  bool memory_planned = false;            // has allocation details
  uint32_t memory_id = 0;
  uint64_t memory_offset = 0;
};

// An input or output of a method.
struct PteValue {
  PteValueKind kind = PteValueKind::kNone;
  PteTensor tensor;        // kTensor
  std::string scalar;      // kInt, kBool, kDouble: the value as text; kString: the (untrusted) string
  uint64_t list_size = 0;  // lists: items
  // The items of a list: IntList, TensorList: indices of the method's values
  // (ExecuTorch boxes a list's ints and tensors as values of their own);
  // OptionalTensorList: the same, -1 for None; BoolList: 0 or 1. DoubleList:
  // in `doubles`. Filled only when read with PteReadOptions::chains.
  std::vector<int64_t> items;
  std::vector<double> doubles;
};

struct PteOperator {
  std::string name;      // "aten::add"
  std::string overload;  // "out" ("" for none)
  uint64_t calls = 0;    // kernel calls of it in the method's chains
};
// "aten::add.out" (name alone when there is no overload): the key a runtime
// registers kernels under.
std::string PteOperatorKey(const PteOperator& op);

struct PteInstructionCounts {
  uint64_t kernel_calls = 0;
  uint64_t delegate_calls = 0;
  uint64_t moves = 0;
  uint64_t jump_false = 0;
  uint64_t frees = 0;
  uint64_t unknown = 0;  // an instruction type this schema does not know, or none
};

enum class PteInstructionKind { kKernelCall, kDelegateCall, kMove, kJumpFalse, kFree, kUnknown };

// One instruction of a chain, its indices checked against what they index.
struct PteInstruction {
  PteInstructionKind kind = PteInstructionKind::kUnknown;
  int64_t target = -1;  // kernel call: operator index; delegate call: delegate index; jump: destination instruction
  // Values it names: a call's arguments; a move's from and to; a jump's
  // condition; a free's value.
  std::vector<int64_t> args;
};

struct PteChain {
  std::vector<int64_t> inputs, outputs;  // value indices
  std::vector<PteInstruction> instructions;
};

struct PteDelegate {
  std::string backend_id;  // "XnnpackBackend", "QnnBackend"
  bool inline_data = false;  // the blob is in Program.backend_delegate_data, else in Program.segments
  uint32_t index = 0;        // into backend_delegate_data or segments
  uint64_t bytes = 0;        // the blob's size
  std::vector<std::string> compile_spec_keys;
  uint64_t calls = 0;        // delegate calls of it
  uint64_t data_offset = 0;  // where the blob starts, from the program's first byte
  uint32_t compile_specs_crc = 0;  // CRC-32 of every key and value, in order: specs that differ only in a value
};

struct PteMethod {
  std::string name;  // "forward"
  std::vector<PteValue> inputs, outputs;
  std::vector<PteOperator> operators;  // in the method's order
  PteInstructionCounts instructions;
  std::vector<PteDelegate> delegates;
  std::vector<int64_t> non_const_buffer_sizes;  // the memory plan; [0] is reserved
  uint64_t values = 0;
  uint64_t chains = 0;
  // Filled only when read with PteReadOptions::chains (tsctl graph): the
  // method's value table, its inputs and outputs as value indices, and each
  // chain's instructions; every index in them is checked.
  std::vector<PteValue> value_table;
  std::vector<int64_t> input_values, output_values;
  std::vector<PteChain> chain_list;
};

// A tensor whose bytes the file carries or names (location != kNone).
struct PteStoredTensor {
  std::string method;
  uint32_t value_index = 0;
  PteTensor tensor;
};

// What a part of the file holds.
enum class PteSizeKind {
  kHeader,        // root offset, identifier, extended header (eh00, FH01)
  kFlatbuffer,    // the flatbuffer's tables (methods, values, ...) less the data below
  kConstants,     // constant tensor bytes (inline buffers or the constant segment)
  kDelegate,      // a delegate's blob (label: backend id)
  kNamedData,     // data found by key (one part for all keys)
  kMutableData,   // initial values of mutable tensors
  kTensorData,    // .ptd: tensor and blob data
  kProgram,       // .bpte: the embedded program
  kTestData,      // .bpte: inputs and expected outputs of the tests
  kUnreferenced,  // a segment nothing in the program refers to
  kPadding,       // alignment and gaps between the parts
};
const char* PteSizeKindName(PteSizeKind kind);  // "header", "flatbuffer", "constants", "delegate", ...

// One line of a size breakdown. The parts of a breakdown sum to the size of
// what it breaks down (the file, or a .bpte's embedded program).
struct PteSizePart {
  PteSizeKind kind = PteSizeKind::kPadding;
  std::string label;           // kDelegate: the backend id; "" otherwise
  bool in_flatbuffer = false;  // inline data inside the flatbuffer rather than a segment
  uint64_t bytes = 0;
};

struct PteSegment {
  uint64_t offset = 0;       // relative to the segment base offset
  uint64_t size = 0;
  uint64_t file_offset = 0;  // absolute
  PteSizeKind use = PteSizeKind::kUnreferenced;  // what refers to it first
  std::string label;                             // the backend id or the named data key
};

struct PteSubsegments {
  uint32_t segment_index = 0;
  std::vector<uint64_t> offsets;
};

struct PteNamedData {
  std::string key;
  uint32_t segment_index = 0;
  uint64_t bytes = 0;  // the segment's size
};

struct PteProgram {
  uint32_t version = 0;  // Program.version
  std::vector<PteMethod> methods;
  uint64_t constant_buffers = 0;  // old layout: entries of the inline constant_buffer
  uint64_t constant_buffer_bytes = 0;
  uint64_t inline_delegate_blobs = 0;  // entries of backend_delegate_data
  uint64_t inline_delegate_bytes = 0;
  std::optional<PteSubsegments> constant_segment;
  std::vector<PteSubsegments> mutable_data_segments;
  std::vector<PteSegment> segments;
  std::vector<PteNamedData> named_data;
  std::vector<PteStoredTensor> tensors;
};

// A tensor of a .ptd: from the first FT01 layout's tensor table, or a named
// data entry with a tensor layout.
struct PteDataTensor {
  std::string fqn;
  std::string dtype;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;
  uint32_t segment_index = 0;
  uint64_t offset = 0;  // into the segment's data
  uint64_t nbytes = 0;
};

struct PteFlatTensor {
  uint32_t version = 0;
  bool first_layout = false;      // FT01 as first written (early 2025): tensors, no named data
  uint32_t tensor_alignment = 0;  // first layout only
  std::vector<PteDataTensor> tensors;
  std::vector<PteSegment> segments;
  std::vector<PteNamedData> named_data;
};

// A value of a bundled test case: a tensor (its dtype, sizes, dim order and
// where its bytes lie in the file) or a scalar.
struct PteBundledValue {
  PteValueKind kind = PteValueKind::kNone;  // kTensor, kInt, kBool, kDouble; kNone: a kind the schema lacks
  int scalar_type = 0;                      // a tensor's ScalarType value (tsctl/dtype.h)
  std::vector<int64_t> sizes;
  std::vector<int64_t> dim_order;
  uint64_t data_offset = 0;  // in the file
  uint64_t data_size = 0;
  int64_t int_value = 0;     // kInt, kBool
  double double_value = 0;   // kDouble
};

struct PteTestCase {
  uint64_t inputs = 0;
  uint64_t expected_outputs = 0;
  uint64_t data_bytes = 0;  // tensor bytes of both
  std::vector<PteBundledValue> input_values, expected_values;
};

struct PteTestSuite {
  std::string method_name;
  std::vector<PteTestCase> cases;
};

struct PteBundled {
  uint32_t version = 0;
  std::vector<PteTestSuite> suites;
  uint64_t program_bytes = 0;  // the embedded program, read into PteFile::program
  uint64_t program_offset = 0;  // where it starts in the file
  PteHeader program_header;    // its extended header
  std::string program_identifier;
  std::vector<PteSizePart> program_sizes;  // its breakdown; sums to program_bytes
};

struct PteFile {
  PteKind kind = PteKind::kProgram;
  std::string identifier;  // "ET12", "FT01", "BP08"
  uint64_t file_size = 0;
  PteHeader header;            // a program's eh00 (absent in old programs), a .ptd's FH01; none in a .bpte
  PteProgram program;          // kProgram; kBundled: the embedded program
  PteFlatTensor flat_tensor;   // kFlatTensor
  PteBundled bundled;          // kBundled
  std::vector<PteSizePart> sizes;  // sums to file_size
};

// Bytes at the start of a file that LooksLikePte needs.
inline constexpr size_t kPteHeadBytes = 8;

// True if `first_bytes` (the start of a file, at least kPteHeadBytes) carry an
// ExecuTorch identifier at bytes 4-8: "ET" (programs, any schema version),
// "FT" (.ptd) or "BP" (.bpte) and two decimal digits. For the commands that
// recognise inputs: such a file is an ExecuTorch file, not a damaged ZIP.
bool LooksLikePte(std::string_view first_bytes);

// What to read beyond the summary every command needs.
struct PteReadOptions {
  bool chains = false;  // each method's values and instructions (PteMethod::value_table, chain_list)
};

// An ETDump (ExecuTorch's event tracer's record, "ED00"): its runs, each
// with its profiling events (an operator call: "OPERATOR_CALL" at an
// instruction of a chain; a delegate call; a method's execution), times in
// the tracer's units (ExecuTorch's CPU runtime: nanoseconds).
struct PteProfileEvent {
  std::string name;          // untrusted: escape it
  int64_t chain = 0;
  int64_t instruction = -1;  // the instruction of `chain` it timed, -1 if none
  int64_t delegate_id = -1;  // a delegate's event: its debug id (int), -1 if none
  std::string delegate_name; // ... or its debug id (string), untrusted
  uint64_t start = 0, end = 0;
};
struct PteRunData {
  std::string name;  // untrusted
  int64_t bundled_input_index = -1;
  std::vector<PteProfileEvent> events;
  uint64_t allocation_events = 0, debug_events = 0;
};
struct PteETDump {
  uint32_t version = 0;
  std::vector<PteRunData> runs;
};

// Reads an ETDump (size-prefixed, as ETDumpGen writes it, or not); `name`
// names it in messages. Throws tsctl::Error (kFormat, "<name>: <what>") if
// it fails the FlatBuffers verifier or is no ETDump.
PteETDump ReadETDump(std::string_view bytes, const std::string& name);

// Reads the ExecuTorch file at `path` (a regular file is read at random:
// its headers and flatbuffer only; a stream is read whole). Throws
// tsctl::Error (kIo) if it cannot be read, (kFormat, "<path>: <what>") if
// it is not an ET12 program, FT01 data file or BP08 bundled program (an
// older or newer schema version is named in the message), fails the
// FlatBuffers verifier, or has a header, segment or index that does not fit.
PteFile ReadPte(const std::string& path, const PteReadOptions& options = {});

// ReadPte on a source already open (its Name() stands for the path): what
// it reads is that file, not the path opened again.
PteFile ReadPteSource(const ByteSource& src, const PteReadOptions& options = {});

// ReadPte on bytes in memory; `name` stands for the path in messages.
PteFile ReadPteBytes(std::string_view bytes, const std::string& name, const PteReadOptions& options = {});

}  // namespace tsctl

namespace tsctl {

// True when the file at `path` starts like an ExecuTorch file (LooksLikePte),
// or is named .pte, .ptd or .bpte and does not start like a ZIP (ReadPte then
// says what it starts with); false for anything else, a stream, or a file
// that cannot be read.
bool IsPteFile(const std::string& path);

// tsctl inspect of an ExecuTorch file (render/render_pte.cc): the header,
// each method (signature, operators with counts, instructions by kind,
// delegates, memory plan), stored tensors, segments and the size breakdown.
// Every string from the file is escaped. `path` names it.
std::string RenderPteText(const PteFile& file, const std::string& path);
// The same as one JSON document (docs/schemas/inspect_pte.schema.json).
std::string RenderPteJson(const PteFile& file, const std::string& path);
// inspect's document of an ExecuTorch file in `format` (text, json).
std::string Render(const PteFile& file, const std::string& path, OutputFormat format);

// tsctl graph of an ExecuTorch program (read with PteReadOptions::chains):
// the instruction chains of the method named `method` as ExecuTorch's
// print_program prints them (exir/print_program.py: "  0: aten::add.out
// 0I0T[2, 2]f,..."), every chain of it, or as Graphviz DOT (`dot`): a node
// per call, an edge from the instruction that first names a tensor to each
// that names it later. Strings from the file are not escaped here (the
// caller escapes the text as for any graph). Throws Error (kUsage) naming
// the methods when there is no such method, (kFormat) for a .ptd, which has
// no program.
std::string RenderPteGraph(const PteFile& file, const std::string& method, bool dot);

// The ExecuTorch runtime this build runs programs on (validate; the
// tsctl-pte-runner child, built where ExecuTorch's SDK was found:
// scripts/install_executorch_sdk.sh): "ExecuTorch 1.5.1", or "" for none.
std::string PteRuntimeVersion();

}  // namespace tsctl
