// The LibTorch half of `tsctl validate`, run in a child process.
#include "check_model.h"

#include <torch/csrc/jit/mobile/import.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <deque>
#include <set>
#include <thread>

#include "arguments.h"
#include "compare_values.h"
#include "infer_inputs.h"
#include "intermediates.h"
#include "model_runs.h"
#include "py_values.h"
#include "tensors.h"
#include "torch_util.h"

namespace tsctl {
namespace {

using Clock = std::chrono::steady_clock;

// One model check, phase by phase: load, reference, inputs (given, loaded,
// stored or inferred), runs and comparisons, files. Each phase that ends the
// check early says why in the result and returns false.
class ModelChecker {
 public:
  explicit ModelChecker(const ModelCheckOptions& o) : o_(o), fault_(std::getenv("TSCTL_FAULT_CHECK_MODEL")) {}

  ModelCheckResult Check() {
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
    if (!o_.run) {
      r_.run_skipped = "not run (--no-run)";
      return r_;
    }
    if (Fault("hang-run")) std::this_thread::sleep_for(std::chrono::hours(1));
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

 private:
  bool Fault(const char* name) const { return fault_ && std::string(fault_) == name; }
  const c10::FunctionSchema& Schema() const { return method_->function().getSchema(); }

  // The --val-range entries for this method. Under validate -m all a named
  // range is meant for the methods that have that argument: the others run
  // without it, and a name that no method of the module takes is refused
  // (kUsage), as one naming no argument of the one method is.
  std::vector<ValueRange> Ranges() const {
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
  // The flags that pin `args` on the command line.
  std::string PinFlags(const std::vector<ArgSpec>& args) const {
    return (o_.method == "forward" ? std::string() : "--method " + o_.method + " ") + ArgsAsFlags(args) +
           (o_.seed == 0 || args.empty() ? std::string() : " --seed " + std::to_string(o_.seed));
  }

  // The lite interpreter (when asked), torch::jit::load, the methods, the
  // operators and the method asked for.
  bool Load() {
    if (o_.progress) o_.progress("loading");
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
    if (o_.reference_from_archive) extra_["tsctl_reference.pt"] = "";
    auto t0 = Clock::now();
    try {
      // As a server loads it (Triton's backend): stored tensors mapped
      // straight to the device.
      module_ = torch::jit::load(file, device_, extra_);
    } catch (const std::exception& e) {
      r_.load_error = FromLoadFailure(e, o_.path).what();
      return false;
    }
    module_.eval();
    if (o_.progress) o_.progress("loaded");
    r_.loaded = true;
    r_.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    for (const auto& m : module_.get_methods()) r_.methods.push_back(m.name());
    try {
      r_.ops = torch::jit::export_opnames(module_);
    } catch (const std::exception& e) {
      r_.ops_error = FromTorch(e).what();
    }
    if (auto found = module_.find_method(o_.method)) method_.emplace(*found);
    r_.method_found = method_.has_value();
    if (!method_) return false;
    fresh_.emplace(module_, o_.method);
    std::ostringstream schema_text;
    schema_text << Schema();
    r_.schema = schema_text.str();
    if (o_.progress) o_.progress("method " + r_.schema);  // kept by the parent if this child dies later
    return true;
  }

  // This run's intermediate values (what was left out goes to
  // intermediates_note_). Throws what running throws: a recording then holds
  // none, and the model compared with it says so.
  std::vector<Intermediate> OwnIntermediates() {
    constexpr uint64_t kMaxBytes = uint64_t{512} << 20;
    return RecordIntermediates(module_, o_.method, inputs_, device_, kMaxBytes, intermediates_note_);
  }

  // --compare-intermediates, on this archive's side.
  void CompareWithReferenceIntermediates() {
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

  // --reference FILE, or the archive's extra/tsctl_reference.pt.
  bool ReadReference() {
    if (o_.reference_path.empty() && !(o_.reference_from_archive && !extra_["tsctl_reference.pt"].empty())) return true;
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
        r_.reference_source = "extra/tsctl_reference.pt";
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

  // extra/tsctl_reference.pt, through a temporary file (LoadValueFile reads files).
  void ReadStoredReference() {
    char tmpl[] = "/tmp/tsctl-ref-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) throw Error(ErrorKind::kIo, "cannot create a temporary file");
    const std::string& bytes = extra_["tsctl_reference.pt"];
    bool written = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    ::close(fd);
    try {
      if (!written) throw Error(ErrorKind::kIo, "cannot write a temporary file");
      SplitReference(LoadValueFile(tmpl), ref_inputs_, ref_has_inputs_, expected_);
    } catch (...) {
      ::unlink(tmpl);
      throw;
    }
    ::unlink(tmpl);
  }

  // Inputs from the first source that has them: given, loaded, the
  // reference's, bundled; none needed for a method without arguments.
  bool GivenInputs() {
    const c10::FunctionSchema& schema = Schema();
    std::vector<ArgSpec> given = ArgsFromInputs(o_.inputs);
    given.insert(given.end(), o_.args.begin(), o_.args.end());
    given = ApplyValueRanges(given, Formals(schema), Ranges());  // kUsage goes to the caller
    if (!given.empty()) {
      for (const ArgSpec& a : given) {
        uint64_t bytes = ArgumentBytes(a.value);
        if (bytes > InputBudgetBytes()) {
          r_.run_error = "input " + (a.name.empty() ? a.value : a.name + "=" + a.value) + " needs " + HumanBytesOf(bytes) +
                         ", more than this machine's memory (" + HumanBytesOf(InputBudgetBytes()) + ")";
          return false;
        }
      }
      at::Generator gen = at::detail::createCPUGenerator(o_.seed);
      try {
        inputs_ = BuildArguments(schema, given, gen);  // kUsage errors go to the caller
      } catch (const c10::Error& e) {
        r_.run_error = std::string("cannot make the inputs: ") + FromTorch(e).what();
        return false;
      }
      r_.input_source = o_.input_source.empty() ? "--input/--arg" : o_.input_source;
      used_args_ = given;
      have_inputs_ = true;
    } else if (!o_.load_inputs_path.empty()) {
      inputs_ = LoadArguments(schema, o_.load_inputs_path, o_.input_source);  // kIo/kFormat/kUsage go to the caller
      r_.input_source = o_.input_source.empty() ? o_.load_inputs_path : o_.input_source;
      have_inputs_ = true;
    } else if (ref_has_inputs_) {
      inputs_ = ref_inputs_;
      r_.input_source = r_.reference_source;
      have_inputs_ = true;
    } else {
      try {
        std::string source;
        inputs_ = BundledInputs(module_, o_.method, source);
        if (!inputs_.empty()) {
          r_.input_source = source;
          have_inputs_ = true;
        }
      } catch (const std::exception&) {
        inputs_.clear();
      }
    }
    size_t required = 0;
    for (size_t i = 1; i < schema.arguments().size(); ++i) required += !schema.arguments()[i].default_value().has_value();
    if (!have_inputs_ && required == 0) {
      r_.input_source = "no arguments";
      have_inputs_ = true;
    }
    return true;
  }

  // A candidate that ran, kept in case none runs cleanly.
  struct Kept {
    std::vector<c10::IValue> values;
    c10::IValue out1, out2;
    InputCandidate c;
    std::string why;
  };

  // Takes `values` (the candidate `c`'s) and its outputs as the check's.
  void Take(std::vector<c10::IValue> values, c10::IValue a, c10::IValue b, const InputCandidate& c) {
    inputs_ = std::move(values);
    out1_ = std::move(a);
    out2_ = std::move(b);
    ran_once_ = true;
    used_args_ = c.args;
    r_.inputs_note = c.note;
    r_.input_source = "inferred";
    have_inputs_ = true;
  }

  // Runs one candidate (twice with the determinism check, each from the
  // loaded state). True if it ran cleanly and was taken; else its outcome is
  // in r_.candidates, `suspect` keeps the first that ran, `error` LibTorch's
  // message if it raised.
  bool TryCandidate(const InputCandidate& c, const std::string& flags, std::optional<Kept>& suspect, std::string& error) {
    try {
      // A fresh generator per candidate, seeded as for given inputs: the
      // printed pin flags (--arg ...) make exactly these values again.
      at::Generator gen = at::detail::createCPUGenerator(o_.seed);
      std::vector<c10::IValue> values = BuildArguments(Schema(), c.args, gen);
      c10::IValue a = Run(fresh_->Fresh(), values, device_), b;
      if (o_.check_determinism) b = Run(fresh_->Fresh(), values, device_);
      std::string why = Suspect(a, b, o_.check_determinism);
      if (why.empty()) {
        Take(std::move(values), a, b, c);
        return true;
      }
      r_.candidates.push_back({flags, why});
      if (!suspect) suspect = Kept{std::move(values), a, b, c, why};
    } catch (const std::exception& e) {
      error = FromTorch(e).what();
      r_.candidates.push_back({flags, "raised: " + error});
    }
    return false;
  }

  // Inferred inputs. Each candidate is a guess: one that raises, gives
  // NaN/Inf or differs between two runs is set aside (with why) and the next
  // tried. If none runs cleanly, the first that ran is kept and
  // r_.guess_suspect says what was wrong: validate then warns, since the
  // guess, not the archive, may be at fault. A candidate that raises is
  // followed by what LibTorch's error for it says to try next
  // (RefineFromError), at most kRefinements times. `base` is the inferred
  // candidate a queued one comes from: what the progress line and
  // skip_candidates count.
  bool TryCandidates() {
    const c10::FunctionSchema& schema = Schema();
    if (!o_.infer_inputs) {
      r_.run_skipped = "no inputs known: " + schema.name() + " takes " + DescribeArguments(schema) +
                       "; pass --arg NAME=VALUE (or --input SHAPE:DTYPE) for each argument";
      return false;
    }
    const auto start = Clock::now();
    // (Not on CUDA: the driver's mappings count against RLIMIT_DATA.)
    std::optional<DataLimit> limit;
    if (!device_.is_cuda()) limit.emplace(CandidateMemoryBudget());
    constexpr int kRefinements = 8;
    struct Queued {
      InputCandidate c;
      size_t base;
    };
    const std::vector<InputCandidate> inferred = InferInputCandidates(module_, *method_, o_.max_candidates);
    std::deque<Queued> queue;
    const std::vector<FormalArg> formals = Formals(schema);
    for (size_t i = o_.skip_candidates; i < inferred.size(); ++i) {
      InputCandidate c = inferred[i];
      c.args = ApplyValueRanges(c.args, formals, Ranges());
      queue.push_back({std::move(c), i});
    }
    std::set<std::string> seen;
    int refinements = 0;
    std::optional<Kept> suspect;
    while (!queue.empty() && !have_inputs_) {
      const Queued q = std::move(queue.front());
      queue.pop_front();
      const std::string flags = PinFlags(q.c.args);
      if (!seen.insert(flags).second) continue;
      const double spent = std::chrono::duration<double>(Clock::now() - start).count();
      if (spent > o_.infer_budget_seconds) {
        r_.candidates_stop = "stopped after " + std::to_string(static_cast<int>(spent)) +
                             " s (the budget for inferred candidates is " +
                             std::to_string(static_cast<int>(o_.infer_budget_seconds)) + " s), " +
                             std::to_string(queue.size() + 1) + " candidates untried";
        break;
      }
      uint64_t bytes = 0;
      for (const ArgSpec& a : q.c.args) bytes += ArgumentBytes(a.value);
      if (bytes > (uint64_t{1} << 30)) {
        r_.candidates.push_back({flags, "not tried: its inputs need " + HumanBytesOf(bytes)});
        continue;
      }
      ++r_.candidates_tried;
      // If this candidate crashes the child, the parent names it and can
      // start a fresh child past it (skip_candidates).
      if (o_.progress) o_.progress("trying " + std::to_string(q.base) + " " + flags);  // TriedCandidate() reads it
      if (Fault("crash-guess") || (Fault("crash-first-guess") && q.base == 0)) std::raise(SIGSEGV);
      std::string error;
      if (TryCandidate(q.c, flags, suspect, error)) break;
      if (!error.empty() && refinements < kRefinements) {
        if (std::optional<Refinement> next = RefineFromError(q.c.args, error)) {
          ++refinements;
          queue.push_front({InputCandidate{ApplyValueRanges(next->args, formals, Ranges()), next->note}, q.base});
        }
      }
    }
    if (!have_inputs_ && suspect) {
      Take(std::move(suspect->values), suspect->out1, suspect->out2, suspect->c);
      r_.guess_suspect = suspect->why;
    }
    if (have_inputs_) return true;
    std::string last = r_.candidates.empty() ? std::string() : r_.candidates.back().outcome;
    r_.run_skipped = "no inputs known and none of " + std::to_string(r_.candidates_tried) + " inferred candidates ran" +
                     (last.empty() ? std::string() : " (last: " + last + ")") +
                     (r_.candidates_stop.empty() ? std::string() : "; " + r_.candidates_stop) + "; " + schema.name() +
                     " takes " + DescribeArguments(schema) + ": pass --arg NAME=VALUE for each";
    return false;
  }

  void DescribeInputs() {
    r_.input_args = used_args_;
    if (!used_args_.empty()) {
      r_.inputs_desc = DescribeArgs(used_args_);
      r_.inputs_flags = PinFlags(used_args_);
      return;
    }
    const auto& formal = Schema().arguments();
    for (size_t i = 0; i < inputs_.size(); ++i) {
      c10::IValue v = i + 1 < formal.size() ? Retype(formal[i + 1].type(), inputs_[i]) : inputs_[i];
      r_.inputs_desc += (r_.inputs_desc.empty() ? "" : ", ") + (v.isTensor() ? Describe(v.toTensor()) : KindOf(v));
    }
  }

  // The runs (each from the loaded state), whether the model is stateful,
  // determinism and the reference.
  bool RunAndCompare() {
    try {
      // The copy that gave out1, stepped once more, tells whether forward
      // changes the model's state (inferred inputs ran on copies of their
      // own: one is stepped twice here).
      std::optional<torch::jit::Method> first;
      if (!ran_once_) {
        first = fresh_->Fresh();
        out1_ = Run(*first, inputs_, device_);
        if (o_.check_determinism) out2_ = Run(fresh_->Fresh(), inputs_, device_);
      }
      if (o_.check_determinism && fresh_->cloned()) {
        if (!first) {
          first = fresh_->Fresh();
          Run(*first, inputs_, device_);
        }
        ModelCheckResult steps;
        CompareRuns(out1_, Run(*first, inputs_, device_), steps);
        r_.stateful = steps.deterministic == false;
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kUsage) throw;
      r_.run_error = std::string("running ") + o_.method + " failed: " + e.what();
      return false;
    } catch (const std::exception& e) {
      r_.run_error = std::string("running ") + o_.method + " failed: " + FromTorch(e).what();
      return false;
    }
    JudgeOutputs(out1_, out2_, have_reference_ ? &expected_ : nullptr, o_, r_);
    return true;
  }

  const ModelCheckOptions& o_;
  const char* fault_;
  ModelCheckResult r_;
  torch::Device device_ = torch::Device(torch::kCPU);
  torch::jit::Module module_;
  torch::jit::ExtraFilesMap extra_;
  std::optional<torch::jit::Method> method_;
  std::optional<FreshCopies> fresh_;
  // The reference.
  std::vector<c10::IValue> ref_inputs_;
  bool ref_has_inputs_ = false;
  c10::IValue expected_;
  bool have_reference_ = false;
  std::vector<Intermediate> ref_intermediates_;  // --compare-intermediates: the reference model's
  std::string intermediates_note_;
  // The inputs and the two runs' outputs.
  std::vector<c10::IValue> inputs_;
  bool have_inputs_ = false;
  std::vector<ArgSpec> used_args_;
  c10::IValue out1_, out2_;
  bool ran_once_ = false;
};

}  // namespace

ModelCheckResult CheckModel(const ModelCheckOptions& o) { return ModelChecker(o).Check(); }

}  // namespace tsctl
