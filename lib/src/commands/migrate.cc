// tsctl migrate: tsctl's own checks and the example inputs first, then the
// conversion and its verification in a Python child, then the provenance
// record stamped into what torch wrote and the file moved into place.
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "check_before_load.h"
#include "example_inputs.h"
#include "plugin_abi.h"
#include "temp_dir.h"
#include "torch_child.h"
#include "tsctl/archive.h"
#include "tsctl/bench.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/migrate.h"
#include "tsctl/source.h"
#include "tsctl/stamp.h"
#include "tsctl/text_util.h"
#include "tsctl/torch_backend.h"
#include "zip_model.h"

namespace tsctl {
namespace {

// What to do about a blocker, for the kinds the converter or the checks name
// (`intermediates`: --compare-intermediates was given).
std::string AdviceFor(const std::string& kind, bool intermediates = false) {
  if (kind == "prim::Loop") {
    return "a loop whose trip count depends on an input: unroll it for the shapes served, or export the Python "
           "model with torch.export (tsctl export) where the loop is traced";
  }
  if (kind == "prim::SetAttr") return "state written while running: keep it in a buffer returned as an output";
  if (kind == "prim::If") return "a branch the converter cannot express: rewrite it with torch.cond in the Python model";
  if (kind == "wrong result") {
    return intermediates ? "the program computes another result from the node named under checks on: export from Python"
                         : "the program computes another result: --compare-intermediates names the first node that "
                           "differs; or export from Python";
  }
  if (kind == "refused shape") {
    return "the program refuses a shape it claims dynamic: export from Python with torch.export.Dim bounds";
  }
  if (kind == "load") return "the embedded torch cannot load the archive (tsctl validate says why)";
  if (kind == "static checks") {
    return "tsctl validate fails it without loading it (the error names the checks); --allow-load-hooks loads an "
           "archive whose only finding is ts.hooks";
  }
  if (kind == "no tensor inputs") return "give the sample inputs: --input SHAPE[:DTYPE] per argument, or --load-inputs FILE";
  return "";
}

// A TorchScript archive, checked by tsctl's reader before Python sees it:
// sound, and passing validate's static checks (CheckBeforeLoad).
Archive CheckedSource(const MigrateOptions& o) {
  RequireRegularFile(o.path, "migrate converts");
  Archive archive = Archive::OpenSoundModel(o.path);
  if (const char* refusal = ZipModelOf(archive).migrate_refusal; *refusal) throw Error(ErrorKind::kUsage, refusal);
  if (o.output.empty()) throw Error(ErrorKind::kUsage, "give -o OUT.pt2 (or --out-dir DIR for many archives)");
  std::error_code ec;
  if (std::filesystem::equivalent(o.path, o.output, ec)) {
    throw Error(ErrorKind::kUsage, "-o names the archive itself; migrate writes a new file");
  }
  RequireLoadable(archive, o.path, o.allow_load_hooks);
  return archive;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The provenance record: where the program came from and how it was checked.
std::string ProvenanceRecord(const MigrateResult& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const MigrateCheck& c : r.checks) {
    checks.push_back({{"inputs", c.inputs}, {"matched", c.matched}, {"skipped", c.skipped}, {"max_abs", c.max_abs},
                      {"max_rel", c.max_rel}, {"error", c.error}});
  }
  nlohmann::json j = {{"source", std::filesystem::path(r.path).filename().string()},
                      {"source_sha256", r.sha256},
                      {"torch", r.torch_version},
                      {"tsctl", TSCTL_VERSION},
                      {"converter", r.converter},
                      {"inputs", r.inputs},
                      {"input_source", r.input_source},
                      {"verified", r.verified},
                      {"checks", checks},
                      {"dynamic", r.dynamic}};
  return j.dump(2) + "\n";
}

// --bench's figures: each form's median (bench's statistics) and its ratio
// to the archive's.
void Summarize(std::vector<MigrateBenchForm>& forms) {
  for (MigrateBenchForm& f : forms) {
    BenchResult timed;
    timed.latencies_ns = f.latencies_ns;
    f.median_ns = f.latencies_ns.empty() ? 0 : ComputeStats(timed, {}).median;
  }
  const double base = forms.empty() ? 0 : forms.front().median_ns;
  for (MigrateBenchForm& f : forms) f.ratio = base > 0 && f.median_ns > 0 ? f.median_ns / base : 0;
}

}  // namespace

const char* MigrateStageName(MigrateStage stage) {
  switch (stage) {
    case MigrateStage::kNone: return "not loaded";
    case MigrateStage::kLoaded: return "loaded";
    case MigrateStage::kInputs: return "inputs found";
    case MigrateStage::kConverted: return "converted";
    case MigrateStage::kVerifiedSample: return "verified on the sample";
    case MigrateStage::kVerifiedShapes: return "verified on other shapes";
    case MigrateStage::kPackaged: return "packaged";
  }
  return "not loaded";
}

const char* MigrateStageKey(MigrateStage stage) {
  switch (stage) {
    case MigrateStage::kNone: return "none";
    case MigrateStage::kLoaded: return "loaded";
    case MigrateStage::kInputs: return "inputs";
    case MigrateStage::kConverted: return "converted";
    case MigrateStage::kVerifiedSample: return "verified_sample";
    case MigrateStage::kVerifiedShapes: return "verified_shapes";
    case MigrateStage::kPackaged: return "packaged";
  }
  return "none";
}

MigrateResult MigrateRefused(const std::string& path, const Error& error) {
  MigrateResult r;
  r.path = path;
  r.error = error.what();
  const std::string& m = r.error;
  std::string kind;
  if (m.find("needs example inputs") != std::string::npos || m.find("not all tensors") != std::string::npos) {
    kind = "no tensor inputs";
  } else if (m.find("LibTorch cannot load it") != std::string::npos || error.kind() == ErrorKind::kTorch) {
    kind = "load";
  } else if (error.kind() == ErrorKind::kRefused) {
    kind = "static checks";
  } else if (error.kind() == ErrorKind::kFormat) {
    kind = "not a TorchScript archive";
  } else if (error.kind() == ErrorKind::kIo) {
    kind = "unreadable";
  } else if (error.kind() == ErrorKind::kUnavailable) {
    kind = "unavailable";
  } else {
    kind = "refused";
  }
  r.blockers.push_back({kind, "", "", AdviceFor(kind)});
  return r;
}

MigrateResult Migrate(const MigrateOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const Archive archive = CheckedSource(o);
  if (!PythonPluginBuilt()) {
    throw Error(ErrorKind::kUnavailable,
                "migrate runs torch's converter in Python: this tsctl was built without Python support; "
                "scripts/build_torch2.sh builds a tsctl on PyTorch 2.x with it (build-torch2/bin/tsctl, docs/manual/building.md)");
  }
  RunSpec spec = o;
  spec.method = "forward";
  const ExampleInputs example = FindExampleInputs(archive, o.path, spec, "migrating");
  if (example.inputs.empty() && example.load_inputs_path.empty()) {
    throw Error(ErrorKind::kUsage, "migrating needs example inputs: give --input SHAPE[:DTYPE] per argument or --load-inputs");
  }
  TempDir work("tsctl-migrate");
  PythonRequest p;
  static_cast<RunSpec&>(p) = spec;
  p.inputs = example.inputs;
  p.load_inputs_path = example.load_inputs_path;
  p.file = o.path;
  p.mode = "migrate";
  p.rtol = o.rtol;
  p.atol = o.atol;
  p.aoti = o.aoti;
  p.keep_unverified = o.keep_unverified;
  p.compare_intermediates = o.compare_intermediates;
  if (o.bench) {
    if (o.bench_iters < 1) throw Error(ErrorKind::kUsage, "--bench-iters must be at least 1");
    p.bench_iters = o.bench_iters;
  }
  // torch names the archive's top folder after the file it writes.
  std::string base = std::filesystem::path(o.output).filename().string();
  if (!IsValidUtf8(base)) base = "model.pt2";
  p.output = work.path + "/" + base;
  ChildLimits limits;
  limits.timeout_seconds = o.timeout_seconds;
  limits.memory_bytes = MachineMemoryBytes();  // AOTInductor runs the C++ compiler
  limits.threads = o.torch_threads;
  const double inputs_seconds = SecondsSince(start);
  MigrateResult r = RunTorchChild(PythonMigrateRequest{.request = p}, limits).Take<MigrateResult>("migrating " + o.path);
  r.path = o.path;
  r.timings.insert(r.timings.begin(), {"inputs", inputs_seconds});
  r.input_source = example.source.empty() ? "--input" : example.source;
  for (MigrateBlocker& b : r.blockers) b.advice = AdviceFor(b.kind, o.compare_intermediates);
  Summarize(r.bench);
  if (r.written) {
    StampOptions stamp;
    stamp.set = {{"written_by", "tsctl migrate"}};
    stamp.files = {{kMigrateRecord, ProvenanceRecord(r)}};
    // The sample's specs where it had some, as tsctl export stamps them: a
    // later `tsctl validate OUT.pt2` runs the package on them instead of
    // guessing from its wrapper's input checks.
    if (!r.inputs.empty()) stamp.files.push_back({kInputsRecord, nlohmann::json({{"model", r.inputs}}).dump() + "\n"});
    stamp.output = o.output;
    const auto stamping = std::chrono::steady_clock::now();
    Stamp(p.output, stamp);
    r.output = o.output;
    r.timings.push_back({"provenance record", SecondsSince(stamping)});
  }
  r.seconds = SecondsSince(start);
  return r;
}

}  // namespace tsctl
