// .pt2 archives read without LibTorch: exported programs (torch.export.save),
// AOTInductor packages (torch._inductor.aoti_compile_and_package) and the
// early layout (serialized_exported_program.json, PyTorch 2.1-2.2). The
// layout is torch/export/pt2_archive/_package.py's; the program JSON follows
// torch/_export/serde/schema.py. Every JSON record is read bounded (size and
// nesting) and checked field by field: a malformed one becomes a warning or
// one tsctl::Error (kFormat), never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/operators.h"
#include "tsctl/pt2_run.h"

namespace tsctl {

// A parameter, buffer or tensor constant, from the weights (constants)
// config without reading tensor bytes, or from the graph's tensor metadata
// where there is no config (the early layout).
struct Pt2Tensor {
  std::string name;       // fully qualified: "conv.weight"
  std::string role;       // parameter, buffer, constant, custom_obj
  std::string dtype;      // "float32" (the schema's ScalarType, not c10's numbering)
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  int64_t storage_offset = 0;  // in elements
  std::string device;
  bool requires_grad = false;
  bool persistent = true;  // buffers only
  uint64_t numel = 0;
  uint64_t bytes = 0;      // numel * element size
  std::string file;        // record holding the raw storage bytes ("data/weights/weight_0"), "" if none
  uint64_t file_size = 0;  // that record's size; 0 if absent
  bool file_present = false;
  bool use_pickle = false;  // stored with torch.save (e.g. a tensor subclass)
  std::string shared_with;  // first tensor stored in the same file ("" if none)
  // In the program's graph signature. A weights or constants config may hold
  // more (a BatchNorm's num_batches_tracked, a layer the graph no longer
  // calls): torch.export.save writes the whole state dict and
  // torch.export.load keeps them, unused.
  bool in_signature = true;
};

// A user input or output of the program's signature.
struct Pt2Value {
  std::string name;    // the graph's name for it ("x")
  std::string kind;    // tensor, int, float, bool, str, none, sym_int, sym_float, sym_bool, custom_obj, token
  std::string dtype;   // tensors
  std::vector<std::string> shape;  // tensors: "4", or a symbol "s77"
  std::string device;  // tensors
  std::string value;   // constants (as_int, ...): the value as text
};

// A symbolic size and its range (range_constraints); a bound is absent when
// unbounded.
struct Pt2Symbol {
  std::string name;  // "s77"
  std::optional<int64_t> min, max;
};

// A tensor of the sample inputs: where it sits in (args, kwargs).
struct Pt2SampleTensor {
  std::string path;  // "args[0]", "kwargs['mask']"
  std::string dtype;
  std::vector<int64_t> shape;
};

struct Pt2Model {
  std::string name;    // "model" for models/model.json
  std::string record;  // "models/model.json"
  std::optional<int64_t> schema_major, schema_minor;
  std::string torch_version;  // "" where the schema predates the field
  std::vector<std::string> verifiers;  // dialects ("TRAINING", ...)
  std::vector<Pt2Value> inputs, outputs;
  std::vector<Pt2Tensor> tensors;  // parameters, buffers, constants in signature order
  std::vector<Pt2Symbol> symbols;
  uint64_t nodes = 0;  // call nodes of the graph (placeholders and output not counted)
  std::vector<OperatorUse> operators;  // "aten::linear.default", sorted by name
  std::string weights_config;   // "data/weights/model_weights_config.json", "" if none
  std::string constants_config;
  std::string sample_inputs;    // "data/sample_inputs/model.pt", "" if none
  uint64_t sample_inputs_size = 0;
  std::vector<Pt2SampleTensor> sample_tensors;  // read with tsctl's pickle reader
  std::string sample_inputs_error;              // why they could not be read
};

struct Pt2AotiModel {
  std::string name;  // the folder under data/aotinductor/
  std::vector<std::pair<std::string, uint64_t>> files;     // record name and size
  std::vector<std::pair<std::string, std::string>> metadata;  // the first *_metadata.json, by key
  std::string metadata_record;  // "" when there is none
};

struct Pt2Info {
  std::string layout;  // "exported-program", "aoti-package", "early-exported-program"
  std::string archive_format;   // "pt2"
  std::string archive_version;  // "0"
  std::vector<Pt2Model> models;
  std::vector<Pt2AotiModel> aoti;
  // Early layout: what serialized_state_dict.json and serialized_constants.json
  // hold (torch.save archives, not JSON), named precisely.
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
};

// Reads everything above from a .pt2 archive (IsPt2(a.kind())). Damage
// becomes warnings; throws tsctl::Error (kFormat) only for an archive that is
// not a .pt2 at all.
Pt2Info ReadPt2(const Archive& a);

// The program of `model` ("" for the first) printed as Python's
// `print(torch.export.load(path).graph)` prints it (a torch.fx Graph), from
// its JSON alone. Throws tsctl::Error (kUsage) for an unknown model,
// (kFormat) for a program JSON that is missing or malformed, (kUnavailable)
// for an AOTInductor package without a program.
std::string Pt2GraphText(const Archive& a, const std::string& model);

// A node of that graph: its name, op (placeholder, call_function, output),
// target, the module it runs in (the innermost path of its nn_module_stack,
// "" at the top) and the nodes whose values it uses.
struct Pt2GraphNode {
  std::string name, op, target, module;
  std::vector<std::string> uses;
};
// The nodes of `model`'s graph in order, as Pt2GraphText reads them (same errors).
std::vector<Pt2GraphNode> Pt2GraphNodes(const Archive& a, const std::string& model);

// The record of each program: models/<name>.json, or the early layout's
// serialized_exported_program.json (named "model").
std::vector<std::pair<std::string, std::string>> Pt2ProgramRecords(const Archive& a);

// What running the archive needs besides its path (pt2_run_spec.cc): the
// first AOTInductor model if there is one, else the first program; inputs
// guessed from the AOTInductor wrapper's input checks or the program's
// signature. Kind kNone for an archive with neither.
Pt2RunSpec Pt2RunSpecOf(const Archive& a, const Pt2Info& info);

// Bytes per element of a dtype name ("float32" -> 4), 0 if unknown.
uint64_t Pt2ElementSize(const std::string& dtype);

}  // namespace tsctl
