// The LibTorch checks of `tsctl validate`: one isolated child per method
// checked, its typed result (ModelCheckResult) turned into checks.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include "../text/json_util.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/operators.h"
#include "tsctl/source.h"
#include "tsctl/stamp.h"
#include "tsctl/text_util.h"
#include "tsctl/torch_backend.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "validate_internal.h"

namespace tsctl {
namespace {

constexpr const char* kReferenceRecord = "tsctl_reference.pt";

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string Fmt(const char* format, double a, double b = 0, double c = 0, double d = 0, double e = 0, double f = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d, e, f);
  return buf;
}

// `x` rounded up to 3 significant digits: a tolerance printed with %.3g
// that still passes.
double CeilSignificant(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  const double unit = std::pow(10.0, std::floor(std::log10(x)) - 2);
  return std::ceil(x / unit * (1 - 1e-12)) * unit;
}

// Each LibTorch child's limits, as validate's options set them.
ChildLimits LimitsOf(const ValidateOptions& o) {
  return {.timeout_seconds = o.timeout_seconds, .memory_bytes = o.memory_limit_bytes, .threads = o.torch_threads};
}

// An allocation that failed under the child's memory cap says so, naming
// the cap and the flag that moves it.
void NameMemoryLimit(std::string& error, uint64_t cap) {
  if (error.find("can't allocate memory") == std::string::npos && error.find("bad_alloc") == std::string::npos &&
      error.find("not enough memory") == std::string::npos) {
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

// What a model-check child was doing, from what it last wrote to its progress
// file: "loading", "running forward", or "running forward on inferred inputs
// (--arg ...)" while it tried a candidate.
std::string Doing(const std::string& progress, const std::string& method) {
  if (progress == "loaded" || progress.rfind("method ", 0) == 0) return "running " + method;
  if (std::string tried = TriedCandidate(progress); !tried.empty()) {
    return "running " + method + " on inferred inputs (" + tried + ")";
  }
  return "loading";
}

// The checks of one method's run. `prefix` is "" for the one method, or
// "NAME: " when several are checked.
void RunChecks(const ModelCheckResult& r, const std::string& prefix, std::vector<CheckResult>& out) {
  if (!r.reference_error.empty() && !r.ran) {
    // An unreadable reference stops the run: report it, never a silent pass.
    out.push_back({"torch.reference", CheckStatus::kFail, prefix + r.reference_error});
    return;
  }
  if (!r.ran) {
    if (!r.run_error.empty()) {
      out.push_back({"torch.run", CheckStatus::kFail, prefix + r.run_error});
    } else if (r.run_skipped == "not run (--no-run)") {
      out.push_back({"torch.run", CheckStatus::kSkip, prefix + r.run_skipped});
    } else {
      // Not run for want of inputs: never a silent pass.
      out.push_back({"torch.run", CheckStatus::kWarn, prefix + "not run: " + r.run_skipped});
    }
    return;
  }
  std::string shapes;
  for (const auto& o : r.outputs) shapes += (shapes.empty() ? "" : ", ") + o.name + " " + o.desc;
  std::string how;
  if (r.input_source == "no arguments") {
    how = "ran without inputs";
  } else if (r.input_source == "inferred") {
    std::string about = r.inputs_note.empty() ? std::string() : r.inputs_note + "; ";
    how = "ran with inputs inferred: " + r.inputs_desc + " (" + about + "tried " +
          std::to_string(r.candidates_tried) + "; pin them with " + r.inputs_flags + ")";
    if (!r.guess_suspect.empty()) {
      // No candidate ran cleanly: the guess, not the archive, may be at
      // fault. A warning, never a failure; given inputs decide.
      std::string shapes_out;
      for (const auto& o : r.outputs) shapes_out += (shapes_out.empty() ? "" : ", ") + o.name + " " + o.desc;
      out.push_back({"torch.run", CheckStatus::kWarn,
                     prefix + how + ": " + shapes_out + "; but " + r.guess_suspect + ", and no inferred candidate ran cleanly (" +
                         std::to_string(r.candidates.size()) +
                         " set aside): the inputs were guessed, so this says nothing against the archive: give real "
                         "inputs (--arg, --input, --load-inputs) to check the outputs"});
      return;
    }
  } else {
    how = "ran with inputs from " + r.input_source + (r.inputs_desc.empty() ? "" : " (" + r.inputs_desc + ")");
  }
  out.push_back({"torch.run", CheckStatus::kPass, prefix + how + ": " + shapes});
  std::vector<std::string> nonfinite;
  for (const auto& o : r.outputs) {
    if (o.nonfinite > 0) nonfinite.push_back(o.name + " has " + std::to_string(o.nonfinite) + " NaN/Inf");
  }
  out.push_back({"torch.finite", nonfinite.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                 prefix + (nonfinite.empty() ? "outputs contain no NaN or Inf" : Join(nonfinite, "; "))});
  if (r.deterministic.has_value()) {
    out.push_back({"torch.deterministic", *r.deterministic ? CheckStatus::kPass : CheckStatus::kFail,
                   prefix + (*r.deterministic ? std::string("two runs give identical outputs") +
                                                    (r.stateful ? " (from the loaded state each: forward changes the "
                                                                  "model's own buffers or attributes, so a second call "
                                                                  "on one copy differs by design)"
                                                                : "")
                                              : "two runs differ at " + r.determinism_note + " (max abs difference " +
                                                    Fmt("%.3g", r.max_run_diff) + ")")});
  } else if (!r.determinism_note.empty()) {
    out.push_back({"torch.deterministic", CheckStatus::kWarn, prefix + "not checked: " + r.determinism_note});
  }
  if (r.reference_compared) {
    bool all = true;
    int compared = 0;
    std::string msg;
    for (const auto& o : r.reference) {
      std::string part = o.name;
      if (!o.compared) {
        part += " not compared: " + o.error;
      } else {
        ++compared;
        all &= o.pass;
        if (o.is_tensor && o.error.empty()) {
          part += Fmt(" max abs %.3g, mean abs %.3g, max rel %.3g, mean rel %.3g (rtol %.3g, atol %.3g)", o.max_abs, o.mean_abs,
                      o.max_rel, o.mean_rel, o.rtol, o.atol);
        } else if (o.error.empty()) {
          part += " equal";
        }
        if (!o.pass) part += " FAILED";
        if (!o.pass && o.has_min_tolerance) {
          // Rounded up, so that the value printed passes.
          part += Fmt(" (would pass with --atol %.3g", CeilSignificant(o.min_atol));
          part += o.min_rtol < 0 ? std::string(" (no --rtol can: the reference is 0 where they differ))")
                                 : Fmt(" or --rtol %.3g)", CeilSignificant(o.min_rtol));
        }
        if (!o.error.empty()) part += ": " + o.error;
      }
      msg += (msg.empty() ? "" : "; ") + part;
    }
    CheckStatus status = !all ? CheckStatus::kFail : compared == 0 ? CheckStatus::kWarn : CheckStatus::kPass;
    if (compared == 0 && msg.empty()) msg = "the outputs hold no value to compare";
    if (compared == 0) msg = "compared nothing: " + msg;
    out.push_back({"torch.reference", status, prefix + "against " + r.reference_source + ": " + msg});
  } else if (!r.reference_error.empty()) {
    out.push_back({"torch.reference", CheckStatus::kFail, prefix + r.reference_error});
  }
  if (r.intermediates) {
    // --compare-intermediates: compared nothing is a WARN, never a PASS.
    const IntermediatesResult& x = *r.intermediates;
    const std::string note = x.note.empty() ? "" : " (" + x.note + ")";
    if (!x.compared) {
      out.push_back({"torch.intermediates", CheckStatus::kWarn, prefix + "not compared: " + x.note});
    } else if (x.first_divergence >= 0) {
      out.push_back({"torch.intermediates", CheckStatus::kFail,
                     prefix + "the first value that differs from the reference model's is value " +
                         std::to_string(x.first_divergence + 1) + " of the graph, " + x.node +
                         (x.node_b == x.node ? "" : " (reference model: " + x.node_b + ")") + ": " + x.detail + "; the " +
                         std::to_string(x.values - 1) + " before it match (matched by " + x.matched_by + ")" + note});
    } else if (x.partial) {
      out.push_back({"torch.intermediates", CheckStatus::kWarn,
                     prefix + "the first " + std::to_string(x.values) + " intermediate values match the reference model's; " +
                         x.note + ", and nothing after that is compared"});
    } else if (x.values == 0) {
      out.push_back({"torch.intermediates", CheckStatus::kWarn, prefix + "compared nothing: the graph computes no tensor" + note});
    } else {
      out.push_back({"torch.intermediates", CheckStatus::kPass,
                     prefix + "all " + std::to_string(x.values) + " intermediate values match the reference model's (matched by " +
                         x.matched_by + ")" + note});
    }
  }
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

}  // namespace

std::string RecordReferenceModel(ModelCheckOptions b, const std::string& reference_file, const ChildLimits& limits) {
  b.record_reference_path = reference_file;
  b.reference_path.clear();
  b.reference_from_archive = false;
  b.check_determinism = false;
  b.save_outputs_path.clear();
  ChildOutcome child = RunTorchChild(CheckRequest{.options = b}, limits);
  const std::string doing = Doing(child.progress, b.method);
  if (child.Died()) return child.Failure(doing);
  ModelCheckResult r = std::move(child).Take<ModelCheckResult>(doing);
  if (!r.loaded) return "LibTorch cannot load it: " + r.load_error;
  if (!r.method_found) return "no method '" + b.method + "' (methods: " + (r.methods.empty() ? std::string("none") : Join(r.methods)) + ")";
  if (!r.ran) return r.run_error.empty() ? "not run: " + r.run_skipped : r.run_error;
  if (!r.recorded) return "its inputs and outputs could not be recorded";
  return "";
}

// --reference-model B: B runs first, in its own child, on this archive's
// inputs (given, loaded, or stored in it), else on its own (stored in it, or
// inferred there); this archive then runs on exactly what it ran on (`m` is
// pointed at B's recording, kept in the returned file). Nothing to compare
// with is a FAIL, never a silent pass.
std::unique_ptr<TempFile> RunReferenceModel(const Archive& archive, const ValidateOptions& options, ModelCheckOptions& m,
                                            ArchiveReport& report) {
  auto& out = report.checks;
  auto model_reference = std::make_unique<TempFile>();
  const std::string& b_path = options.reference_model_path;
  ModelCheckOptions b = m;
  b.path = b_path;
  b.pt2 = {};  // B is a TorchScript archive (the CLI checked), whatever this archive is
  b.load_path.clear();  // B by its path (m's descriptor is this archive's)
  b.reference_from_archive = false;
  b.record_intermediates = options.compare_intermediates;
  // The inputs recorded in an archive's extra/tsctl_reference.pt (its
  // --record-reference), given to B as --load-inputs takes them.
  std::unique_ptr<TempFile> recorded_inputs;
  auto recorded = [&](const Archive& a, const std::string& name) {
    const std::string bytes = RecordedInputs(a);
    if (bytes.empty()) return false;
    recorded_inputs = std::make_unique<TempFile>();
    std::ofstream(recorded_inputs->path, std::ios::binary) << bytes;
    b.load_inputs_path = recorded_inputs->path;
    b.input_source = std::string(kRecordedReference) + " of " + name;
    return true;
  };
  if (b.inputs.empty() && b.args.empty() && b.load_inputs_path.empty()) {
    try {
      // Stored in this archive (its recorded reference), else stored in B.
      if (!recorded(archive, report.path)) {
        Archive b_archive = Archive::Open(OpenFileSource(b_path));
        ArchiveInputs stored = InputsFromArchive(b_archive, m.method);
        if (!stored.inputs.empty()) {
          b.inputs = stored.inputs;
          b.input_source = stored.source + " of " + b_path;
        } else {
          recorded(b_archive, b_path);
        }
      }
    } catch (const Error&) {
    }
  }
  const std::string why = RecordReferenceModel(b, model_reference->path, LimitsOf(options));
  Json(report.details)["reference_model"] = b_path;
  if (!why.empty()) {
    // Nothing to compare with: a FAIL (never a silent pass); this archive's
    // own load and run checks still follow.
    out.push_back({"torch.reference", CheckStatus::kFail, "reference model " + b_path + ": " + why});
    model_reference.reset();
  } else {
    m.reference_path = model_reference->path;
    m.reference_label = "reference model " + b_path;
    m.reference_from_archive = false;
    m.compare_intermediates = options.compare_intermediates && m.pt2.kind == Pt2RunSpec::Kind::kNone;
    m.inputs.clear();
    m.args.clear();
    m.load_inputs_path.clear();
    m.input_source.clear();
  }
  return model_reference;
}

// The files of a method's run: --save-reference, --record-reference (stamped
// into the archive), --save-outputs; each said in a check when it could not
// be written.
void KeepRunFiles(const ValidateOptions& options, const std::string& path, const ModelCheckResult& r,
                  const std::optional<TempFile>& reference_tmp, const std::optional<TempFile>& outputs_tmp,
                  std::vector<CheckResult>& out) {
  std::string bytes = reference_tmp && r.recorded ? reference_tmp->Read() : std::string();
  // A reference is what later runs must match: never one from a run that
  // failed its own checks.
  std::string unsound;
  for (const OutputSummary& o : r.outputs) {
    if (o.nonfinite > 0 && unsound.empty()) unsound = o.name + " holds NaN/Inf";
  }
  if (r.deterministic == false) unsound = "two runs differ at " + r.determinism_note;
  if (!r.guess_suspect.empty()) unsound = "the guessed inputs gave " + r.guess_suspect;
  if (reference_tmp && !bytes.empty() && !unsound.empty()) {
    out.push_back({"torch.reference", CheckStatus::kFail,
                   "not recorded: " + unsound + "; a reference must come from a sound run"});
    bytes.clear();
  } else if (reference_tmp) {
    if (!options.save_reference_path.empty() && !bytes.empty()) {
      WriteFileAtomically(options.save_reference_path, bytes);
      out.push_back({"torch.reference", CheckStatus::kPass,
                     "saved inputs and outputs to " + options.save_reference_path + " (--reference FILE compares with them)"});
    }
    if (options.record_reference && !bytes.empty()) {
      StampOptions s;
      s.auto_fields = false;
      s.files = {{kReferenceRecord, bytes}};
      s.read_only_hint = "pass --save-reference FILE to write the reference to a file instead";
      try {
        const StampResult stamped = Stamp(path, s);
        out.push_back({"torch.reference", CheckStatus::kPass,
                       std::string("recorded inputs and outputs in extra/") + kReferenceRecord +
                           (stamped.repaired ? " (after undoing an interrupted stamp the archive carried)" : "")});
      } catch (const Error& e) {
        // The report still comes out: the recording failed, not validate.
        out.push_back({"torch.reference", CheckStatus::kFail,
                       std::string("cannot record in extra/") + kReferenceRecord + ": " + e.what()});
      }
    } else if (bytes.empty()) {
      out.push_back({"torch.reference", CheckStatus::kFail, "nothing to record: the method did not run (pass --arg or --input)"});
    }
  }
  if (outputs_tmp) {
    if (r.outputs_saved) {
      WriteFileAtomically(options.save_outputs_path, outputs_tmp->Read());
    } else {
      std::string why = "the method did not run";
      if (r.ran) {
        std::string outputs;
        for (const auto& o : r.outputs) outputs += (outputs.empty() ? "" : ", ") + o.name + " " + o.desc;
        why = "an .npy file holds one tensor (or NumPy has no type for it); the outputs are " + outputs +
              ": save them to a .pt file";
      }
      out.push_back({"torch.outputs", CheckStatus::kFail, "--save-outputs: nothing saved (" + why + ")"});
    }
  }
}

void CheckModelInChild(const Archive& archive, const std::string& path, const ValidateOptions& options,
                       ModelCheckOptions m, ArchiveReport& report) {
  auto& out = report.checks;
  const bool all = options.method == "all";
  std::unique_ptr<TempFile> model_reference;  // B's recording, while this archive runs
  if (!options.reference_model_path.empty()) model_reference = RunReferenceModel(archive, options, m, report);
  std::optional<TempFile> reference_tmp, outputs_tmp;
  if (options.record_reference || !options.save_reference_path.empty()) {
    reference_tmp.emplace();
    m.record_reference_path = reference_tmp->path;
  }
  if (!options.save_outputs_path.empty()) {
    const std::string& out_path = options.save_outputs_path;
    const bool npy = out_path.size() > 4 && out_path.compare(out_path.size() - 4, 4, ".npy") == 0;
    outputs_tmp.emplace(npy ? ".npy" : "");  // the child writes the format the name asks for
    m.save_outputs_path = outputs_tmp->path;
  }
  std::vector<std::string> methods = {all ? std::string("forward") : options.method};
  bool first = true;
  bool multi = false;
  std::optional<CheckResult> ops_check;  // reported after the first torch.method
  double seconds = 0;
  nlohmann::json details = nlohmann::json::array();
  for (size_t k = 0; k < methods.size(); ++k) {
    m.method = methods[k];
    const std::string prefix = multi ? m.method + ": " : "";
    std::vector<CandidateTry> crashed;  // inferred candidates that killed a child
    std::string schema;                 // the method's, once a child found it
    auto on_line = [&options, &m](const std::string& line) {
      if (!options.progress) return;
      if (long k = CandidateIndex(line); k >= 0) options.progress("trying inferred inputs: candidate " + std::to_string(k + 1));
      else if (line == "loaded" || line.rfind("method ", 0) == 0) options.progress("running " + m.method);
    };
    ChildOutcome child = RunModelCheck(m, LimitsOf(options), crashed, seconds, &schema, on_line);
    const std::string doing = Doing(child.progress, m.method);
    const std::string stage = doing == "loading" ? "torch.load" : "torch.run";
    // A child that died while running: what it had already checked stands.
    auto keep_checks_made = [&] {
      if (first) {
        out.push_back({"torch.load", CheckStatus::kPass, LoadsOn(m.device)});
        first = false;
      }
      if (!schema.empty()) {
        if (report.schema.empty()) report.schema = schema;
        out.push_back({"torch.method", CheckStatus::kPass, schema});
      }
    };
    if (child.Died() && CandidateIndex(child.progress) >= 0) {
      // It died on a guess: the inputs were inferred, so this says nothing
      // against the archive. A warning naming each guess, never a failure.
      keep_checks_made();
      constexpr size_t kListed = 2;
      std::string tried;
      for (size_t i = 0; i < crashed.size() && i < kListed; ++i) {
        tried += (i ? "; " : "") + crashed[i].flags + ": " + crashed[i].outcome;
      }
      if (crashed.size() > kListed) tried += "; and " + std::to_string(crashed.size() - kListed) + " more (the JSON report lists each)";
      out.push_back({"torch.run", CheckStatus::kWarn,
                     prefix + "not run: " + std::to_string(crashed.size()) + " inferred candidate" +
                         (crashed.size() == 1 ? "" : "s") + " crashed or stopped LibTorch (" + tried +
                         "); they were guessed, so this says nothing against the archive: give real inputs (--arg, "
                         "--input, --load-inputs) to check it"});
      nlohmann::json candidates = nlohmann::json::array();
      for (const CandidateTry& c : crashed) candidates.push_back({{"flags", c.flags}, {"outcome", c.outcome}});
      details.push_back({{"loaded", true}, {"ran", false}, {"candidates", candidates}});
      continue;
    }
    if (child.Died()) {
      std::string failure = child.Failure(doing);
      if (child.end == ChildEnd::kCrashed && stage == "torch.run" && options.quantized_engine.empty() &&
          UsesQuantizedOperators(archive)) {
        // Debian's LibTorch 1.13 aborts in its default engine (onednn) on
        // d2go's qnnpack-prepared model, as Python does; qnnpack runs it.
        failure += " (quantized operators: the archive may need another quantized engine than LibTorch's default; "
                   "try --quantized-engine qnnpack)";
      }
      if (stage == "torch.run") keep_checks_made();
      out.push_back({stage, CheckStatus::kFail, prefix + failure});
      continue;
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
    details.push_back(ModelCheckToJson(r));
    if (first && r.mobile_loaded.has_value()) {
      out.push_back({"torch.mobile", *r.mobile_loaded ? CheckStatus::kPass : CheckStatus::kFail,
                     *r.mobile_loaded ? "the lite interpreter (_load_for_mobile) loads it"
                                      : "the lite interpreter (_load_for_mobile) cannot load it: " + r.mobile_error});
    }
    if (first) {
      first = false;
      if (!r.loaded) {
        out.push_back({"torch.load", CheckStatus::kFail, "LibTorch cannot load it: " + r.load_error});
        break;
      }
      out.push_back({"torch.load", CheckStatus::kPass, m.pt2.kind == Pt2RunSpec::Kind::kNone ? LoadsOn(m.device)
                                                       : "loads in LibTorch through AOTIModelPackageLoader"});
      // A .pt2's operators come from its program (pt2.ops); the package's compiled code lists none.
      if (m.pt2.kind == Pt2RunSpec::Kind::kNone) report.ops = r.ops;
      if (options.has_allow_ops && m.pt2.kind == Pt2RunSpec::Kind::kNone) {
        std::vector<CheckResult> checks;
        CheckAllowedOps(report.ops, options.allow_ops, "torch.ops", "", checks);
        ops_check = checks.front();
      }
      std::vector<std::string> runnable = RunnableMethods(r.methods);
      if (all || (!r.method_found && !options.method_given && m.method == "forward")) {
        // Every method (--method all), or those of an archive without forward.
        if (!r.method_found) {
          out.push_back({"torch.method", runnable.empty() ? CheckStatus::kWarn : CheckStatus::kPass,
                         "no forward; methods: " + (r.methods.empty() ? std::string("none") : Join(r.methods))});
          if (ops_check) out.push_back(*ops_check);
        }
        std::vector<std::string> rest;
        for (const auto& name : runnable) {
          if (!(r.method_found && name == m.method)) rest.push_back(name);
        }
        multi = r.method_found ? !rest.empty() : rest.size() > 1;
        methods.insert(methods.end(), rest.begin(), rest.end());
        if (!r.method_found) continue;
      } else if (!r.method_found) {
        out.push_back({"torch.method", CheckStatus::kFail,
                       "no method '" + m.method + "' (methods: " + (r.methods.empty() ? std::string("none") : Join(r.methods)) + ")"});
        if (ops_check) out.push_back(*ops_check);
        break;
      }
    }
    const std::string p = multi ? m.method + ": " : "";
    if (!r.method_found) {
      out.push_back({"torch.method", CheckStatus::kFail, p + "no method '" + m.method + "'"});
      continue;
    }
    if (report.schema.empty()) report.schema = r.schema;
    out.push_back({"torch.method", CheckStatus::kPass, r.schema});
    if (ops_check) out.push_back(*ops_check);
    ops_check.reset();
    RunChecks(r, p, out);
    if (k == 0 || !m.record_reference_path.empty()) {
      // Files of the first method run only.
      KeepRunFiles(options, path, r, reference_tmp, outputs_tmp, out);
      m.record_reference_path.clear();
      m.save_outputs_path.clear();
      reference_tmp.reset();
      outputs_tmp.reset();
    }
  }
  Json(report.details)["torch_seconds"] = seconds;
  Json(report.details)["model"] = details.size() == 1 ? details[0] : details;
}

}  // namespace tsctl
