// The pieces of a model check that are not its phases (model_runs.h).
#include "model_runs.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "compare_values.h"
#include "py_values.h"
#include "torch_util.h"
#include "tsctl/error.h"

namespace tsctl {
namespace {

// The data size (heap, anonymous mappings, stack) of this process, from
// /proc/self/statm; 0 if unknown.
uint64_t DataBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0, shared = 0, text = 0, lib = 0, data = 0;
  if (!(statm >> size >> resident >> shared >> text >> lib >> data)) return 0;
  return data * static_cast<uint64_t>(::sysconf(_SC_PAGE_SIZE));
}

}  // namespace

// {"inputs": (...), "outputs": value}, or the outputs alone.
void SplitReference(const c10::IValue& ref, std::vector<c10::IValue>& inputs, bool& has_inputs, c10::IValue& outputs) {
  if (ref.isGenericDict()) {
    auto dict = ref.toGenericDict();
    if (dict.contains("outputs")) {
      outputs = dict.at("outputs");
      if (dict.contains("inputs")) {
        inputs = ArgumentList(dict.at("inputs"));
        has_inputs = true;
      }
      return;
    }
  }
  outputs = ref;
}

// Inputs over this many bytes are refused before they are allocated: the
// machine's memory.
uint64_t InputBudgetBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{8} << 30;
}

std::string HumanBytesOf(uint64_t b) {
  char buf[64];
  if (b == UINT64_MAX) return "more than 16 EiB";
  std::snprintf(buf, sizeof buf, "%.3g GiB", static_cast<double>(b) / (1 << 30));
  return buf;
}

// Inferred candidates are guesses, and a wrong guess can make a model
// allocate without bound (a detection model resizing a 1x16000 "image" to a
// 320-pixel short side asked for 24 GiB): while they run, the child may grow
// its data (heap and anonymous mappings, RLIMIT_DATA) by at most this much, so
// a runaway candidate fails with LibTorch's allocation error and the next one
// is tried, instead of the kernel's OOM killer ending the child or something
// else on the machine. Half the machine's memory, at most 8 GiB.
uint64_t CandidateMemoryBudget() { return std::min<uint64_t>(InputBudgetBytes() / 2, uint64_t{8} << 30); }

DataLimit::DataLimit(uint64_t extra) {
    uint64_t now = DataBytes();
    if (now == 0 || ::getrlimit(RLIMIT_DATA, &old_) != 0) return;
    rlimit lowered = old_;
    lowered.rlim_cur = static_cast<rlim_t>(now + extra);
    if (old_.rlim_cur != RLIM_INFINITY && lowered.rlim_cur > old_.rlim_cur) return;
    set_ = ::setrlimit(RLIMIT_DATA, &lowered) == 0;
}

DataLimit::~DataLimit() {
  if (set_) ::setrlimit(RLIMIT_DATA, &old_);
}

FreshCopies::FreshCopies(const torch::jit::Module& module, const std::string& method) : method_(method) {
  try {
    pristine_ = module.clone();
  } catch (const std::exception&) {
    pristine_.reset();
  }
  if (!pristine_) fallback_ = module;
}

torch::jit::Method FreshCopies::Fresh() {
  if (!pristine_) return fallback_->get_method(method_);
  copies_.push_back(pristine_->clone());
  if (copies_.size() > 2) copies_.erase(copies_.begin());
  return copies_.back().get_method(method_);
}

c10::IValue Run(torch::jit::Method method, std::vector<c10::IValue> inputs, const torch::Device& device) {
  const auto& formal = method.function().getSchema().arguments();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i + 1 < formal.size()) inputs[i] = Retype(formal[i + 1].type(), inputs[i]);
    if (!device.is_cpu()) inputs[i] = ToDevice(inputs[i], device);
  }
  c10::InferenceMode guard;
  c10::IValue out = method(std::move(inputs));
  return device.is_cpu() ? out : ToDevice(out, torch::Device(torch::kCPU));
}

// Compares two runs' outputs exactly (NaN and Inf in the same places count
// as equal) into r.deterministic, r.determinism_note and r.max_run_diff.
void CompareRuns(const c10::IValue& out1, const c10::IValue& out2, ModelCheckResult& r) {
  std::vector<ReferenceLeaf> leaves;
  CompareValues(out2, out1, "output", Tolerances::Exact(), leaves);
  bool same = true, all_compared = true;
  for (const auto& l : leaves) {
    if (!l.compared) {
      all_compared = false;
      r.determinism_note = l.name + ": " + l.error;
      continue;
    }
    if (!l.pass) {
      same = false;
      if (std::isfinite(l.max_abs)) r.max_run_diff = std::max(r.max_run_diff, l.max_abs);
      if (r.determinism_note.empty()) r.determinism_note = l.name + (l.error.empty() ? "" : ": " + l.error);
    }
  }
  if (!same) r.deterministic = false;
  else if (all_compared && !leaves.empty()) r.deterministic = true;
  else if (leaves.empty()) r.determinism_note = "the outputs hold nothing to compare";
}

void JudgeOutputs(const c10::IValue& out1, const c10::IValue& out2, const c10::IValue* expected,
                  const ModelCheckOptions& o, ModelCheckResult& r) {
  r.ran = true;
  r.outputs = SummarizeOutputs(out1, "output");
  if (o.check_determinism) CompareRuns(out1, out2, r);
  if (expected) {
    Tolerances tol;
    tol.rtol = o.rtol;
    tol.atol = o.atol;
    CompareValues(out1, *expected, "outputs", tol, r.reference);
    r.reference_compared = true;
  }
}

// What makes a run on guessed inputs suspect: NaN/Inf in its outputs, or a
// second run that differs (`out2` set when `twice`). "" if neither.
std::string Suspect(const c10::IValue& out1, const c10::IValue& out2, bool twice) {
  for (const OutputSummary& s : SummarizeOutputs(out1, "output")) {
    if (s.nonfinite > 0) return std::to_string(s.nonfinite) + " NaN/Inf in " + s.name;
  }
  if (!twice) return "";
  ModelCheckResult runs;
  CompareRuns(out1, out2, runs);
  if (runs.deterministic == false) return "two runs differ at " + runs.determinism_note;
  return "";
}

void KeepRunFiles(const ModelCheckOptions& o, const std::vector<c10::IValue>& inputs, const c10::IValue& outputs,
                  ModelCheckResult& r, const c10::IValue& intermediates) {
  if (!o.record_reference_path.empty()) {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    dict.insert("inputs", c10::ivalue::Tuple::create(inputs));
    dict.insert("outputs", outputs);
    if (!intermediates.isNone()) dict.insert("intermediates", intermediates);
    try {
      SaveValueFile(dict, o.record_reference_path);
      r.recorded = true;
    } catch (const Error&) {
      r.recorded = false;
    }
  }
  if (!o.save_outputs_path.empty()) {
    try {
      SaveValueFile(outputs, o.save_outputs_path);
      r.outputs_saved = true;
    } catch (const Error&) {
      r.outputs_saved = false;
    }
  }
  if (!o.save_inputs_path.empty()) {
    try {
      SaveValueFile(c10::ivalue::Tuple::create(inputs), o.save_inputs_path);
      r.inputs_saved = true;
    } catch (const Error&) {
      r.inputs_saved = false;
    }
  }
}

}  // namespace tsctl
