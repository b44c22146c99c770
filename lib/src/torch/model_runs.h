// The pieces of a model check (check_model.cc) that are not its phases:
// memory limits for guesses, fresh copies of the loaded model, runs and their
// comparison. Private to the LibTorch plugin.
#pragma once

#include <sys/resource.h>
#include <torch/script.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model_check.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

// {"inputs": (...), "outputs": value}, or the outputs alone.
void SplitReference(const c10::IValue& ref, std::vector<c10::IValue>& inputs, bool& has_inputs, c10::IValue& outputs);

// This machine's memory: inputs over it are refused before they are made.
uint64_t InputBudgetBytes();
// "1.5 GiB".
std::string HumanBytesOf(uint64_t b);
// What inferred candidates may allocate: half the machine, at most 8 GiB.
uint64_t CandidateMemoryBudget();

// Lowers RLIMIT_DATA to what the process uses now plus `extra` for its
// lifetime, and puts the old limit back after.
class DataLimit {
 public:
  explicit DataLimit(uint64_t extra);
  ~DataLimit();
  DataLimit(const DataLimit&) = delete;
  DataLimit& operator=(const DataLimit&) = delete;

 private:
  rlimit old_{};
  bool set_ = false;
};

// Copies of the model as it loaded: every run that a check compares starts
// from the loaded state, so a model whose forward updates its own buffers or
// attributes (a recurrent policy keeping its hidden state) is compared with
// itself, not with its next step. A module that cannot be cloned runs as is.
class FreshCopies {
 public:
  FreshCopies(const torch::jit::Module& module, const std::string& method);
  // A method of a fresh copy (the copy is kept alive with it).
  torch::jit::Method Fresh();
  bool cloned() const { return pristine_.has_value(); }

 private:
  std::string method_;
  std::optional<torch::jit::Module> pristine_, fallback_;
  std::vector<torch::jit::Module> copies_;
};

// Runs the method on `inputs` (retyped by its schema), in inference mode,
// on `device`: tensors in the inputs are moved there first, and those in the
// outputs brought back to the CPU (where they are compared and saved).
c10::IValue Run(torch::jit::Method method, std::vector<c10::IValue> inputs,
                const torch::Device& device = torch::Device(torch::kCPU));

// Compares two runs' outputs exactly (NaN and Inf in the same places count
// as equal) into r.deterministic, r.determinism_note and r.max_run_diff.
void CompareRuns(const c10::IValue& out1, const c10::IValue& out2, ModelCheckResult& r);

// After a method ran twice: r.ran, r.outputs (out1's leaves), determinism
// (out1 vs out2, when o.check_determinism) and, given `expected`, the
// comparison with the reference within o.rtol/o.atol.
void JudgeOutputs(const c10::IValue& out1, const c10::IValue& out2, const c10::IValue* expected,
                  const ModelCheckOptions& o, ModelCheckResult& r);

// --record-reference / --save-reference's recording ({"inputs": (...),
// "outputs": outputs}) and --save-outputs: writes the files `o` names, and
// says in r.recorded and r.outputs_saved whether each was written.
// `intermediates`, if not None, goes into the recording as "intermediates".
void KeepRunFiles(const ModelCheckOptions& o, const std::vector<c10::IValue>& inputs, const c10::IValue& outputs,
                  ModelCheckResult& r, const c10::IValue& intermediates = {});

// What makes a run on guessed inputs suspect: NaN/Inf in its outputs, or a
// second run that differs (`out2` set when `twice`). "" if neither.
std::string Suspect(const c10::IValue& out1, const c10::IValue& out2, bool twice);

}  // namespace tsctl
