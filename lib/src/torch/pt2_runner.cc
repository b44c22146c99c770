// validate's load-and-run of a .pt2 AOTInductor package, in the child.
#include "pt2_runner.h"

#include <dlfcn.h>
#include <torch/version.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include "arguments.h"
#include "operator_libraries.h"
#include "compare_values.h"
#include "model_runs.h"
#include "pt2_package.h"
#include "py_values.h"
#include "torch_util.h"
#include "tsctl/error.h"

namespace tsctl {

Pt2Support DescribePt2Support() {
  Pt2Support info;
#ifdef TSCTL_HAVE_AOTI
  info.runs_aoti = true;
#endif
  // nativert's ModelRunnerHandle is declared by 2.x's headers
  // (torch/nativert/ModelRunnerHandle.h); whether libtorch_cpu exports it
  // is a property of the wheel, asked of the library itself.
  const std::string cpu = LibTorchCpuPath();
  void* self = cpu.empty() ? nullptr : ::dlopen(cpu.c_str(), RTLD_NOW | RTLD_NOLOAD);
  const char* kRunner =
      "_ZN5torch8nativert17ModelRunnerHandleC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES8_";
  const bool exported = self && ::dlsym(self, kRunner) != nullptr;
  const std::string lib = cpu.empty() ? "libtorch_cpu.so" : cpu;
  const std::string base = lib.substr(lib.rfind('/') + 1);
  info.program_unavailable =
#if TORCH_VERSION_MAJOR >= 2
      exported ? "this LibTorch (" TORCH_VERSION ") exports nativert's ModelRunnerHandle, but this tsctl does not call it yet"
               : "C++ runs an exported program only through nativert's ModelRunner, and this LibTorch (" TORCH_VERSION
                 ") declares it (torch/nativert/ModelRunnerHandle.h) but " + base +
                     " exports no torch::nativert symbol (the wheel is built without nativert)";
#else
      "LibTorch " TORCH_VERSION " has no C++ runner of exported programs (torch.export is 2.x)";
  (void)exported;
#endif
  return info;
}

#ifndef TSCTL_HAVE_AOTI
ModelCheckResult CheckPt2Model(const ModelCheckOptions&) {
  throw Error(ErrorKind::kUnavailable, "LibTorch " TORCH_VERSION " has no AOTInductor package loader: running a .pt2 needs a LibTorch 2.x build");
}
#else
namespace {

using Clock = std::chrono::steady_clock;

// One check of an AOTInductor package, phase by phase as ModelChecker's
// for TorchScript: load, reference, inputs, runs and comparisons, files.
class Pt2Checker {
 public:
  explicit Pt2Checker(const ModelCheckOptions& o) : o_(o), spec_(o.pt2) {}

  ModelCheckResult Check() {
    // The generated code checks each input's dtype, sizes and strides only
    // when asked: a wrong shape would otherwise read out of bounds.
    ::setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 1);
    LoadOperatorLibraries(o_.load_libraries);  // custom operators the package's proxy executor calls
    if (!Load() || !ReadReference() || !Inputs()) return r_;
    if (!o_.run) {
      r_.run_skipped = "not run (--no-run)";
      return r_;
    }
    if (!have_inputs_) return r_;
    if (!RunAndCompare()) return r_;
    KeepRunFiles(o_, inputs_, out1_, r_);
    return r_;
  }

 private:
  bool Load() {
    if (o_.progress) o_.progress({.kind = ProgressEvent::Kind::kLoading});
    const auto t0 = Clock::now();
    try {
      package_.emplace(o_.load_path.empty() ? o_.path : o_.load_path, spec_.model);
    } catch (const Error& e) {
      r_.load_error = e.what();
      return false;
    }
    r_.loaded = true;
    r_.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (o_.progress) o_.progress({.kind = ProgressEvent::Kind::kLoaded});
    r_.methods = {"forward"};
    r_.method_found = o_.method == "forward";
    return r_.method_found;
  }

  // The schema, once the number of given inputs is known.
  void SetSchema(size_t given) {
    schema_.emplace(Pt2Schema(spec_, given));
    r_.schema = Pt2Named(spec_, given).Schema() + " (AOTInductor model '" + spec_.model + "', device " +
                package_->device() + ")";
    if (o_.progress) o_.progress({.kind = ProgressEvent::Kind::kMethod, .text = r_.schema});
  }

  bool ReadReference() {
    if (o_.reference_path.empty()) return true;
    try {
      SplitReference(LoadValueFile(o_.reference_path), ref_inputs_, ref_has_inputs_, expected_);
      r_.reference_source = o_.reference_label.empty() ? o_.reference_path : o_.reference_label;
      have_reference_ = true;
      return true;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kIo && o_.reference_label.empty()) throw;
      r_.reference_error = std::string("cannot read the reference") +
                           (o_.reference_label.empty() ? "" : " (" + o_.reference_label + ")") + ": " + e.what();
      return false;
    }
  }

  // The package's sample inputs; false (and why, in the notes) if they cannot be read.
  bool SampleInputs() {
    const std::string record = "data/sample_inputs/" + spec_.model + ".pt";
    try {
      inputs_ = Pt2ArgumentList(LoadValueFile(spec_.sample_inputs_path), record);
      return true;
    } catch (const Error& e) {
      sample_error_ = record + " unreadable: " + e.what();
      return false;
    }
  }

  // Given, loaded, the reference's, the package's samples, inferred from
  // the archive; else none.
  bool Inputs() {
    std::vector<ArgSpec> given = ArgsFromInputs(o_.inputs);
    given.insert(given.end(), o_.args.begin(), o_.args.end());
    SetSchema(given.size());
    // --seed and --val-range as for a TorchScript archive (check_model_inputs.cc).
    at::Generator gen = at::detail::createCPUGenerator(o_.seed);
    given = ApplyValueRanges(given, Formals(*schema_), o_.value_ranges);  // kUsage goes to the caller
    if (!given.empty()) {
      inputs_ = BuildArguments(*schema_, given, gen);  // kUsage goes to the caller
      r_.input_source = o_.input_source.empty() ? "--input/--arg" : o_.input_source;
      r_.input_args = given;
      r_.inputs_desc = DescribeArgs(given);
      r_.inputs_flags = ArgsAsFlags(given);
    } else if (!o_.load_inputs_path.empty()) {
      const std::string what = o_.input_source.empty() ? o_.load_inputs_path : o_.input_source;
      inputs_ = Pt2ArgumentList(LoadValueFile(o_.load_inputs_path), what);
      r_.input_source = what;
    } else if (ref_has_inputs_) {
      inputs_ = ref_inputs_;
      r_.input_source = r_.reference_source;
    } else if (!spec_.sample_inputs_path.empty() && SampleInputs()) {
      r_.input_source = "data/sample_inputs/" + spec_.model + ".pt";
    } else if (!spec_.guess.empty() && o_.infer_inputs) {
      const std::vector<ArgSpec> guess = ApplyValueRanges(spec_.guess, Formals(*schema_), o_.value_ranges);
      inputs_ = BuildArguments(*schema_, guess, gen);
      guessed_ = true;
      r_.input_source = "inferred";
      r_.input_args = guess;
      r_.inputs_desc = DescribeArgs(guess);
      r_.inputs_flags = ArgsAsFlags(guess) + (o_.seed == 0 ? std::string() : " --seed " + std::to_string(o_.seed));
      r_.inputs_note = spec_.guess_note + (sample_error_.empty() ? "" : "; " + sample_error_);
      r_.candidates_tried = 1;
    } else {
      r_.run_skipped = (sample_error_.empty() ? "" : sample_error_ + "; ") + "no inputs known (" +
                       (!o_.infer_inputs ? std::string("--no-infer")
                                         : spec_.guess_missing.empty() ? "none inferred" : spec_.guess_missing) +
                       "); pass --input SHAPE:DTYPE for each input, or --load-inputs FILE";
      return true;
    }
    if (r_.inputs_desc.empty()) {
      for (const c10::IValue& v : inputs_) r_.inputs_desc += (r_.inputs_desc.empty() ? "" : ", ") + KindOf(v);
    }
    have_inputs_ = true;
    return true;
  }

  c10::IValue RunOnce() { return package_->Outputs(package_->Run(TensorsOf(inputs_))); }

  bool RunAndCompare() {
    try {
      c10::InferenceMode guard;
      QuietStderr quiet;
      out1_ = RunOnce();
      if (o_.check_determinism) out2_ = RunOnce();
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kUsage) throw;
      return RunFailed(e.what());
    } catch (const std::exception& e) {
      return RunFailed(FromTorch(e).what());
    }
    if (guessed_) r_.guess_suspect = Suspect(out1_, out2_, o_.check_determinism);
    JudgeOutputs(out1_, out2_, have_reference_ ? &expected_ : nullptr, o_, r_);
    return true;
  }

  // A run that raised: on inferred inputs a guess that failed (a warning),
  // else the archive's failure.
  bool RunFailed(const std::string& error) {
    if (!guessed_) {
      r_.run_error = "running the AOTInductor model failed: " + error;
      return false;
    }
    r_.candidates.push_back({r_.inputs_flags, "raised: " + error});
    r_.run_skipped = "no inputs known and the one inferred candidate (" + r_.inputs_desc + ", " + spec_.guess_note +
                     ") raised: " + error + "; pass --input SHAPE:DTYPE for each input";
    r_.input_source.clear();
    return false;
  }

  const ModelCheckOptions& o_;
  const Pt2RunSpec& spec_;
  ModelCheckResult r_;
  std::optional<AotiPackage> package_;
  std::optional<c10::FunctionSchema> schema_;
  std::vector<c10::IValue> ref_inputs_;
  bool ref_has_inputs_ = false, have_reference_ = false;
  c10::IValue expected_;
  std::vector<c10::IValue> inputs_;
  bool have_inputs_ = false, guessed_ = false;
  std::string sample_error_;
  c10::IValue out1_, out2_;
};

}  // namespace

ModelCheckResult CheckPt2Model(const ModelCheckOptions& o) {
  if (o.pt2.kind != Pt2RunSpec::Kind::kAoti) {
    throw Error(ErrorKind::kUnavailable, "a .pt2 exported program: " + DescribePt2Support().program_unavailable);
  }
  return Pt2Checker(o).Check();
}
#endif

}  // namespace tsctl
