// The request and typed result of the LibTorch half of `tsctl validate` (the
// LibTorch plugin's CheckModel, run in an isolated child and brought back by
// torch_child_codec.h). Private to libtsctl and its plugins, like the codec.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tsctl/inputs.h"
#include "tsctl/progress_event.h"
#include "tsctl/tensor_desc.h"
#include "tsctl/pt2_run.h"
#include "tsctl/run_spec.h"

namespace tsctl {

// What the LibTorch plugin's CheckModel is asked (validate, find_inputs).
// The run (RunSpec: method, inputs, seed, ranges, device, libraries; the
// limits travel as ChildLimits) and what the check does with it.
struct ModelCheckOptions : RunSpec {
  std::string path;       // the archive, as named in messages
  // What LibTorch opens, when not `path`: "/proc/self/fd/N" for the
  // descriptor the parent opened and checked (the child inherits it), so
  // the check and the load read the same file even if `path` changes.
  std::string load_path;
  bool run = true;
  bool check_determinism = true;
  // Reference outputs: a file (torch::pickle_save / torch.save of a dict
  // {"inputs": (tensors,), "outputs": value}, or of the outputs alone), or the
  // archive's extra/tsctl_reference.pt when `reference_from_archive`.
  std::string reference_path;
  std::string reference_label;  // names the reference in the report instead of reference_path
  bool reference_from_archive = false;
  // Also load it with the lite interpreter (torch::jit::_load_for_mobile),
  // for .ptl archives and those with bytecode.pkl.
  bool check_mobile = false;
  std::vector<double> rtol = {1e-5};  // one value, or one per output
  std::vector<double> atol = {1e-8};
  // Write {"inputs", "outputs"} of this run here (for --record-reference).
  std::string record_reference_path;
  // --compare-intermediates: the recording above also holds every tensor
  // the method's graph computes ("intermediates"), and a run against a
  // reference with them compares its own with them (result.intermediates).
  bool record_intermediates = false;
  bool compare_intermediates = false;
  std::string input_source;        // where args/inputs came from, for the report
  double infer_budget_seconds = 60;  // stop trying candidates after this long
  size_t max_candidates = 12;        // try at most this many inferred candidates
  // validate -m all: a named range applies to the methods that take that
  // argument (and must name an argument of some method).
  bool ranges_for_any_method = false;
  // Skip the first N inferred candidates: an earlier child crashed on the
  // N-th (validate tries the rest in a fresh child).
  size_t skip_candidates = 0;
  std::string save_outputs_path;   // write this run's outputs here (torch.save format; .npy/.npz: NumPy's)
  std::string save_inputs_path;    // write this run's inputs here (the same formats)
  // Told kLoading, then kLoaded once the archive loaded, kMethod (with the
  // schema) once it found the method, then kTrying before each inferred
  // candidate it runs (the child sends these to its parent as they happen).
  std::function<void(const ProgressEvent&)> progress;
  // A .pt2 (kind other than kNone): run through its runner instead of
  // torch::jit::load; `method` must be "forward".
  Pt2RunSpec pt2;
  // Calls of the method on one copy of the model, to see whether it keeps
  // state across calls (torch.stateful): the copy's attributes, buffers and
  // parameters are compared before and after, and the last call's outputs
  // with the first's and with the reference; the method's graph is searched
  // for writes to the model's state. 0: none of this (a reference model, the
  // search for inputs). `calls_origin` says where the number came from
  // ("--calls", "--seed 7", "drawn at random"), for the report.
  int calls = 0;
  std::string calls_origin;
};

// A write to the model's own state that a method's graph makes, found
// before it runs (StateWrites): an attribute set (prim::SetAttr on the
// module or a submodule), or a buffer, parameter, attribute list or dict
// (or a tensor constant of the graph) changed in place.
struct StateWrite {
  std::string attribute;  // "n", "encoder.cache", "bn.running_mean"; "a tensor constant of the graph"
  std::string op;         // "prim::SetAttr", "aten::add_", "aten::append"
  std::string where;      // the source line: "model.py:12: self.n += 1"; "" when the graph keeps none
  std::string note;       // "a BatchNorm's running statistics, ..." for state kept by design; else ""
};

// An attribute, buffer or parameter of the model that a call changed
// (compared on one copy before and after calls).
struct StateChange {
  std::string attribute;  // "n", "bn.running_mean"
  std::string kind;       // "attribute", "buffer", "parameter"
  std::string before;     // "int 0", "list of 0", "Float[3]"
  std::string after;      // "int 1", "list of 1", "Float[3], other values"
  int after_call = 1;     // the call it differed after: 1, or the last (when the first changed nothing)
  std::string note;       // as StateWrite::note
};

// One output leaf of a run.
struct OutputSummary {
  std::string name;   // "output", "output[1]['scores']"
  std::string desc;   // "float32[1, 10]", "int 7", "str 'a'"
  int64_t nonfinite = 0;  // NaN/Inf elements (tensors and floats)
  std::optional<TensorDesc> tensor;  // a tensor of a dtype tsctl names: its dtype, shape, device
};

// One leaf compared against the reference.
struct ReferenceLeaf {
  std::string name;  // the path, "outputs[1]['scores']"
  bool pass = false;
  bool compared = true;    // false: the values cannot be compared (objects)
  bool is_tensor = false;  // statistics below are set only for tensors
  double rtol = 0, atol = 0;
  double max_abs = 0, mean_abs = 0, max_rel = 0, mean_rel = 0;
  bool has_min_tolerance = false;  // min_atol/min_rtol set (a failed tensor)
  double min_atol = 0, min_rtol = 0;  // min_rtol -1: no rtol passes (the reference is 0 where they differ)
  std::string error;  // why it failed when not a tolerance miss ("shape ...", "7 vs 999")
};

// An inferred candidate that was tried and not kept, and why.
struct CandidateTry {
  std::string flags;    // the flags that pin it ("--arg x=1x3x224x224:float32")
  std::string outcome;  // "raised: ...", "NaN/Inf in output", "two runs differ at output", "crashed LibTorch (...)"
};

// --compare-intermediates: this model's intermediate values against the
// reference model's, on the same inputs.
struct IntermediatesResult {
  bool compared = false;         // matched and compared (else `note` says why not)
  std::string matched_by;        // "position", "debug name", "position, up to where the graphs part"
  bool partial = false;          // only the values before the graphs part were compared (`note` says where)
  int64_t values = 0;            // pairs compared, up to and with the first divergence
  int64_t first_divergence = -1; // index in this model's graph order; -1: none
  std::string node, node_b;      // "%x.3 = aten::conv2d" here and in the reference model
  std::string detail;            // "max abs difference 0.31, ... ; shape [1, 8, 32, 32]"
  std::string note;              // why not compared, or what was left out
};

struct ModelCheckResult {
  // Loading.
  bool loaded = false;
  double load_ms = 0;
  std::string load_error;
  std::vector<std::string> methods;  // of the top-level module
  std::vector<std::string> ops;      // operators the methods call
  // Calls of operators that read or write outside the model's tensors, in
  // the graphs LibTorch resolved (unsafe_ops.h): none of its methods ran.
  std::vector<std::string> unsafe;
  // check_mobile: every operator the loaded code calls, as bytecode names
  // them (GraphOperators), for ts.bytecode; empty otherwise.
  std::vector<std::string> graph_ops;
  std::string ops_error;
  // The method.
  bool method_found = false;
  std::string schema;
  // Running.
  bool ran = false;
  std::string run_skipped;   // why it did not run (no error)
  std::string run_error;     // why running failed
  std::string input_source;  // "--input", "--arg", "extra/tsctl_inputs.json", "inferred", ...
  std::string inputs_desc;   // "x=1x3x224x224:float32, k=3"
  std::string inputs_note;   // where inferred inputs came from
  std::string inputs_flags;  // the flags that pin these inputs
  std::vector<ArgSpec> input_args;  // those inputs as arguments (empty for file/bundled inputs)
  std::vector<OutputSummary> outputs;
  std::optional<bool> deterministic;  // unset: not checked
  std::string determinism_note;       // why not, or where the runs differ
  // Forward's outputs depend on earlier calls: the last of `calls` calls on
  // one copy differed from its first (where: `stateful_note`), while two
  // fresh copies (the determinism check) agree or not on their own.
  bool stateful = false;
  std::string stateful_note;  // "output: ...", where the last call's outputs differ
  // torch.stateful (ModelCheckOptions::calls > 0): the writes to the model's
  // state in the graph of the method and of every method and function it
  // calls (`state_searched`: the search ran), and what calls on one copy
  // changed. `calls`: the calls made on that copy (0: none).
  bool state_searched = false;
  std::vector<StateWrite> state_writes;
  std::vector<StateChange> state_changes;
  int calls = 0;
  std::string calls_origin;
  double max_run_diff = 0;
  int candidates_tried = 0;           // inferred candidates run before one worked
  // Inferred candidates tried and not kept, in order, each with why.
  std::vector<CandidateTry> candidates;
  std::string candidates_stop;        // why trying stopped early ("the 60 s budget"), if it did
  // Inputs were inferred and no candidate ran cleanly: the one kept ran, but
  // this was wrong with it ("NaN/Inf in output", "two runs differ at ...").
  // A guess's fault, not the archive's: validate warns, never fails.
  std::string guess_suspect;
  // Given (not inferred) inputs ran, but an operator that skips its shape
  // checks (XNNPACK's prepacked linear and convolution) was fed a tensor its
  // weights contradict: PackedOpChecks' words. validate warns: the outputs
  // are numbers read past or short of what the weights take.
  std::string inputs_contradict;
  bool outputs_saved = false;         // save_outputs_path was written
  bool inputs_saved = false;          // save_inputs_path was written
  // Reference comparison.
  bool reference_compared = false;
  std::string reference_source;
  std::string reference_error;
  // The reference holds inputs, but this run took others (--input, --arg,
  // --load-inputs): its outputs were not compared, and this says why.
  // validate warns: outputs on other inputs say nothing either way.
  std::string reference_skipped;
  std::vector<ReferenceLeaf> reference;
  bool recorded = false;  // record_reference_path was written
  // The lite interpreter (check_mobile): unset when not asked.
  std::optional<bool> mobile_loaded;
  std::string mobile_error;
  // Set when compare_intermediates was asked and the method ran.
  std::optional<IntermediatesResult> intermediates;
};

}  // namespace tsctl
