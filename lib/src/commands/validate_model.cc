// The LibTorch checks of `tsctl validate`: one isolated child per method
// checked, its typed result (ModelCheckResult) turned into checks.
#include <memory>
#include <optional>

#include "../text/json_util.h"
#include "../zip/npz.h"
#include "torch_child_sandbox.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/operators.h"
#include "tsctl/text_util.h"
#include "tsctl/torch_backend.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "compat_internal.h"
#include "validate_internal.h"

namespace tsctl {

ChildLimits LimitsOf(const ValidateOptions& o) {
  return {.timeout_seconds = o.timeout_seconds,
          .memory_bytes = o.memory_limit_bytes,
          .threads = o.torch_threads,
          .max_output_bytes = o.max_output_bytes};
}

std::string Doing(const std::optional<ProgressEvent>& progress, const std::string& method) {
  if (!progress) return "loading";
  switch (progress->kind) {
    case ProgressEvent::Kind::kLoaded:
    case ProgressEvent::Kind::kMethod: return "running " + method;
    case ProgressEvent::Kind::kTrying: return "running " + method + " on inferred inputs (" + progress->text + ")";
    default: return "loading";
  }
}

namespace {

// An allocation that failed under the child's memory cap says so, naming
// the cap and the flag that moves it.
void NameMemoryLimit(std::string& error, uint64_t cap) {
  // c10's CPU allocator words a refused posix_memalign "[enforce fail at
  // alloc_cpu.cpp:N] err == 0" in 1.13 when the message is cut to a line.
  if (error.find("can't allocate memory") == std::string::npos && error.find("bad_alloc") == std::string::npos &&
      error.find("not enough memory") == std::string::npos && error.find("alloc_cpu.cpp") == std::string::npos) {
    return;
  }
  error += " (the LibTorch child may grow by at most " + HumanBytes(cap) + "; --memory-limit sets it)";
}

// True if the archive's code calls quantized:: operators.
bool UsesQuantizedOperators(const Archive& archive) {
  try {
    for (const std::string& op : ListOperators(archive).Names()) {
      if (OperatorNamespace(op) == "quantized") return true;
    }
  } catch (const Error&) {
  }
  return false;
}

// Methods `--method all` (or an archive without forward) runs: all but
// private ones and the helpers torch.utils.bundled_inputs adds.
std::vector<std::string> RunnableMethods(const std::vector<std::string>& methods) {
  std::vector<std::string> out;
  for (const auto& m : methods) {
    if (m.empty() || m[0] == '_' || m.rfind("get_all_bundled_inputs", 0) == 0 || m.rfind("get_num_bundled_inputs", 0) == 0 ||
        m.rfind("run_on_bundled_input", 0) == 0) {
      continue;
    }
    out.push_back(m);
  }
  return out;
}

// torch.load's PASS.
std::string LoadsOn(const std::string& device) {
  return device == "cpu" ? "loads in LibTorch on the CPU" : "loads in LibTorch on " + device;
}

// The children of one archive's model check, method after method (forward,
// or with -m all every runnable method the first child lists), and the
// checks their results give.
class MethodChecks {
 public:
  MethodChecks(const Archive& archive, const std::string& path, const ValidateOptions& options, ModelCheckOptions m,
               ArchiveReport& report)
      : archive_(archive), path_(path), options_(options), m_(std::move(m)), report_(report), out_(report.checks) {
    if (options.record_reference || !options.save_reference_path.empty()) {
      reference_tmp_.emplace();
      m_.record_reference_path = reference_tmp_->path;
    }
    if (!options.save_outputs_path.empty()) {
      outputs_tmp_.emplace(NumpySuffix(options.save_outputs_path));  // the child writes the format the name asks for
      m_.save_outputs_path = outputs_tmp_->path;
    }
    if (!options.save_inputs_path.empty()) {
      inputs_tmp_.emplace(NumpySuffix(options.save_inputs_path));
      m_.save_inputs_path = inputs_tmp_->path;
    }
    methods_ = {all_ ? std::string("forward") : options.method};
  }

  void Run() {
    for (size_t k = 0; k < methods_.size(); ++k) {
      if (Capped(k)) break;
      if (!RunMethod(k)) break;
    }
    Json(report_.details)["torch_seconds"] = seconds_;
    Json(report_.details)["model"] = details_.size() == 1 ? details_[0] : details_;
  }

 private:
  // One method's child and its checks; false when no further method can run.
  bool RunMethod(size_t k) {
    m_.method = methods_[k];
    const std::string prefix = multi_ ? m_.method + ": " : "";
    std::vector<CandidateTry> crashed;  // inferred candidates that killed a child
    schema_.clear();                    // the method's, once a child found it
    auto on_event = [this](const ProgressEvent& e) {
      if (!options_.progress) return;
      if (e.kind == ProgressEvent::Kind::kTrying) options_.progress("trying inferred inputs: candidate " + std::to_string(e.done + 1));
      else if (e.kind == ProgressEvent::Kind::kLoaded || e.kind == ProgressEvent::Kind::kMethod) options_.progress("running " + m_.method);
    };
    ChildOutcome child = RunModelCheck(m_, LimitsOf(options_), crashed, seconds_, &schema_, on_event);
    const std::string doing = Doing(child.progress, m_.method);
    if (child.end == ChildEnd::kBlocked) {
      // The model reached past the sandbox: whatever the inputs, the
      // archive's own doing, and no further method of it runs.
      const char* id = child.unsafe_stop.empty() ? check::kTorchSandbox : check::kTorchUnsafe;
      out_.push_back({id, CheckStatus::kFail, prefix + child.sandbox + " (while " + doing + ")"});
      return false;
    }
    if (child.Died() && CandidateIndex(child.progress) >= 0) {
      DiedOnGuesses(crashed, prefix);
      return true;
    }
    if (child.Died()) {
      Died(child, doing, prefix);
      return true;
    }
    // A usage error (arguments that do not fit) or an unavailable plugin is
    // the caller's or this machine's problem, not the archive's: rethrown.
    ModelCheckResult r = std::move(child).Take<ModelCheckResult>(doing);
    if (!crashed.empty()) {
      r.candidates.insert(r.candidates.begin(), crashed.begin(), crashed.end());
      r.candidates_tried += static_cast<int>(crashed.size());
    }
    NameMemoryLimit(r.load_error, child.memory_bytes);
    NameMemoryLimit(r.run_error, child.memory_bytes);
    details_.push_back(ModelCheckToJson(r));
    details_.back().erase("graph_ops");  // ts.bytecode's input, not a finding
    if (first_) {
      first_ = false;
      const Next next = FirstResult(r);
      if (next != Next::kChecks) return next == Next::kNextMethod;
    }
    MethodResult(r, k);
    return true;
  }

  // A child that died while running: what it had already checked stands.
  void KeepChecksMade() {
    if (first_) {
      out_.push_back({check::kTorchLoad, CheckStatus::kPass, LoadsOn(m_.device)});
      first_ = false;
    }
    if (!schema_.empty()) {
      if (report_.schema.empty()) report_.schema = schema_;
      out_.push_back({check::kTorchMethod, CheckStatus::kPass, schema_});
    }
  }

  // It died on a guess: the inputs were inferred, so this says nothing
  // against the archive. A warning naming each guess, never a failure.
  void DiedOnGuesses(const std::vector<CandidateTry>& crashed, const std::string& prefix) {
    KeepChecksMade();
    constexpr size_t kListed = 2;
    std::string tried;
    for (size_t i = 0; i < crashed.size() && i < kListed; ++i) {
      tried += (i ? "; " : "") + crashed[i].flags + ": " + crashed[i].outcome;
    }
    if (crashed.size() > kListed) tried += "; and " + std::to_string(crashed.size() - kListed) + " more (the JSON report lists each)";
    out_.push_back({check::kTorchRun, CheckStatus::kWarn,
                    prefix + "not run: " + std::to_string(crashed.size()) + " inferred candidate" +
                        (crashed.size() == 1 ? "" : "s") + " crashed or stopped LibTorch (" + tried +
                        "); they were guessed, so this says nothing against the archive: give real inputs (--arg, "
                        "--input, --load-inputs) to check it"});
    nlohmann::json candidates = nlohmann::json::array();
    for (const CandidateTry& c : crashed) candidates.push_back({{"flags", c.flags}, {"outcome", c.outcome}});
    details_.push_back({{"loaded", true}, {"ran", false}, {"candidates", candidates}});
  }

  // It died loading or running given inputs: the archive's failure.
  void Died(const ChildOutcome& child, const std::string& doing, const std::string& prefix) {
    const std::string stage = doing == "loading" ? check::kTorchLoad : check::kTorchRun;
    std::string failure = child.Failure(doing);
    if (child.end == ChildEnd::kCrashed && stage == check::kTorchRun && options_.quantized_engine.empty() &&
        UsesQuantizedOperators(archive_)) {
      // Debian's LibTorch 1.13 aborts in its default engine (onednn) on
      // d2go's qnnpack-prepared model, as Python does; qnnpack runs it.
      failure += " (quantized operators: the archive may need another quantized engine than LibTorch's default; "
                 "try --quantized-engine qnnpack)";
    }
    if (stage == check::kTorchRun) KeepChecksMade();
    out_.push_back({stage, CheckStatus::kFail, prefix + failure});
  }

  // An archive of many methods (each in a child of its own) is bounded as
  // a whole: at most kMaxMethods methods, and no new one once its children
  // have used --timeout in all. True (with a WARN) when `k` is past either.
  bool Capped(size_t k) {
    constexpr size_t kMaxMethods = 32;
    const size_t left = methods_.size() - k;
    std::string why;
    if (k >= kMaxMethods) why = "at most " + std::to_string(kMaxMethods) + " methods are checked in an archive";
    else if (options_.timeout_seconds > 0 && seconds_ >= options_.timeout_seconds)
      why = "its methods took the --timeout of " + std::to_string(static_cast<long long>(options_.timeout_seconds)) + " s in all";
    if (why.empty()) return false;
    out_.push_back({check::kTorchRun, CheckStatus::kWarn,
                    std::to_string(left) + " more method" + (left == 1 ? "" : "s") + " not checked: " + why});
    return true;
  }

  enum class Next { kChecks, kNextMethod, kStop };

  // The first child's result: the lite interpreter, the load, the operators
  // and which methods run (every one with -m all, or those of an archive
  // without forward).
  Next FirstResult(const ModelCheckResult& r) {
    if (r.mobile_loaded.has_value()) {
      out_.push_back({check::kTorchMobile, *r.mobile_loaded ? CheckStatus::kPass : CheckStatus::kFail,
                      *r.mobile_loaded ? "the lite interpreter (_load_for_mobile) loads it"
                                       : "the lite interpreter (_load_for_mobile) cannot load it: " + r.mobile_error});
    }
    if (!r.loaded) {
      out_.push_back({check::kTorchLoad, CheckStatus::kFail,
                      "LibTorch cannot load it: " + r.load_error + CompatLoadNote(r.load_error, TSCTL_LIBTORCH_VERSION)});
      return Next::kStop;
    }
    const bool torchscript = m_.pt2.kind == Pt2RunSpec::Kind::kNone;
    out_.push_back({check::kTorchLoad, CheckStatus::kPass,
                    torchscript ? LoadsOn(m_.device) : "loads in LibTorch through AOTIModelPackageLoader"});
    if (!SandboxOn()) {
      out_.push_back(
          {check::kTorchSandbox, CheckStatus::kSkip, "not confined: --no-sandbox (the model ran with tsctl's rights)"});
    }
    if (!r.unsafe.empty()) {
      out_.push_back({check::kTorchUnsafe, CheckStatus::kFail, JoinSome(r.unsafe, 5, "; ") + " (not run)"});
      return Next::kStop;
    }
    // A .pt2's operators come from its program (pt2.ops); the package's compiled code lists none.
    if (torchscript) report_.ops = r.ops;
    // A mobile archive: what the lite interpreter runs is bytecode.pkl's,
    // which must call nothing the code does not (ts.bytecode); --allow-ops
    // and --list-ops see both.
    if (torchscript && archive_.Has("bytecode.pkl")) {
      CheckBytecode(archive_, r.graph_ops, report_.ops, out_);
      if (out_.back().status == CheckStatus::kFail) return Next::kStop;
    }
    if (options_.has_allow_ops && torchscript) {
      std::vector<CheckResult> checks;
      CheckAllowedOps(report_.ops, options_.allow_ops, check::kTorchOps, "", checks);
      ops_check_ = checks.front();
    }
    const std::string methods = r.methods.empty() ? std::string("none") : JoinAll(r.methods);
    if (!all_ && (r.method_found || options_.method_given || m_.method != "forward")) {
      if (r.method_found) return Next::kChecks;
      out_.push_back(
          {check::kTorchMethod, CheckStatus::kFail, "no method '" + m_.method + "' (methods: " + methods + ")"});
      if (ops_check_) out_.push_back(*ops_check_);
      return Next::kStop;
    }
    const std::vector<std::string> runnable = RunnableMethods(r.methods);
    if (!r.method_found) {
      out_.push_back({check::kTorchMethod, runnable.empty() ? CheckStatus::kWarn : CheckStatus::kPass,
                      "no forward; methods: " + methods});
      if (ops_check_) out_.push_back(*ops_check_);
    }
    std::vector<std::string> rest;
    for (const auto& name : runnable) {
      if (!(r.method_found && name == m_.method)) rest.push_back(name);
    }
    multi_ = r.method_found ? !rest.empty() : rest.size() > 1;
    methods_.insert(methods_.end(), rest.begin(), rest.end());
    return r.method_found ? Next::kChecks : Next::kNextMethod;
  }

  // A method that ran (or was not found), and the files of the first one.
  void MethodResult(const ModelCheckResult& r, size_t k) {
    const std::string p = multi_ ? m_.method + ": " : "";
    if (!r.method_found) {
      out_.push_back({check::kTorchMethod, CheckStatus::kFail, p + "no method '" + m_.method + "'"});
      return;
    }
    if (report_.schema.empty()) report_.schema = r.schema;
    out_.push_back({check::kTorchMethod, CheckStatus::kPass, r.schema});
    if (ops_check_) out_.push_back(*ops_check_);
    ops_check_.reset();
    RunChecks(r, p, out_);
    if (k == 0 || !m_.record_reference_path.empty()) {
      // Files of the first method run only.
      KeepRunFiles(options_, path_, r, reference_tmp_, outputs_tmp_, inputs_tmp_, out_);
      m_.record_reference_path.clear();
      m_.save_outputs_path.clear();
      m_.save_inputs_path.clear();
      reference_tmp_.reset();
      outputs_tmp_.reset();
      inputs_tmp_.reset();
    }
  }

  const Archive& archive_;
  const std::string& path_;
  const ValidateOptions& options_;
  ModelCheckOptions m_;
  ArchiveReport& report_;
  std::vector<CheckResult>& out_;
  const bool all_ = options_.method == "all";
  std::optional<TempFile> reference_tmp_, outputs_tmp_, inputs_tmp_;
  std::vector<std::string> methods_;
  bool first_ = true;
  bool multi_ = false;
  std::optional<CheckResult> ops_check_;  // reported after the first torch.method
  double seconds_ = 0;
  std::string schema_;
  nlohmann::json details_ = nlohmann::json::array();
};

}  // namespace

void CheckModelInChild(const Archive& archive, const std::string& path, const ValidateOptions& options,
                       ModelCheckOptions m, ArchiveReport& report) {
  std::unique_ptr<TempFile> model_reference;  // B's recording, while this archive runs
  if (!options.reference_model_path.empty()) model_reference = RunReferenceModel(archive, options, m, report);
  MethodChecks(archive, path, options, std::move(m), report).Run();
}

}  // namespace tsctl
