// The typed result of the LibTorch half of `tsctl validate` (the LibTorch
// plugin's CheckModel, run in an isolated child; the codec that brings it
// back is private to libtsctl).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tsctl/inputs.h"

namespace tsctl {

// One output leaf of a run.
struct OutputSummary {
  std::string name;   // "output", "output[1]['scores']"
  std::string desc;   // "float32[1, 10]", "int 7", "str 'a'"
  int64_t nonfinite = 0;  // NaN/Inf elements (tensors and floats)
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
  // Forward changes the model's own buffers or attributes: a second call on
  // the same copy differed while two fresh copies (the determinism check)
  // agree or not on their own.
  bool stateful = false;
  double max_run_diff = 0;
  int candidates_tried = 0;           // inferred candidates run before one worked
  // Inferred candidates tried and not kept, in order, each with why.
  std::vector<CandidateTry> candidates;
  std::string candidates_stop;        // why trying stopped early ("the 60 s budget"), if it did
  // Inputs were inferred and no candidate ran cleanly: the one kept ran, but
  // this was wrong with it ("NaN/Inf in output", "two runs differ at ...").
  // A guess's fault, not the archive's: validate warns, never fails.
  std::string guess_suspect;
  bool outputs_saved = false;         // save_outputs_path was written
  // Reference comparison.
  bool reference_compared = false;
  std::string reference_source;
  std::string reference_error;
  std::vector<ReferenceLeaf> reference;
  bool recorded = false;  // record_reference_path was written
  // The lite interpreter (check_mobile): unset when not asked.
  std::optional<bool> mobile_loaded;
  std::string mobile_error;
  // Set when compare_intermediates was asked and the method ran.
  std::optional<IntermediatesResult> intermediates;
};

}  // namespace tsctl
