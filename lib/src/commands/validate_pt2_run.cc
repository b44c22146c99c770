// validate's load-and-run of a .pt2 in the isolated child, where the
// LibTorch plugin runs it (the 2.x build: AOTInductor packages through
// AOTIModelPackageLoader); elsewhere one SKIP or WARN line saying why.
#include <fstream>
#include <memory>
#include <optional>

#include "plugin_abi.h"
#include "tsctl/error.h"
#include "apply_inputs.h"
#include "check_before_load.h"
#include "tsctl/pt2.h"
#include "validate_internal.h"
#include "torch_server.h"

namespace tsctl {
namespace {

constexpr const char* kNoRunner =
    "not run: loading and running a .pt2 needs the LibTorch 2.x build of tsctl (AOTInductor packages "
    "through AOTIModelPackageLoader); this build runs TorchScript archives only";

// A record copied to a temporary file the child reads, or null if absent.
std::unique_ptr<TempFile> RecordFile(const Archive& archive, const std::string& record) {
  if (!archive.Has(record)) return nullptr;
  auto file = std::make_unique<TempFile>();
  std::ofstream(file->path, std::ios::binary) << archive.Read(record, uint64_t{1} << 30);
  return file;
}

// Why the package should not be handed to LibTorch: a pt2.* check that
// failed, or AOTInductor code this machine cannot run. "" if none.
std::string Refusal(const std::vector<CheckResult>& checks, const Pt2Info& info) {
  for (const CheckResult& c : checks) {
    // A package's names are extracted to disk before LibTorch loads it: a
    // ZIP that fails any zip.* check (a name with ../ among them) is never
    // handed over.
    if (RefusesLoad(c)) {
      return "LibTorch is not given a .pt2 that fails " + c.id;
    }
    if (c.id == check::kPt2Aoti && c.status == CheckStatus::kWarn)
      return "the compiled code needs CPU features this machine lacks (pt2.aoti)";
  }
  for (const auto& [key, value] : info.aoti.front().metadata) {
    if (key == "AOTI_DEVICE_KEY" && value != "cpu") {
      // validate runs on the CPU (as for TorchScript archives); bench too.
      return "the package was compiled for " + value + "; tsctl runs AOTInductor packages compiled for the CPU";
    }
  }
  return "";
}

}  // namespace

Pt2Here Pt2RunsHere(const Archive& archive, const Pt2Info& info, Pt2Support& runs, Pt2RunSpec& spec) {
  try {
    runs = ServerInfo().pt2;
  } catch (const Error&) {
    runs.runs_aoti = false;
  }
  if (!runs.runs_aoti) return Pt2Here::kNoRunner;
  if (archive.kind() == ArchiveKind::kPt2Early) return Pt2Here::kEarly;
  spec = Pt2RunSpecOf(archive, info);
  if (spec.kind == Pt2RunSpec::Kind::kProgram) return Pt2Here::kProgram;
  return spec.kind == Pt2RunSpec::Kind::kAoti ? Pt2Here::kRuns : Pt2Here::kNothing;
}

void RunPt2InChild(const Archive& archive, const Pt2Info& info, const ValidateOptions& options, ArchiveReport& report) {
  auto& out = report.checks;
  Pt2Support runs;
  Pt2RunSpec spec;
  switch (Pt2RunsHere(archive, info, runs, spec)) {
    case Pt2Here::kNoRunner:
      if (archive.kind() != ArchiveKind::kPt2Early && !info.aoti.empty()) {
        // Native code nobody ran: never a quiet PASS (--strict fails it).
        out.push_back({check::kTorchLoad, CheckStatus::kWarn,
                       std::string(kNoRunner) + ": an AOTInductor package is native code, and nothing here ran it "
                                                "(the LibTorch 2.x build runs it in the sandbox)"});
      } else {
        out.push_back({check::kTorchLoad, CheckStatus::kSkip, kNoRunner});
      }
      return;
    case Pt2Here::kEarly:
      out.push_back({check::kTorchLoad, CheckStatus::kSkip,
                     "not run: no LibTorch loads the early layout (serialized_exported_program.json, PyTorch 2.1-2.2)"});
      return;
    case Pt2Here::kProgram:
      out.push_back({check::kTorchLoad, CheckStatus::kWarn, "not run: a .pt2 exported program: " + runs.program_unavailable});
      return;
    case Pt2Here::kNothing: return;
    case Pt2Here::kRuns: break;
  }
  if (std::string why = Refusal(out, info); !why.empty()) {
    out.push_back({check::kTorchLoad, CheckStatus::kSkip, "not run: " + why});
    return;
  }
  if (IsCudaDevice(options.device)) {
    out.push_back({check::kTorchLoad, CheckStatus::kSkip,
                   "not run on " + options.device +
                       ": an AOTInductor package runs on the device it was compiled for, here the CPU; validate it "
                       "without --device"});
    return;
  }
  ModelCheckOptions m = ModelCheckBase(archive, report.path, options);
  m.method = options.method == "all" ? "forward" : options.method;
  m.pt2 = std::move(spec);
  std::unique_ptr<TempFile> stored_reference;
  if (m.reference_path.empty() && (stored_reference = RecordFile(archive, kReferenceRecordPath))) {
    m.reference_path = stored_reference->path;
    m.reference_label = kReferenceRecordPath;
  }
  // The model's arguments: the child reads a guess from the signature itself.
  ResolvedInputs in;
  if (options.run) {
    const std::string reference = stored_reference ? std::string(kReferenceRecordPath) : options.reference_path;
    in = ResolveInputs(archive, options, {.reference_path = reference, .key = m.pt2.model, .pt2 = true});
    ApplyResolved(in, m);
  }
  CheckModelInChild(archive, report.path, options, m, report);
}

}  // namespace tsctl
