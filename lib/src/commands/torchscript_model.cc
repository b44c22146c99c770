// TorchScript archives' row of the ZIP formats (zip_model.h): their model
// read from code/, data.pkl and constants.pkl (or a legacy model.json), the
// ts.* checks before a load, forward's graph from the LibTorch child, the
// inputs they keep, and bench's checks.
#include <map>
#include <utility>

#include "../text/units.h"
#include "apply_inputs.h"
#include "check_before_load.h"
#include "find_inputs.h"
#include "inspect_internal.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/report_graph.h"
#include "tsctl/zip_structure.h"
#include "validate_internal.h"
#include "zip_model.h"

namespace tsctl {
namespace {

void ModuleTensors(const ModuleInfo& m, std::vector<const TensorInfo*>& out) {
  for (const TensorInfo& t : m.tensors) out.push_back(&t);
  for (const ModuleInfo& c : m.children) ModuleTensors(c, out);
}

// The code, the module tree, and the totals by dtype and device over the
// module's tensors and the constants.
void ReadTorchScript(const Archive& a, ArchiveInfo& info) {
  inspect_internal::ReadCode(a, info);
  inspect_internal::ReadModules(a, info);
  std::vector<const TensorInfo*> all;
  if (info.module) ModuleTensors(*info.module, all);
  for (const TensorInfo& t : info.constants) all.push_back(&t);
  std::map<std::pair<std::string, std::string>, TotalInfo> totals;
  for (const TensorInfo* t : all) {
    TotalInfo& tot = totals[{t->dtype, t->device}];
    tot.dtype = t->dtype;
    tot.device = t->device;
    tot.tensors += 1;
    tot.numel += t->numel;
    tot.bytes += t->bytes;
    info.tensor_bytes += t->bytes;
  }
  for (auto& [k, v] : totals) info.totals.push_back(v);
}

// Forward's graph, from the LibTorch child (ReportOptions::torchscript_graph).
void TorchScriptGraphs(const Archive& archive, const ReportOptions& options, ReportContents& report) {
  using Mode = ReportOptions::TorchScriptGraph;
  const char* how = "tsctl report --graph always draws it, tsctl graph --inlined prints it.";
  if (options.torchscript_graph == Mode::kNever || options.path.empty() || options.path == "-") {
    report.graphs.note = std::string("A TorchScript method's graph is LibTorch's to make; not asked for: ") + how;
    return;
  }
  if (options.torchscript_graph == Mode::kAuto && archive.source().Size() > options.auto_graph_bytes) {
    report.graphs.note = "Not drawn: the archive is larger than " + Grouped(options.auto_graph_bytes >> 20) +
                         " MiB, and loading it in LibTorch takes time; " + how;
    return;
  }
  try {
    report.graphs = TorchScriptReportGraphs(options.path, "forward", 120, options.allow_load_hooks);
  } catch (const Error& e) {
    if (options.torchscript_graph == Mode::kAlways) throw;
    report.graphs = {};
    // An archive that fails validate's static checks (kRefused) is not
    // loaded: the page is drawn without it, the note names the checks.
    report.graphs.note = std::string("No graph: ") + e.what();
  }
}

void StoredInputs(const Archive& archive, ReportContents& report) {
  try {
    report.stored_inputs = InputsFromArchive(archive, "forward");
  } catch (const Error& e) {
    report.warnings.push_back(std::string("stored inputs: ") + e.what());
  }
}

// The arguments by ResolveInputs; when none are kept, a child looks
// (bundled inputs, then inferred candidates). None found is fine for a
// method without arguments; the backend says what to pass otherwise, with
// the method's schema.
Archive PrepareTorchScriptBench(Archive archive, BenchOptions& o, ResolvedInputs& in) {
  RequireSoundStructure(archive.layout());
  o.load_path = CheckForLibTorch(archive, o.path, o.allow_load_hooks);
  in = ResolveInputs(archive, o, {.key = o.method});
  ApplyResolved(in, o);
  if (in.origin == InputOrigin::kInferred) {
    std::function<void(long, const std::string&)> progress;
    if (o.progress) {
      progress = [&o](long k, const std::string& flags) {
        o.progress({.kind = ProgressEvent::Kind::kInputs, .text = flags, .done = k});
      };
    }
    FoundInputs found = FindInputs(o.path, o, progress, o.load_path);
    // Not found: the backend says what the method takes (or that it does
    // not exist); `why` says what was tried.
    if (!found.found && !found.why.empty()) throw Error(ErrorKind::kUsage, found.why);
    o.args = found.args;
    o.input_source = DescribeFound(found);
  }
  return archive;
}

bool ClaimsTorchScript(const Archive&) { return true; }

}  // namespace

const ZipModel kTorchScriptModel = {
    .name = "torchscript",
    .claims = ClaimsTorchScript,
    .read = ReadTorchScript,
    .checks = TorchScriptCheckRows,
    .report_graphs = TorchScriptGraphs,
    .report_inputs = StoredInputs,
    .prepare_bench = PrepareTorchScriptBench,
    .migrate_refusal = "",
    .refuse_stamp = nullptr,
};

}  // namespace tsctl
