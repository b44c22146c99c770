#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "../text/lists.h"
#include "tsctl/archive.h"
#include "tsctl/operators.h"
#include "tsctl/pickle.h"
#include "tsctl/pt2.h"
#include "tsctl/pt2_run.h"
#include "tsctl/torch_backend.h"
#include "tsctl/progress_event.h"
#include "tsctl/validate.h"
#include "torch_child.h"

namespace tsctl {

struct CheckContext;
struct PteProgram;

// Every check's id, once: the compiler catches a misspelt one. CheckIds()
// lists them in report order; tsctl-validate(1) documents each.
namespace check {
inline constexpr char kZipStructure[] = "zip.structure";
inline constexpr char kZipNames[] = "zip.names";
inline constexpr char kZipDuplicates[] = "zip.duplicates";
inline constexpr char kZipAmbiguous[] = "zip.ambiguous";
inline constexpr char kZipOverlap[] = "zip.overlap";
inline constexpr char kZipCompression[] = "zip.compression";
inline constexpr char kZipBomb[] = "zip.bomb";
inline constexpr char kZipCrc[] = "zip.crc";
inline constexpr char kZipSizes[] = "zip.sizes";
inline constexpr char kTsKind[] = "ts.kind";
inline constexpr char kTsLayout[] = "ts.layout";
inline constexpr char kTsRecords[] = "ts.records";
inline constexpr char kTsPickle[] = "ts.pickle";
inline constexpr char kTsGlobals[] = "ts.globals";
inline constexpr char kTsStorage[] = "ts.storage";
inline constexpr char kTsDevice[] = "ts.device";
inline constexpr char kTsVersion[] = "ts.version";
inline constexpr char kTsAlignment[] = "ts.alignment";
inline constexpr char kTsHooks[] = "ts.hooks";
inline constexpr char kTsMobile[] = "ts.mobile";
inline constexpr char kMetaProducer[] = "meta.producer";
inline constexpr char kCodeOps[] = "code.ops";
inline constexpr char kPt2Kind[] = "pt2.kind";
inline constexpr char kPt2Version[] = "pt2.version";
inline constexpr char kPt2Program[] = "pt2.program";
inline constexpr char kPt2Weights[] = "pt2.weights";
inline constexpr char kPt2Aoti[] = "pt2.aoti";
inline constexpr char kPt2Ops[] = "pt2.ops";
inline constexpr char kPteFormat[] = "pte.format";
inline constexpr char kPteData[] = "pte.data";
inline constexpr char kPteKernels[] = "pte.kernels";
inline constexpr char kPteDelegates[] = "pte.delegates";
inline constexpr char kPteBundled[] = "pte.bundled";
inline constexpr char kPteLoad[] = "pte.load";
inline constexpr char kPteRun[] = "pte.run";
inline constexpr char kPteFinite[] = "pte.finite";
inline constexpr char kPteDeterministic[] = "pte.deterministic";
inline constexpr char kPteCase[] = "pte.case";
inline constexpr char kPteReference[] = "pte.reference";
inline constexpr char kTorchSandbox[] = "torch.sandbox";
inline constexpr char kTorchLoad[] = "torch.load";
inline constexpr char kTorchUnsafe[] = "torch.unsafe";
inline constexpr char kTsBytecode[] = "ts.bytecode";
inline constexpr char kTorchMethod[] = "torch.method";
inline constexpr char kTorchOps[] = "torch.ops";
inline constexpr char kTorchMobile[] = "torch.mobile";
inline constexpr char kTorchRun[] = "torch.run";
inline constexpr char kTorchOutputs[] = "torch.outputs";
inline constexpr char kTorchFinite[] = "torch.finite";
inline constexpr char kTorchDeterministic[] = "torch.deterministic";
inline constexpr char kTorchStateful[] = "torch.stateful";
inline constexpr char kTorchReference[] = "torch.reference";
inline constexpr char kTorchIntermediates[] = "torch.intermediates";
}  // namespace check

// The rows of validate's table (tsctl/validate.h's CheckTable), each with
// its check: the ZIP container's (zip.*, every ZIP format's;
// validate_zip.cc), each format's (TorchScript's in validate_torchscript.cc,
// .pt2's in validate_pt2.cc, ExecuTorch's in validate_pte.cc), and what
// loading and running the model in a LibTorch child says (torch.*, one run
// yields them: no row function).
const std::vector<CheckRow>& ZipCheckRows();
const std::vector<CheckRow>& TorchScriptCheckRows();
const std::vector<CheckRow>& Pt2CheckRows();
const std::vector<CheckRow>& PteCheckRows();
const std::vector<CheckRow>& RunCheckRows();

// TorchScript's row checks that live beside their helpers: ts.records,
// ts.pickle, ts.version, ts.alignment (validate_zip.cc); ts.globals,
// ts.storage, ts.device (validate_pickle.cc); ts.hooks (validate_hooks.cc:
// custom __setstate__ hooks, run while LibTorch loads, and operators that
// read or write files or unchecked memory, from the code or bytecode; a
// FAIL keeps the archive from LibTorch, a WARN under --allow-load-hooks);
// ts.mobile (validate_mobile.cc).
void CheckTsRecords(CheckContext& c);
void CheckTsPickle(CheckContext& c);
void CheckTsVersion(CheckContext& c);
void CheckTsAlignment(CheckContext& c);
void CheckTsGlobals(CheckContext& c);
void CheckTsStorage(CheckContext& c);
void CheckTsDevice(CheckContext& c);
void CheckTsHooks(CheckContext& c);
void CheckTsMobile(CheckContext& c);

// The --allow-ops check over `ops`, as check `id` ("torch.ops" from LibTorch's
// list, "code.ops" from the static one); `how` is added to the PASS message.
void CheckAllowedOps(const std::vector<std::string>& ops, const std::vector<std::string>& allowed, const std::string& id,
                     const std::string& how, std::vector<CheckResult>& out);

// The operators a .pt2's programs call, sorted, once each (validate_pt2.cc).
std::vector<std::string> Pt2Operators(const Pt2Info& info);
// validate, after the .pt2 rows (validate_pt2.cc): the static operator list
// into report.ops, and (options.load) RunPt2InChild.
void Pt2Run(CheckContext& c);
// The operators an ExecuTorch program calls ("name.overload"), sorted,
// once each (validate_pte.cc).
std::vector<std::string> PteOperators(const PteProgram& program);
// validate, after the pte.* rows (validate_pte.cc): the file's kind and
// operators into the report, then CheckPteRun.
void PteRun(CheckContext& c);
// An ExecuTorch program loaded and run on ExecuTorch's runtime (a
// tsctl-pte-runner child, pte_child.h): pte.load, pte.run, pte.finite,
// pte.deterministic (validate_pte_run.cc).
void CheckPteRun(const std::string& path, const ValidateOptions& options, ArchiveReport& report, const ByteSource* src = nullptr);
// --reference FILE.npz|.npy or --reference-model B (a .pte or TorchScript
// archive) for an ExecuTorch program: its outputs (`outcome`'s saved .npz,
// on the inputs it saved) against the file's arrays or B's outputs on those
// inputs: pte.reference (validate_pte_reference.cc).
struct PteRunOutcome;
struct PteRunRequest;
// A request to run `program` on ExecuTorch's runtime within validate's
// limits (--timeout, default 60 s; --memory-limit; the sandbox).
PteRunRequest PteRunWithin(const std::string& program, const ValidateOptions& options);
void CheckPteReference(const ValidateOptions& options, const PteRunOutcome& outcome, std::vector<CheckResult>& out);
// A bundled program's method, as tsctl-pte-runner --bundled returns it: one
// pte.case result per test case (validate_pte_bundled.cc); `runtime_said`
// the runtime's last error line for the method.
void BundledCaseChecks(const nlohmann::json& method, const std::string& runtime_said, std::vector<CheckResult>& out);
// The torch.* checks of a .pt2 (validate_pt2_run.cc): an AOTInductor package
// loaded and run in the isolated child where the LibTorch plugin runs it
// (BuildInfo::runs_pt2_aoti); else torch.load SKIP (no runner in this
// build, the early layout, a package that failed a pt2.* check) or WARN (an
// exported program: BuildInfo::pt2_program_unavailable says why), never a
// PASS. Throws as CheckModelInChild.
void RunPt2InChild(const Archive& archive, const Pt2Info& info, const ValidateOptions& options, ArchiveReport& report);
// Whether this build runs the .pt2 `archive` (validate_pt2_run.cc), the one
// decision validate and bench take: kRuns, an AOTInductor package and a
// LibTorch that runs them (ServerInfo); else why not, in this order: no
// runner in this build, the early layout, an exported program
// (`runs.program_unavailable` says why), nothing to run. `runs`: what the
// LibTorch server said (runs_aoti false where none starts); `spec`: the
// run (Pt2RunSpecOf), read past the first two.
enum class Pt2Here { kRuns, kNoRunner, kEarly, kProgram, kNothing };
Pt2Here Pt2RunsHere(const Archive& archive, const Pt2Info& info, Pt2Support& runs, Pt2RunSpec& spec);
// Loads and runs the archive at `path` in isolated children (one per method
// checked) and appends the torch.* checks. Throws tsctl::Error of the
// child's kind for usage errors and an unavailable plugin.
void CheckModelInChild(const Archive& archive, const std::string& path, const ValidateOptions& options,
                       ModelCheckOptions m, ArchiveReport& report);
// The checks of one method's run (validate_run_checks.cc). `prefix` is ""
// for the one method, or "NAME: " when several are checked.
void RunChecks(const ModelCheckResult& r, const std::string& prefix, std::vector<CheckResult>& out);
// torch.stateful (validate_stateful.cc): the writes to the model's state its
// graph makes and what calls on one copy changed (state, outputs), a WARN
// naming each; a PASS when none. HasStatefulCheck: the child looked (its
// options set ModelCheckOptions::calls, and it loaded the method).
bool HasStatefulCheck(const ModelCheckResult& r);
CheckResult StatefulCheck(const ModelCheckResult& r, const std::string& prefix);
// m.calls and m.calls_origin: --calls N, else 3 to 5 drawn from --seed when
// it was given, else at random (the report says which, and --calls repeats it).
void ChooseCalls(const ValidateOptions& options, ModelCheckOptions& m);

// Runs the reference model `b.path` in an isolated child with `b`'s inputs and
// records its inputs and outputs ({"inputs", "outputs"}, torch.load format)
// into `reference_file`. Returns "" on success, else why nothing was recorded
// (B failed to load or run, crashed, hung, or had no inputs). Throws
// tsctl::Error for usage errors and an unavailable plugin, as CheckModelInChild.
std::string RecordReferenceModel(ModelCheckOptions b, const std::string& reference_file, const ChildLimits& limits);
// --reference-model B: B runs first, in its own child, on this archive's
// inputs (given, loaded, or stored in it), else on its own (stored in it, or
// inferred there); this archive then runs on exactly what it ran on (`m` is
// pointed at B's recording, kept in the returned file). Nothing to compare
// with is a FAIL, never a silent pass.
std::unique_ptr<TempFile> RunReferenceModel(const Archive& archive, const ValidateOptions& options, ModelCheckOptions& m,
                                            ArchiveReport& report);
// The files of a method's run: --save-reference, --record-reference (stamped
// into the archive), --save-outputs, --save-inputs; each said in a check when it could not
// be written.
void KeepRunFiles(const ValidateOptions& options, const std::string& path, const ModelCheckResult& r,
                  const std::optional<TempFile>& reference_tmp, const std::optional<TempFile>& outputs_tmp,
                  const std::optional<TempFile>& inputs_tmp, std::vector<CheckResult>& out);
// Each LibTorch child's limits, as validate's options set them.
ChildLimits LimitsOf(const ValidateOptions& o);
// What a model-check child was doing, from its last progress event:
// "loading", "running forward", or "running forward on inferred inputs
// (--arg ...)" while it tried a candidate.
std::string Doing(const std::optional<ProgressEvent>& progress, const std::string& method);
// The model check as validate's flags set it, for a TorchScript archive and a
// .pt2 alike: the run spec, the descriptor tsctl checked (LibTorch opens it,
// not whatever `path` names by then), --no-run, tolerances, --reference.
ModelCheckOptions ModelCheckBase(const Archive& archive, const std::string& path, const ValidateOptions& options);

// ts.device: `stored` counts tensors per storage location (from the pickles);
// a WARN when the code pins a CUDA device (it needs CUDA to run).
void CheckDevices(const Archive& archive, const std::map<std::string, uint64_t>& stored, std::vector<CheckResult>& out);
// Whether --device names a CUDA device ("cuda", "cuda:N").
bool IsCudaDevice(const std::string& device);
// Throws kUsage unless `device` is cpu, cuda or cuda:N.
void RequireDeviceName(const std::string& device);
// After the LibTorch checks, for code that pins a CUDA device (ts.device's
// WARN): run on `device` (--device cuda), that WARN becomes a PASS; on the
// CPU, a torch.run that failed for want of CUDA is SKIP (this machine
// cannot run it; the archive is not broken).
void JudgeCudaPinning(const std::string& device, std::vector<CheckResult>& out);

// Whether the archive is meant for the lite interpreter: it has bytecode.pkl,
// or its file name ends in .ptl.
bool LooksMobile(const Archive& archive, const std::string& path);
// ts.bytecode: a mobile archive's bytecode.pkl (what the lite interpreter
// runs) calls no operator that the loaded code does not (`graph_ops`,
// GraphOperators in the child) and none of tsctl/operators.h's unsafe ones.
// Adds bytecode.pkl's operators to `ops` (--allow-ops, --list-ops).
void CheckBytecode(const Archive& archive, const std::vector<std::string>& graph_ops, std::vector<std::string>& ops,
                   std::vector<CheckResult>& out);

// Runs one step of the checks and measures each check it appended
// (CheckResult::seconds: from the previous check's result to its own).
void TimedStep(std::vector<CheckResult>& out, const std::function<void()>& step);

// A pickle record ArchivePickles parsed.
struct ParsedPickle {
  std::string record;  // "data.pkl" or "constants.pkl"
  PyRef root;
  PickleFacts facts;
};

// A TorchScript archive's records as ts.records to ts.device read them
// (validate_zip.cc): data.pkl and constants.pkl parsed (none in the legacy
// layout), the records it lacks (required ones, storages the pickles name),
// the pickles' parse errors.
struct ArchivePickles {
  explicit ArchivePickles(CheckContext& c);
  bool legacy = false;
  std::vector<std::string> missing;
  std::vector<std::string> pickle_errors;
  std::vector<ParsedPickle> parsed;
};

// The operators the code (or bytecode.pkl) calls, read without LibTorch
// (ListOperators): ts.hooks and code.ops judge them, --no-load lists them.
struct StaticOperators {
  explicit StaticOperators(CheckContext& c);
  OperatorList list;
};

}  // namespace tsctl
