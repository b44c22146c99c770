// The reference runs of `tsctl validate`: a reference model recorded in
// its own child (--reference-model), and the files a method's run leaves
// (--save-reference, --record-reference, --save-outputs).
#include <filesystem>
#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <optional>

#include "../text/json_util.h"
#include "apply_inputs.h"
#include "check_before_load.h"
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/run_spec.h"
#include "tsctl/source.h"
#include "tsctl/stamp.h"
#include "torch_child.h"
#include "torch_child_codec.h"
#include "validate_internal.h"

namespace tsctl {

std::string RecordReferenceModel(ModelCheckOptions b, const std::string& reference_file, const ChildLimits& limits) {
  b.record_reference_path = reference_file;
  b.reference_path.clear();
  b.reference_from_archive = false;
  b.check_determinism = false;
  b.calls = 0;  // its state is not the archive's to judge
  b.save_outputs_path.clear();
  b.save_inputs_path.clear();
  ChildOutcome child = RunTorchChild(CheckRequest{.options = b}, limits);
  const std::string doing = Doing(child.progress, b.method);
  if (child.Died()) return child.Failure(doing);
  ModelCheckResult r = std::move(child).Take<ModelCheckResult>(doing);
  if (!r.loaded) return "LibTorch cannot load it: " + r.load_error;
  if (!r.method_found) return "no method '" + b.method + "' (methods: " + (r.methods.empty() ? std::string("none") : JoinAll(r.methods)) + ")";
  if (!r.ran) return r.run_error.empty() ? "not run: " + r.run_skipped : r.run_error;
  if (!r.recorded) return "its inputs and outputs could not be recorded";
  return "";
}

namespace {

// B's inputs when none were given: what this archive keeps for the method
// (its recorded reference, its stored inputs), else what `b_archive` (B)
// keeps; never inferred (B then infers its own in its child, as validate B
// alone would).
ResolvedInputs ReferenceInputs(const Archive& archive, const std::string& archive_name, const Archive& b_archive,
                               ModelCheckOptions& b) {
  RunSpec keep = b;
  keep.infer_inputs = false;
  keep.data_loader.clear();
  const ResolveContext context{.key = b.method};
  ResolvedInputs in = ResolveInputs(archive, keep, context);
  std::string from = archive_name;
  if (in.origin == InputOrigin::kNone) {
    try {
      in = ResolveInputs(b_archive, keep, context);
      from = b.path;
    } catch (const Error&) {
      return {};  // B's own records are unusable: it fails in its child, with the reason
    }
  }
  if (in.origin == InputOrigin::kNone) return in;
  ApplyResolved(in, b);
  b.input_source = in.source + " of " + from;
  return in;
}

}  // namespace

std::unique_ptr<TempFile> RunReferenceModel(const Archive& archive, const ValidateOptions& options, ModelCheckOptions& m,
                                            ArchiveReport& report) {
  auto& out = report.checks;
  auto model_reference = std::make_unique<TempFile>();
  const std::string& b_path = options.reference_model_path;
  Json(report.details)["reference_model"] = b_path;
  // B is checked as this archive is (the same static checks, the same
  // --allow-load-hooks) and loaded through the descriptor checked, held open
  // until it has run.
  std::optional<Archive> b_archive;
  std::string why;
  try {
    b_archive.emplace(Archive::Open(OpenFileSource(b_path)));
    if (std::optional<LoadRefusal> refused = CheckBeforeLoad(*b_archive, b_path, options.allow_load_hooks)) {
      why = refused->message;
    }
  } catch (const Error& e) {
    why = e.what();
  }
  if (why.empty()) {
    ModelCheckOptions b = m;
    b.path = b_path;
    b.pt2 = {};  // B is a TorchScript archive (the CLI checked), whatever this archive is
    b.load_path = CheckedLoadPath(*b_archive);
    b.reference_from_archive = false;
    b.record_intermediates = options.compare_intermediates;
    ResolvedInputs kept;  // holds a recorded reference's temporary file until B has run
    if (b.inputs.empty() && b.args.empty() && b.load_inputs_path.empty()) {
      kept = ReferenceInputs(archive, report.path, *b_archive, b);
    }
    why = RecordReferenceModel(b, model_reference->path, LimitsOf(options));
  }
  if (!why.empty()) {
    // Nothing to compare with: a FAIL (never a silent pass); this archive's
    // own load and run checks still follow.
    out.push_back({check::kTorchReference, CheckStatus::kFail, "reference model " + b_path + ": " + why});
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

void KeepRunFiles(const ValidateOptions& options, const std::string& path, const ModelCheckResult& r,
                  const std::optional<TempFile>& reference_tmp, const std::optional<TempFile>& outputs_tmp,
                  const std::optional<TempFile>& inputs_tmp, std::vector<CheckResult>& out) {
  // The recording is read into memory only to stamp it into the archive;
  // --save-reference copies the file.
  std::error_code size_error;
  const bool recorded = reference_tmp && r.recorded && std::filesystem::file_size(reference_tmp->path, size_error) > 0 &&
                        !size_error;
  std::string bytes = recorded && options.record_reference ? reference_tmp->Read() : std::string();
  // A reference is what later runs must match: never one from a run that
  // failed its own checks.
  std::string unsound;
  for (const OutputSummary& o : r.outputs) {
    if (o.nonfinite > 0 && unsound.empty()) unsound = o.name + " holds NaN/Inf";
  }
  if (r.deterministic == false) unsound = "two runs differ at " + r.determinism_note;
  if (!r.guess_suspect.empty()) unsound = "the guessed inputs gave " + r.guess_suspect;
  if (!r.inputs_contradict.empty()) unsound = "the inputs contradict the model's weights: " + r.inputs_contradict;
  if (recorded && !unsound.empty()) {
    out.push_back({check::kTorchReference, CheckStatus::kFail,
                   "not recorded: " + unsound + "; a reference must come from a sound run"});
    bytes.clear();
  } else if (reference_tmp) {
    if (!options.save_reference_path.empty() && recorded) {
      CopyFileAtomically(reference_tmp->path, options.save_reference_path);
      out.push_back(
          {check::kTorchReference, CheckStatus::kPass,
           "saved inputs and outputs to " + options.save_reference_path + " (--reference FILE compares with them)"});
    }
    if (options.record_reference && recorded) {
      StampOptions s;
      s.auto_fields = false;
      nlohmann::json origin = {{"input_source", r.input_source}, {"inputs", r.inputs_desc}};
      s.files = {{kReferenceRecord, bytes}, {kReferenceOriginRecord, origin.dump(2) + "\n"}};
      s.read_only_hint = "pass --save-reference FILE to write the reference to a file instead";
      try {
        const StampResult stamped = Stamp(path, s);
        out.push_back({check::kTorchReference, CheckStatus::kPass,
                       std::string("recorded inputs and outputs in ") + kReferenceRecordPath +
                           (stamped.repaired ? " (after undoing an interrupted stamp the archive carried)" : "")});
      } catch (const Error& e) {
        // The report still comes out: the recording failed, not validate.
        out.push_back({check::kTorchReference, CheckStatus::kFail,
                       std::string("cannot record in ") + kReferenceRecordPath + ": " + e.what()});
      }
    } else if (!recorded) {
      out.push_back({check::kTorchReference, CheckStatus::kFail,
                     "nothing to record: the method did not run (pass --arg or --input)"});
    }
  }
  if (outputs_tmp) {
    if (r.outputs_saved) {
      CopyFileAtomically(outputs_tmp->path, options.save_outputs_path);  // never held in memory
    } else {
      std::string why = "the method did not run";
      if (r.ran) {
        std::string outputs;
        for (const auto& o : r.outputs) outputs += (outputs.empty() ? "" : ", ") + o.name + " " + o.desc;
        why = "an .npy file holds one tensor, an .npz file tensors and numbers, of the dtypes NumPy has; the outputs are " +
              outputs + ": save them to a .pt file";
      }
      out.push_back({check::kTorchOutputs, CheckStatus::kFail, "--save-outputs: nothing saved (" + why + ")"});
    }
  }
  if (inputs_tmp) {
    if (r.inputs_saved) {
      CopyFileAtomically(inputs_tmp->path, options.save_inputs_path);
    } else {
      out.push_back({check::kTorchOutputs, CheckStatus::kFail,
                     std::string("--save-inputs: nothing saved (") +
                         (r.ran ? "an .npy file holds one tensor, an .npz file tensors and numbers, of the dtypes NumPy has: save them to a .pt file"
                                : "the method did not run") + ")"});
    }
  }
}

}  // namespace tsctl
