#include "bench_pt2.h"

#include "apply_inputs.h"
#include "check_before_load.h"
#include "plugin_abi.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/pt2.h"
#include "tsctl/source.h"
#include "tsctl/zip_structure.h"
#include "torch_server.h"

namespace tsctl {

bool PreparePt2Bench(BenchOptions& o, ResolvedInputs& in, std::optional<Archive>& checked) {
  RequireRegularFile(o.path, "LibTorch loads");
  Archive archive = Archive::OpenModel(OpenFileSource(o.path));
  if (!IsPt2(archive.kind())) return false;
  RequireSoundStructure(archive.layout());
  Pt2Support runs;
  try {
    runs = ServerInfo().pt2;
  } catch (const Error&) {
    runs.runs_aoti = false;
  }
  const Pt2Info info = ReadPt2(archive);
  Pt2RunSpec spec = Pt2RunSpecOf(archive, info);
  if (!runs.runs_aoti || archive.kind() == ArchiveKind::kPt2Early || spec.kind == Pt2RunSpec::Kind::kNone) {
    Archive::Open(OpenFileSource(o.path));  // throws the one line for this kind (exit 6)
  }
  if (spec.kind == Pt2RunSpec::Kind::kProgram) {
    throw Error(ErrorKind::kUnavailable, "a .pt2 exported program: " + runs.program_unavailable);
  }
  RequireLoadable(archive, o.path, o.allow_load_hooks);
  const std::string model = spec.model;
  in = ResolveInputs(archive, o, {.key = model, .pt2 = true, .pt2_guess = spec.guess, .pt2_guess_note = spec.guess_note});
  if (in.origin == InputOrigin::kNone || (in.origin == InputOrigin::kInferred && in.args.empty())) {
    throw Error(ErrorKind::kUsage, "no inputs known for the AOTInductor package (" +
                                       (spec.guess_missing.empty() ? std::string("--no-infer") : spec.guess_missing) +
                                       "): pass --input SHAPE:DTYPE for each input, or --load-inputs FILE");
  }
  o.pt2 = std::move(spec);
  ApplyResolved(in, o);
  o.load_path = CheckedLoadPath(archive);
  checked.emplace(std::move(archive));
  return true;
}

}  // namespace tsctl
