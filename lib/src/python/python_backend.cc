// The embedded CPython behind tsctl trace --python, tsctl script --python, tsctl export and tsctl migrate.
#include <dlfcn.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <torch/script.h>

#include <mutex>

#include "backend.h"
#include "embed_py.h"  // kEmbedPy: embed.py, generated at build time
#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "plugin_abi.h"

namespace py = pybind11;

namespace tsctl {
namespace {

std::string OurLibTorch() {
  Dl_info dl{};
  if (dladdr(reinterpret_cast<void*>(&at::globalContext), &dl) != 0 && dl.dli_fname) return dl.dli_fname;
  return {};
}

// A Python string as bytes: UTF-8, with the surrogates os.fsdecode made of
// a file name's undecodable bytes turned back into those bytes (printing
// escapes them); any other lone surrogate as a backslash escape.
std::string Text(const py::handle& o) {
  py::str s(o);
  try {
    return s.attr("encode")("utf-8", "surrogateescape").cast<std::string>();
  } catch (py::error_already_set&) {
    return s.attr("encode")("utf-8", "backslashreplace").cast<std::string>();
  }
}

// Input specs as embed.py's tuples: the whole typed spec, fill included, so
// that Python makes the same values the spec describes (zeros, ones,
// randint LOW..HIGH, a constant, uniform LOW..HIGH).
py::list SpecList(const std::vector<InputSpec>& specs) {
  py::list l;
  static const char* const kFill[] = {"random", "zeros", "ones", "randint", "fill", "uniform"};
  for (const auto& s : specs) {
    l.append(py::make_tuple(py::cast(s.shape), s.dtype, s.channels_last, kFill[static_cast<int>(s.fill)], s.low, s.high,
                            s.value, s.ToString()));
  }
  return l;
}

// embed.migrate's answer as a MigrateResult.
MigrateResult MigrateResultOf(const py::dict& out) {
  MigrateResult r;
  static const std::pair<const char*, MigrateStage> kStages[] = {
      {"loaded", MigrateStage::kLoaded},
      {"inputs", MigrateStage::kInputs},
      {"converted", MigrateStage::kConverted},
      {"verified_sample", MigrateStage::kVerifiedSample},
      {"verified_shapes", MigrateStage::kVerifiedShapes},
      {"packaged", MigrateStage::kPackaged}};
  const std::string stage = Text(out["stage"]);
  for (const auto& [key, value] : kStages) {
    if (stage == key) r.stage = value;
  }
  r.verified = out["verified"].cast<bool>();
  r.written = out["written"].cast<bool>();
  r.error = Text(out["error"]);
  for (const auto& b : out["blockers"]) {
    r.blockers.push_back({Text(b["kind"]), Text(b["node"]), Text(b["where"]), ""});
  }
  for (const auto& c : out["checks"]) {
    MigrateCheck& check = r.checks.emplace_back();
    check = {Text(c["inputs"]), c["matched"].cast<bool>(), Text(c["skipped"]), c["max_abs"].cast<double>(),
             c["max_rel"].cast<double>(), Text(c["error"]), {}, {}};
    for (const auto& o : c["outputs"]) {
      check.outputs.push_back({Text(o["name"]), o["max_abs"].cast<double>(), o["max_rel"].cast<double>()});
    }
    if (c.contains("divergence") && !c["divergence"].is_none()) {
      const py::dict d = c["divergence"].cast<py::dict>();
      check.divergence = {d["compared"].cast<bool>(), Text(d["node"]),          Text(d["where"]),
                          Text(d["program_node"]),    d["max_abs"].cast<double>(), d["matched"].cast<int>(),
                          d["agreed"].cast<int>(),    Text(d["note"])};
    }
  }
  for (const auto& t : out["timings"]) r.timings.push_back({Text(t["step"]), t["seconds"].cast<double>()});
  for (const auto& d : out["dynamic"]) r.dynamic.push_back(Text(d));
  for (const auto& w : out["warnings"]) r.warnings.push_back(Text(w));
  for (const auto& b : out["bench"]) {
    MigrateBenchForm& form = r.bench.emplace_back();
    form.form = Text(b["form"]);
    form.error = Text(b["error"]);
    for (const auto& t : b["latencies_ns"]) form.latencies_ns.push_back(t.cast<uint64_t>());
  }
  r.bench_warmup = out["bench_warmup"].cast<int>();
  r.converter = Text(out["converter"]);
  r.torch_version = Text(out["torch"]);
  r.sha256 = Text(out["sha256"]);
  return r;
}

class Backend final : public PythonBackend {
 public:
  std::string Describe() const override {
    std::lock_guard<std::mutex> lock(mu_);
    Start();
    return Text(py::module_::import("sys").attr("version")).substr(0, 6) + " (" +
           Text(py::module_::import("sys").attr("executable")) + ")";
  }

  MakeResult Make(const PythonRequest& r) const override {
    std::lock_guard<std::mutex> lock(mu_);
    Start();
    CreateTorchBackend();  // the producer record hook, before torch.jit.save runs
    MakeResult result;
    result.output = r.output;
    for (const auto& i : r.inputs) result.inputs.push_back(i.ToString());
    try {
      std::string refusal = Text(embed_.attr("check_torch")(py::bytes(OurLibTorch())));
      if (!refusal.empty()) throw Error(ErrorKind::kUnavailable, refusal);
      py::list checks;
      for (const auto& c : r.check_inputs) checks.append(SpecList(c));
      const bool exporting = r.mode == "export";
      // Paths and names as bytes: embed.py decodes them as os.fsdecode does.
      const py::bytes file(r.file), name(r.name);
      py::dict out = exporting ? embed_.attr("export")(file, name, SpecList(r.inputs), checks, r.aoti, r.dynamic_batch,
                                                       r.strict, r.rtol, r.atol, py::bytes(r.output))
                               : embed_.attr("make")(file, name, r.mode, SpecList(r.inputs), checks, r.freeze, r.rtol, r.atol);
      result.diverged = out["diverged"].cast<bool>();
      for (const auto& w : out["warnings"]) result.warnings.push_back(Text(w));
      size_t k = 0;
      for (const auto& c : out["checks"]) {
        CheckReport rep;
        std::string text;
        // The check sets come back in the order given: their specs as typed.
        if (k < r.check_inputs.size()) {
          for (const InputSpec& spec : r.check_inputs[k]) text += (text.empty() ? "" : ", ") + spec.ToString();
        }
        ++k;
        rep.inputs = text;
        rep.matched = c["matched"].cast<bool>();
        rep.max_abs = c["max_abs"].cast<double>();
        rep.error = Text(c["error"]);
        result.checks.push_back(rep);
      }
      if (exporting) {
        // The caller stamps the file torch wrote and moves it into place.
        result.format = r.aoti ? "pt2-aoti" : "pt2-program";
        for (const auto& m : out["models"]) result.methods.push_back(Text(m));
        for (const auto& d : out["dynamic"]) result.dynamic.push_back(Text(d));
        return result;
      }
      if (result.diverged) return result;
      for (const auto& m : out["methods"]) result.methods.push_back(Text(m));
      std::string bytes = out["bytes"].cast<std::string>();
      WriteFileAtomically(r.output, bytes);
      result.bytes = bytes.size();
    } catch (py::error_already_set& e) {
      throw FromPython(e);
    }
    return result;
  }

  MigrateResult Migrate(const PythonRequest& r) const override {
    std::lock_guard<std::mutex> lock(mu_);
    Start();
    try {
      std::string refusal = Text(embed_.attr("check_torch")(py::bytes(OurLibTorch())));
      if (!refusal.empty()) throw Error(ErrorKind::kUnavailable, refusal);
      py::dict out = embed_.attr("migrate")(py::bytes(r.file), SpecList(r.inputs), py::bytes(r.load_inputs_path), r.aoti,
                                            r.keep_unverified, r.rtol, r.atol, py::bytes(r.output), r.bench_iters,
                                            r.compare_intermediates);
      MigrateResult result = MigrateResultOf(out);
      result.path = r.file;
      for (const auto& i : r.inputs) result.inputs.push_back(i.ToString());
      return result;
    } catch (py::error_already_set& e) {
      throw FromPython(e);
    }
  }

  std::pair<std::string, std::string> LoadData(const std::string& file, const std::string& name) const override {
    std::lock_guard<std::mutex> lock(mu_);
    Start();
    try {
      std::string refusal = Text(embed_.attr("check_torch")(py::bytes(OurLibTorch())));
      if (!refusal.empty()) throw Error(ErrorKind::kUnavailable, refusal);
      py::tuple out = embed_.attr("load_data")(py::bytes(file), py::bytes(name));
      return {Text(out[0]), out[1].cast<std::string>()};
    } catch (py::error_already_set& e) {
      throw FromPython(e);
    }
  }

 private:
  // A Python exception as one line: embed.py's UsageError and IoError say
  // it plainly; anything else is prefixed with its type.
  static Error FromPython(py::error_already_set& e) {
    std::string type = e.type() ? Text(e.type().attr("__name__")) : "Error";
    std::string message = Text(e.value());
    // The first line that says something: torch's compiler errors start with
    // a blank line and continue with source excerpts.
    std::string first;
    size_t pos = 0;
    while (first.empty() && pos < message.size()) {
      size_t nl = message.find('\n', pos);
      std::string line = message.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (line.find_first_not_of(" \t") != std::string::npos) first = line.substr(line.find_first_not_of(" \t"));
      pos = nl == std::string::npos ? message.size() : nl + 1;
    }
    ErrorKind kind = type == "UsageError"         ? ErrorKind::kUsage
                     : type == "IoError"          ? ErrorKind::kIo
                     : type == "UnavailableError" ? ErrorKind::kUnavailable
                                                  : ErrorKind::kTorch;
    if (type == "IoError" || type == "UnavailableError") type = "UsageError";  // no type prefix for these
    return Error(kind, type == "UsageError" ? first : type + ": " + first, e.what());
  }

  void Start() const {
    if (started_) return;
    interpreter_ = std::make_unique<py::scoped_interpreter>();
#ifdef TSCTL_PYTHON_SITE
    py::module_::import("sys").attr("path").attr("insert")(0, TSCTL_PYTHON_SITE);
#endif
    embed_ = py::module_::import("types").attr("ModuleType")("tsctl_embed");
    py::exec(kEmbedPy, embed_.attr("__dict__"));
    started_ = true;
  }

  mutable std::mutex mu_;
  mutable bool started_ = false;
  mutable std::unique_ptr<py::scoped_interpreter> interpreter_;
  mutable py::object embed_;
};

}  // namespace
}  // namespace tsctl

TSCTL_PLUGIN_EXPORT int tsctl_python_plugin_abi() { return tsctl::kPythonPluginAbi; }

TSCTL_PLUGIN_EXPORT const tsctl::PythonBackend* tsctl_python_plugin() {
  static const tsctl::Backend* backend = new tsctl::Backend();  // never destroyed: Python outlives static destructors badly
  return backend;
}
