#include "bench_pt2.h"

#include "../archive/stored_inputs.h"
#include "plugin_abi.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/inputs.h"
#include "tsctl/pt2.h"
#include "tsctl/source.h"
#include "tsctl/zip_structure.h"
#include "torch_server.h"

namespace tsctl {

bool PreparePt2Bench(BenchOptions& o) {
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
  RequireOneInputSource(!o.inputs.empty() || !o.args.empty(), o.load_inputs_path);
  if (!o.inputs.empty() || !o.args.empty()) {
    if (o.input_source.empty()) o.input_source = o.args.empty() ? "--input" : o.inputs.empty() ? "--arg" : "--input/--arg";
  } else if (!o.load_inputs_path.empty()) {
    o.input_source = o.load_inputs_path;
  } else if (ArchiveInputs stored = StoredInputs(archive, spec.model); !stored.inputs.empty()) {
    o.inputs = stored.inputs;  // tsctl export's example input specs
    o.input_source = stored.source;
  } else if (!spec.guess.empty() && o.infer_inputs) {
    std::string pin;
    for (const ArgSpec& a : spec.guess) pin += " --input " + a.value;  // tensor specs: no quoting needed
    o.args = spec.guess;
    o.input_source = "inferred " + spec.guess_note + "; pin them with" + pin;
  } else {
    throw Error(ErrorKind::kUsage, "no inputs known for the AOTInductor package (" +
                                       (spec.guess_missing.empty() ? std::string("--no-infer") : spec.guess_missing) +
                                       "): pass --input SHAPE:DTYPE for each input, or --load-inputs FILE");
  }
  o.pt2 = std::move(spec);
  return true;
}

}  // namespace tsctl
