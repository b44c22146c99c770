// TorchScript archives (torch.jit.save's ZIP; the legacy model.json layout of
// PyTorch 1.0): their row of tsctl/format.h. TorchScript is the ZIP format
// every ZIP that is no other format's is judged as (validate's ts.kind says
// what it is instead).
#include <memory>

#include "../../commands/apply_inputs.h"
#include "../../commands/check_before_load.h"
#include "../../commands/check_context.h"
#include "../../commands/validate_internal.h"
#include "../../text/json_util.h"
#include "../check_table.h"
#include "../../commands/zip_model.h"
#include "../zip_formats.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/format.h"
#include "tsctl/inputs.h"
#include "tsctl/inspect.h"
#include "tsctl/operators.h"
#include "tsctl/report.h"
#include "tsctl/torch_backend.h"

namespace tsctl {
namespace {

std::string TorchScriptGraph(const OpenedFile&, const GraphOptions& options, OutputFormat) { return Graph(options); }

std::string TorchScriptCode(const OpenedFile& file, const CodeQuery& query) { return StoredCode(SoundArchive(file), query); }

// What tsctl itself finds unreadable or out of bounds is not handed to
// LibTorch (a lying pickle or storage can make it allocate gigabytes or read
// past a buffer): the failed checks that keep it from loading.
std::string RefusedBy(const std::vector<CheckResult>& out) {
  std::string ids;
  for (const CheckResult& c : out) {
    const CheckRow* row = CheckRowOf(c.id);
    if (c.status == CheckStatus::kFail && row && row->blocks_loading) ids += (ids.empty() ? "" : ", ") + c.id;
  }
  return ids;
}

// The model check's options as validate's flags set them, with the inputs
// ResolveInputs finds (`inputs_file` keeps a file it wrote alive).
ModelCheckOptions ModelCheckOf(const Archive& archive, const std::string& path, const ValidateOptions& options,
                               std::shared_ptr<TempFile>& inputs_file) {
  ModelCheckOptions m = ModelCheckBase(archive, path, options);
  m.reference_from_archive = options.reference_path.empty() && archive.Has(kReferenceRecordPath);
  // The lite interpreter is tried on what has bytecode; a .ptl without it has
  // its one WARN from ts.mobile already (the child would only add "file not
  // found" for the same cause).
  m.check_mobile = archive.Has("bytecode.pkl");
  m.ranges_for_any_method = options.method == "all";
  if (!options.run) return m;
  // The reference (given, or the archive's record) holds the inputs it was made on.
  const std::string reference = m.reference_from_archive ? kReferenceRecordPath : options.reference_path;
  ResolvedInputs in = ResolveInputs(archive, options, {.reference_path = reference, .key = options.method == "all" ? "" : options.method});
  ApplyResolved(in, m);
  if (m.reference_from_archive && in.origin == InputOrigin::kReference) {
    if (std::string origin = RecordedInputsOrigin(archive); !origin.empty()) m.input_source += ", " + origin;
  }
  inputs_file = in.temp;
  return m;
}

// validate, after the TorchScript rows: LibTorch's load and run (a child),
// unless a blocking check failed; with --no-load, the operators the code
// (or bytecode.pkl) calls.
void TorchScriptRun(CheckContext& c) {
  if (c.stop) return;
  const ValidateOptions& options = c.options;
  ArchiveReport& report = c.report;
  auto& out = report.checks;
  if (!options.load) {
    const OperatorList& ops = c.Facts<StaticOperators>().list;
    report.ops = ops.Names();
    Json(report.details)["operators_source"] = ops.totals_source;
    return;
  }
  if (std::string refused = RefusedBy(out); !refused.empty()) {
    c.Add({check::kTorchLoad, CheckStatus::kSkip, "not run: LibTorch is not given an archive that fails " + refused});
    return;
  }
  // LibTorch work, in a child process.
  std::shared_ptr<TempFile> inputs_file;
  ModelCheckOptions m = ModelCheckOf(*c.archive, c.path, options, inputs_file);
  TimedStep(out, [&] { CheckModelInChild(*c.archive, c.path, options, m, report); });
  JudgeCudaPinning(options.device, out);
}

}  // namespace

extern const Format kTorchScriptFormat;
const Format kTorchScriptFormat = {
    .name = "torchscript",
    .extensions = {},
    .zip = &kTorchScriptModel,
    .inspect = InspectZipArchive,
    .graph = TorchScriptGraph,
    .stored_code = TorchScriptCode,
    .report_page = ZipArchivePage,
    .checks = TorchScriptCheckRows(),
    .run = TorchScriptRun,
    .compat = TorchScriptNeeds,
};

}  // namespace tsctl
