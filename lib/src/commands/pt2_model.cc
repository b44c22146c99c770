// .pt2 archives' row of the ZIP formats (zip_model.h): their programs read
// from the JSON (inspect, report's graphs), the pt2.* checks before a load,
// and what bench checks and fills in before the child times an AOTInductor
// package.
#include "apply_inputs.h"
#include "check_before_load.h"
#include "inspect_internal.h"
#include "plugin_abi.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/pt2.h"
#include "tsctl/report_graph.h"
#include "tsctl/source.h"
#include "tsctl/zip_structure.h"
#include "torch_server.h"
#include "validate_internal.h"
#include "zip_model.h"

namespace tsctl {
namespace {

bool ClaimsPt2(const Archive& archive) { return IsPt2(archive.kind()); }

void Pt2Graphs(const Archive& archive, const ReportOptions&, ReportContents& report) {
  try {
    report.graphs = Pt2ReportGraphs(archive);
  } catch (const Error& e) {
    report.graphs = {};
    report.graphs.note = std::string("The graph could not be read: ") + e.what();
  }
}

// Checks that this build runs the package (else tsctl::Error kUnavailable,
// one line saying why) and that it passes validate's static checks (else
// kRefused, CheckBeforeLoad); fills options.pt2 and the inputs
// ResolveInputs finds (kUsage if there are none). kFormat for a damaged
// ZIP structure.
Archive PreparePt2Bench(Archive archive, BenchOptions& o, ResolvedInputs& in) {
  RequireSoundStructure(archive.layout());
  const Pt2Info info = ReadPt2(archive);
  Pt2Support runs;
  Pt2RunSpec spec;
  switch (Pt2RunsHere(archive, info, runs, spec)) {
    case Pt2Here::kProgram: throw Error(ErrorKind::kUnavailable, "a .pt2 exported program: " + runs.program_unavailable);
    case Pt2Here::kRuns: break;
    default: Archive::Open(OpenFileSource(o.path));  // throws the one line for this kind (exit 6)
  }
  const std::string load_path = CheckForLibTorch(archive, o.path, o.allow_load_hooks);
  const std::string model = spec.model;
  in = ResolveInputs(archive, o, {.key = model, .pt2 = true, .pt2_guess = spec.guess, .pt2_guess_note = spec.guess_note});
  if (in.origin == InputOrigin::kNone || (in.origin == InputOrigin::kInferred && in.args.empty())) {
    throw Error(ErrorKind::kUsage, "no inputs known for the AOTInductor package (" +
                                       (spec.guess_missing.empty() ? std::string("--no-infer") : spec.guess_missing) +
                                       "): pass --input SHAPE:DTYPE for each input, or --load-inputs FILE");
  }
  o.pt2 = std::move(spec);
  ApplyResolved(in, o);
  o.load_path = load_path;
  return archive;
}

// The early layout (serialized_exported_program.json) has no extra/ folder.
void RefusePt2Stamp(const Archive& archive) {
  if (archive.kind() == ArchiveKind::kPt2Early) {
    throw Error(ErrorKind::kUnavailable,
                "an early .pt2 exported program (serialized_exported_program.json) has no extra/ records to stamp");
  }
}

}  // namespace

const ZipModel kPt2Model = {
    .name = "pt2",
    .claims = ClaimsPt2,
    .read = inspect_internal::ReadPt2Archive,
    .checks = Pt2CheckRows,
    .rows_block_loading = true,
    .report_graphs = Pt2Graphs,
    .report_inputs = nullptr,
    .prepare_bench = PreparePt2Bench,
    .migrate_refusal = "already a .pt2 (migrate converts TorchScript archives)",
    .refuse_stamp = RefusePt2Stamp,
};

}  // namespace tsctl
