// The LibTorch half of `tsctl validate`, run in a child process.
#include "check_model.h"

#include <torch/csrc/jit/mobile/import.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>

#include "compare_values.h"
#include "graph.h"
#include "operator_libraries.h"
#include "module_state.h"
#include "model_checker.h"
#include "py_values.h"
#include "tensors.h"
#include "torch_util.h"
#include "unsafe_ops.h"
#include "view_guard.h"
#include "weight_checks.h"

namespace tsctl {

ModelCheckResult ModelChecker::Check() {
  // Test hook: TSCTL_FAULT_CHECK_MODEL=crash|hang|hang-run makes this child
  // crash or hang (while loading, or while running), so tests can check
  // that validate reports it instead of dying; crash-guess crashes it on
  // every inferred candidate, crash-first-guess on the first only (as
  // XNNPACK does on a wrong channel count).
  if (Fault("crash")) std::raise(SIGSEGV);
  if (Fault("hang")) std::this_thread::sleep_for(std::chrono::hours(1));
  LoadOperatorLibraries(o_.load_libraries);
  UseQuantizedEngine(o_.quantized_engine);  // kUsage goes to the caller
  device_ = UsableDevice(o_.device);        // kUsage, kUnavailable too
  if (device_.is_cuda()) UseExactCuda();
  if (!Load() || !ReadReference() || !GivenInputs()) return r_;
  SkipReferenceOnOtherInputs();
  if (!o_.run) {
    r_.run_skipped = "not run (--no-run)";
    return r_;
  }
  if (Fault("hang-run")) std::this_thread::sleep_for(std::chrono::hours(1));
  // LibTorch's executor inlines every call before the first run: helpers
  // that call each other twice would double the graph per level there.
  if (const uint64_t nodes = inlined_nodes_[o_.method]; nodes > kMaxRunInlinedNodes) {
    r_.run_error = o_.method + " inlines to about " + std::to_string(nodes) +
                   " nodes, not run: LibTorch's executor inlines every call before it runs a method, and more than " +
                   std::to_string(kMaxRunInlinedNodes) + " would exhaust its memory or time";
    return r_;
  }
  if (!have_inputs_ && !TryCandidates()) return r_;
  DescribeInputs();
  if (!RunAndCompare()) return r_;
  c10::IValue intermediates;
  if (o_.record_intermediates && !o_.record_reference_path.empty()) {
    try {
      intermediates = PackIntermediates(OwnIntermediates());
    } catch (const std::exception&) {
      // None recorded: the model compared with this recording says so.
    }
  }
  if (o_.compare_intermediates && have_reference_) CompareWithReferenceIntermediates();
  KeepRunFiles(o_, inputs_, out1_, r_, intermediates);
  return r_;
}

std::vector<ValueRange> ModelChecker::Ranges() const {
  if (!o_.ranges_for_any_method) return o_.value_ranges;
  std::vector<ValueRange> out;
  for (const ValueRange& range : o_.value_ranges) {
    auto takes = [&range](const torch::jit::Method& m) {
      for (const FormalArg& f : Formals(m.function().getSchema())) {
        if (f.name == range.name) return true;
      }
      return false;
    };
    if (range.name.empty() || takes(*method_)) {
      out.push_back(range);
      continue;
    }
    bool anywhere = false;
    std::string list;
    for (const auto& m : module_.get_methods()) {
      anywhere |= takes(m);
      list += (list.empty() ? "" : ", ") + m.name();
    }
    if (!anywhere) {
      throw Error(ErrorKind::kUsage, "--val-range names no argument '" + range.name + "' of any method (" + list + ")");
    }
  }
  return out;
}

std::string ModelChecker::PinFlags(const std::vector<ArgSpec>& args) const {
  return (o_.method == "forward" ? std::string() : "--method " + o_.method + " ") + ArgsAsFlags(args) +
         (o_.seed == 0 || args.empty() ? std::string() : " --seed " + std::to_string(o_.seed));
}

bool ModelChecker::Load() {
  if (o_.progress) o_.progress({.kind = ProgressEvent::Kind::kLoading});
  const std::string& file = o_.load_path.empty() ? o_.path : o_.load_path;
  if (o_.check_mobile) {
    // What an Android/iOS app's LiteModuleLoader does with the file.
    try {
      torch::jit::_load_for_mobile(file, torch::Device(torch::kCPU));
      r_.mobile_loaded = true;
    } catch (const std::exception& e) {
      r_.mobile_loaded = false;
      r_.mobile_error = FromLoadFailure(e, o_.path).what();
    }
  }
  if (o_.reference_from_archive) extra_[kReferenceRecord] = "";
  auto t0 = Clock::now();
  try {
    // As a server loads it (Triton's backend): stored tensors mapped
    // straight to the device.
    module_ = torch::jit::load(file, device_, extra_);
  } catch (const std::exception& e) {
    r_.load_error = FromLoadFailure(e, o_.path).what();
    return false;
  }
  // Before eval(): what a write under `if self.training` does as saved.
  const TrainingFlags saved_training = SavedTrainingFlags(module_);
  module_.eval();
  KeepViewGuardIfCalled(module_);
  if (o_.progress) o_.progress({.kind = ProgressEvent::Kind::kLoaded});
  r_.loaded = true;
  r_.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  // Listing the operators inlines every method, as running one does: not
  // for a graph that inlining would blow up (the run is refused in Check).
  uint64_t largest = 0;
  std::string largest_method;
  for (const auto& m : module_.get_methods()) {
    r_.methods.push_back(m.name());
    const uint64_t n = inlined_nodes_[m.name()] = InlinedNodes(*m.graph());
    if (n > largest) {
      largest = n;
      largest_method = m.name();
    }
  }
  try {
    if (largest > kMaxRunInlinedNodes) {
      r_.ops_error = "operators not listed: " + largest_method + " inlines to about " + std::to_string(largest) + " nodes";
    } else {
      r_.ops = torch::jit::export_opnames(module_);
      prepacked_ = std::any_of(r_.ops.begin(), r_.ops.end(), [](const std::string& op) { return op.rfind("prepacked::", 0) == 0; });
    }
  } catch (const std::exception& e) {
    r_.ops_error = FromTorch(e).what();
  }
  // Before any method runs: what the graphs really call, whatever the
  // code's text spells.
  r_.unsafe = UnsafeCalls(module_);
  for (std::string& line : UnsafeViewCalls(module_)) r_.unsafe.push_back(std::move(line));
  // What a mobile archive's bytecode may call (ts.bytecode, in the parent).
  if (o_.check_mobile) r_.graph_ops = GraphOperators(module_);
  if (!r_.unsafe.empty()) return false;
  if (auto found = module_.find_method(o_.method)) method_.emplace(*found);
  r_.method_found = method_.has_value();
  if (!method_) return false;
  SearchStateWrites(saved_training);
  fresh_.emplace(module_, o_.method);
  std::ostringstream schema_text;
  schema_text << Schema();
  r_.schema = schema_text.str();
  if (o_.progress) o_.progress({.kind = ProgressEvent::Kind::kMethod, .text = r_.schema});  // kept by the parent if this child dies later
  return true;
}

std::vector<Intermediate> ModelChecker::OwnIntermediates() {
  constexpr uint64_t kMaxBytes = uint64_t{512} << 20;
  return RecordIntermediates(module_, o_.method, inputs_, device_, kMaxBytes, intermediates_note_);
}

void ModelChecker::CompareWithReferenceIntermediates() {
  IntermediatesResult& out = r_.intermediates.emplace();
  if (ref_intermediates_.empty()) {
    out.note = "the reference model's run recorded no intermediate values";
    return;
  }
  std::vector<Intermediate> mine;
  try {
    mine = OwnIntermediates();
  } catch (const std::exception& e) {
    out.note = std::string("this model's intermediate values cannot be recorded: ") + FromTorch(e).what();
    return;
  }
  Tolerances tol;
  tol.rtol = o_.rtol;
  tol.atol = o_.atol;
  out = CompareIntermediates(mine, ref_intermediates_, tol);
  if (out.note.empty()) out.note = intermediates_note_;
}

bool ModelChecker::ReadReference() {
  if (o_.reference_path.empty() && !(o_.reference_from_archive && !extra_[kReferenceRecord].empty())) return true;
  try {
    if (!o_.reference_path.empty()) {
      const c10::IValue loaded = LoadValueFile(o_.reference_path);
      SplitReference(loaded, ref_inputs_, ref_has_inputs_, expected_);
      if (o_.compare_intermediates && loaded.isGenericDict() && loaded.toGenericDict().contains("intermediates")) {
        ref_intermediates_ = UnpackIntermediates(loaded.toGenericDict().at("intermediates"));
      }
      r_.reference_source = o_.reference_label.empty() ? o_.reference_path : o_.reference_label;
    } else {
      ReadStoredReference();
      r_.reference_source = kReferenceRecordPath;
    }
    have_reference_ = true;
    return true;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kIo && !o_.reference_path.empty()) {
      throw;  // a missing --reference is an I/O error, not a finding
    }
    if (!o_.reference_label.empty()) {
      // A reference recorded by tsctl (--reference-model): name the model,
      // not its temporary file, and give no advice on writing the file.
      std::string what = e.what();
      const std::string file = o_.reference_path + ": ";
      if (what.rfind(file, 0) == 0) what.erase(0, file.size());  // "FILE: holds an object of ..."
      for (size_t at = what.find(o_.reference_path); at != std::string::npos; at = what.find(o_.reference_path, at))
        what.replace(at, o_.reference_path.size(), "its recording");
      r_.reference_error = "cannot compare with the " + o_.reference_label + ": " + what;
      return false;
    }
    r_.reference_error = std::string("cannot read the reference: ") + e.what() +
                         " (write it with torch.save({'inputs': (x,), 'outputs': y}, f))";
    return false;
  } catch (const std::exception& e) {
    r_.reference_error = std::string("cannot read the reference: ") + FromTorch(e).what();
    return false;
  }
}

void ModelChecker::ReadStoredReference() {
  // From memory: the child runs in the sandbox, where writing a temporary
  // file is what a hostile model would do (torch.sandbox FAILs it).
  SplitReference(LoadValueBytes(extra_[kReferenceRecord], kReferenceRecordPath), ref_inputs_, ref_has_inputs_, expected_);
}

void ModelChecker::SearchStateWrites(const TrainingFlags& saved_training) {
  if (o_.calls <= 0 || inlined_nodes_[o_.method] > kMaxRunInlinedNodes) return;
  try {
    r_.state_writes = StateWrites(module_, o_.method, saved_training);
    r_.state_searched = true;
  } catch (const std::exception&) {
    r_.state_writes.clear();  // a graph LibTorch cannot inline: its run says so
  }
}

c10::IValue ModelChecker::StepCalls(std::optional<torch::jit::Method>& copy, std::optional<StateSnapshot>& before,
                                    std::optional<StateSnapshot>& after_first) {
  c10::IValue first = out1_;
  if (!copy) {
    // Inferred inputs ran on copies of their own: a new one, stepped here.
    copy = fresh_->Fresh();
    before = SnapshotState(copy->owner());
    first = Run(*copy, inputs_, device_);
    after_first = SnapshotState(copy->owner());
  }
  c10::IValue last = first;
  for (int call = 2; call <= o_.calls; ++call) last = Run(*copy, inputs_, device_);
  r_.calls = o_.calls;
  r_.calls_origin = o_.calls_origin;
  AddStateChanges(*before, *after_first, 1, r_.state_changes);
  if (o_.calls > 1) AddStateChanges(*after_first, SnapshotState(copy->owner()), o_.calls, r_.state_changes);
  ModelCheckResult steps;
  CompareRuns(first, last, steps);
  r_.stateful = steps.deterministic == false;
  if (r_.stateful) {
    char diff[64];
    std::snprintf(diff, sizeof diff, "%.3g", steps.max_run_diff);
    r_.stateful_note = steps.determinism_note + " (max abs difference " + diff + ")";
  }
  return last;
}

bool ModelChecker::RunAndCompare() {
  c10::IValue last;
  try {
    // One copy is called o_.calls times (the first gave out1): whether its
    // state or its outputs change from call to call (torch.stateful).
    std::optional<torch::jit::Method> first;
    std::optional<StateSnapshot> before, after_first;
    if (!ran_once_) {
      std::optional<PackedOpChecks> checks;
      if (prepacked_) checks.emplace();
      first = fresh_->Fresh();
      if (o_.calls > 0) before = SnapshotState(first->owner());
      out1_ = Run(*first, inputs_, device_);
      if (o_.calls > 0) after_first = SnapshotState(first->owner());
      if (o_.check_determinism) out2_ = Run(fresh_->Fresh(), inputs_, device_);
      if (checks) r_.inputs_contradict = checks->Take();
    }
    if (o_.calls > 0) last = StepCalls(first, before, after_first);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kUsage) throw;
    r_.run_error = std::string("running ") + o_.method + " failed: " + e.what();
    return false;
  } catch (const std::exception& e) {
    r_.run_error = std::string("running ") + o_.method + " failed: " + FromTorch(e).what();
    return false;
  }
  JudgeOutputs(out1_, out2_, have_reference_ ? &expected_ : nullptr, o_, r_);
  if (r_.stateful && have_reference_) {
    // The reference holds what the method should answer on every call.
    Tolerances tol;
    tol.rtol = o_.rtol;
    tol.atol = o_.atol;
    CompareValues(last, expected_, "outputs (call " + std::to_string(r_.calls) + ")", tol, r_.reference);
  }
  return true;
}

ModelCheckResult CheckModel(const ModelCheckOptions& o) { return ModelChecker(o).Check(); }

}  // namespace tsctl
