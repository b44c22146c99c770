// ResolveInputs: where a run's arguments come from, for validate, bench,
// trace and the .pt2 runs alike.
#include <fstream>

#include "../archive/stored_inputs.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/run_spec.h"
#include "torch_child.h"

namespace tsctl {
namespace {

// "--input", "--arg" or "--input/--arg".
std::string GivenFlags(const RunSpec& spec) {
  if (spec.args.empty()) return "--input";
  return spec.inputs.empty() ? "--arg" : "--input/--arg";
}

// The bytes of a record in a temporary file the child reads.
void ToFile(ResolvedInputs& r, const std::string& bytes) {
  r.temp = std::make_shared<TempFile>();
  std::ofstream(r.temp->path, std::ios::binary) << bytes;
  r.file = r.temp->path;
}

}  // namespace

const char* InputOriginName(InputOrigin origin) {
  switch (origin) {
    case InputOrigin::kGiven: return "given";
    case InputOrigin::kLoaded: return "loaded";
    case InputOrigin::kDataLoader: return "data loader";
    case InputOrigin::kReference: return "reference";
    case InputOrigin::kRecorded: return "recorded";
    case InputOrigin::kSample: return "sample";
    case InputOrigin::kStored: return "stored";
    case InputOrigin::kInferred: return "inferred";
    case InputOrigin::kNone: return "none";
  }
  return "none";
}

ResolvedInputs ResolveInputs(const Archive& archive, const RunSpec& spec, const ResolveContext& context) {
  const bool given = !spec.inputs.empty() || !spec.args.empty();
  RequireOneInputSource(given, spec.load_inputs_path);
  ResolvedInputs r;
  if (!spec.data_loader.empty()) {
    RequireOneDataSource(given, "");  // load_inputs_path beside it is the loader's own file (RunSpec)
    r.origin = InputOrigin::kDataLoader;
    r.source = "--data-loader-script " + spec.data_loader;
    if (!spec.load_inputs_path.empty()) {
      r.file = spec.load_inputs_path;  // the caller ran it once for many archives
    } else {
      std::unique_ptr<TempFile> loaded = RunDataLoader(spec.data_loader, spec.timeout_seconds);
      r.file = loaded->path;
      r.temp = std::move(loaded);
    }
    return r;
  }
  if (given) {
    r.origin = InputOrigin::kGiven;
    r.inputs = spec.inputs;
    r.args = spec.args;
    r.source = GivenFlags(spec);
    return r;
  }
  if (!spec.load_inputs_path.empty()) {
    r.origin = InputOrigin::kLoaded;
    r.file = spec.load_inputs_path;
    r.source = spec.load_inputs_path;
    return r;
  }
  if (!context.reference_path.empty()) {
    r.origin = InputOrigin::kReference;
    r.source = context.reference_path;
    return r;
  }
  if (context.key.empty()) {  // validate -m all: each method's own, in the child
    r.origin = spec.infer_inputs ? InputOrigin::kInferred : InputOrigin::kNone;
    return r;
  }
  if (context.key == "forward" || context.pt2) {
    if (std::string bytes = RecordedInputs(archive); !bytes.empty()) {
      r.origin = InputOrigin::kRecorded;
      r.source = kRecordedReference;
      if (std::string origin = RecordedInputsOrigin(archive); !origin.empty()) r.source += ", " + origin;
      ToFile(r, bytes);
      return r;
    }
  }
  if (context.pt2) {
    const std::string sample = "data/sample_inputs/" + context.key + ".pt";
    if (archive.Has(sample)) {
      r.origin = InputOrigin::kSample;
      r.source = sample;
      ToFile(r, archive.Read(sample, uint64_t{1} << 30));
      return r;
    }
  }
  if (ArchiveInputs stored = StoredInputs(archive, context.key); !stored.inputs.empty()) {
    r.origin = InputOrigin::kStored;
    r.inputs = stored.inputs;
    r.source = stored.source;
    return r;
  }
  if (!spec.infer_inputs) return r;  // kNone
  r.origin = InputOrigin::kInferred;
  if (context.pt2 && !context.pt2_guess.empty()) {
    r.args = context.pt2_guess;
    std::string pin;
    for (const ArgSpec& a : context.pt2_guess) pin += " --input " + a.value;  // tensor specs: no quoting needed
    r.source = "inferred " + context.pt2_guess_note + "; pin them with" + pin;
  }
  return r;
}

}  // namespace tsctl
