// tsctl export: a Python model through torch.export into a .pt2 (an exported
// program, or with --aoti an AOTInductor package for the CPU). torch writes
// the archive into a private directory; tsctl stamps the producer record and
// the example input specs into its extra/ and writes the output atomically
// (Stamp with an output), so the destination holds the old file or the whole
// new one, never torch's half-written archive.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "plugin_abi.h"
#include "tsctl/error.h"
#include "tsctl/stamp.h"
#include "tsctl/torch_backend.h"

namespace tsctl {
namespace {

// A private directory in /tmp, removed with what it holds.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/tsctl-export-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw Error(ErrorKind::kIo, "cannot create a temporary directory in /tmp");
    path = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Everything that can be refused before Python starts (seconds) and the
// exporter runs (tens of seconds with --aoti).
void CheckExportRequest(const MakeRequest& r) {
  if (r.python.empty() || !r.path.empty()) {
    throw Error(ErrorKind::kUsage, "export takes a Python model: --python FILE.py:NAME (and no ARCHIVE)");
  }
  if (r.freeze || !r.save_outputs_path.empty() || !r.load_inputs_path.empty()) {
    throw Error(ErrorKind::kUsage, "--freeze, --save-outputs and --load-inputs do not apply to export");
  }
  // torch names the archive's top folder after the file and AOTInductor
  // refuses a package path without the suffix.
  if (!EndsWith(r.output, ".pt2")) {
    throw Error(ErrorKind::kUsage, "--output of export must name a .pt2 file, got '" + r.output + "'");
  }
  if (r.inputs.empty()) throw Error(ErrorKind::kUsage, "exporting needs example inputs: --input SHAPE[:DTYPE] per argument");
  if (r.dynamic_batch) {
    // torch.export specializes a dimension of size 0 or 1 (it takes the
    // example's size as a constant), so a dynamic batch needs 2 or more.
    std::string small;
    for (const InputSpec& spec : r.inputs) {
      if (!spec.shape.empty() && spec.shape[0] < 2) small += (small.empty() ? "" : ", ") + spec.ToString();
    }
    if (!small.empty()) {
      throw Error(ErrorKind::kUsage, "--dynamic-batch needs example inputs with a batch of 2 or more (got " + small +
                                         "): torch.export specializes a dimension of size 0 or 1");
    }
  }
  const std::filesystem::path out(r.output);
  const std::string dir = out.has_parent_path() ? out.parent_path().string() : ".";
  if (::access(dir.c_str(), W_OK) != 0) {
    throw Error(ErrorKind::kIo, "cannot write " + r.output + ": " + std::strerror(errno));
  }
}

}  // namespace

MakeResult Export(const MakeRequest& r) {
  CheckExportRequest(r);
  const size_t colon = r.python.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == r.python.size()) {
    throw Error(ErrorKind::kUsage, "--python wants FILE.py:NAME, got '" + r.python + "'");
  }
  TempDir work;
  PythonRequest p{r.python.substr(0, colon), r.python.substr(colon + 1), "export", r.inputs, r.check_inputs, false, r.rtol,
                  r.atol, work.path + "/" + std::filesystem::path(r.output).filename().string()};
  p.aoti = r.aoti;
  p.dynamic_batch = r.dynamic_batch;
  p.strict = r.strict;
  // With no --check-input the exported artifact is compared with the eager
  // model on the example shapes (fresh values): a check that ran.
  if (p.check_inputs.empty()) p.check_inputs.push_back(r.inputs);
  const PythonBackend& python = LoadPythonPlugin();
  LoadOperatorLibraries(r.load_libraries);
  MakeResult result = python.Make(p);
  result.output = r.output;
  if (result.diverged) return result;

  StampOptions stamp;
  stamp.set = {{"written_by", "tsctl"}};
  nlohmann::json specs = {{result.methods.empty() ? "model" : result.methods[0], result.inputs}};
  stamp.files = {{"tsctl_inputs.json", specs.dump() + "\n"}};
  stamp.output = r.output;
  Stamp(p.output, stamp);
  std::error_code ec;
  result.bytes = std::filesystem::file_size(r.output, ec);
  return result;
}

}  // namespace tsctl
