// tsctl export: a Python model through torch.export into a .pt2 (an exported
// program, or with --aoti an AOTInductor package for the CPU). torch writes
// the archive into a private directory; tsctl stamps the producer record and
// the example input specs into its extra/ and writes the output atomically
// (Stamp with an output), so the destination holds the old file or the whole
// new one, never torch's half-written archive.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "temp_dir.h"
#include "plugin_abi.h"
#include "torch_child.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/stamp.h"
#include "tsctl/text_util.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

// FILE.py:NAME split at its last colon; kUsage when either part is empty (torch_commands.cc).
std::pair<std::string, std::string> SplitPythonSpec(const std::string& spec);

namespace {

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
  if (r.output.size() <= 4 || !EndsWith(r.output, ".pt2")) {
    throw Error(ErrorKind::kUsage, "--output of export must name a .pt2 file, got '" + r.output + "'");
  }
  if (r.inputs.empty()) throw Error(ErrorKind::kUsage, "exporting needs example inputs: --input SHAPE[:DTYPE] per argument");
  for (const auto& set : r.check_inputs) {
    if (set.size() != r.inputs.size()) {
      throw Error(ErrorKind::kUsage, "--check-input gives " + std::to_string(set.size()) + " input(s), --input " +
                                         std::to_string(r.inputs.size()) + ": one spec per argument in each");
    }
  }
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
    // One symbolic size for all: the examples must agree on it.
    for (const InputSpec& spec : r.inputs) {
      if (!spec.shape.empty() && spec.shape[0] != r.inputs[0].shape[0]) {
        throw Error(ErrorKind::kUsage, "--dynamic-batch makes dimension 0 of every input one size, but the examples differ (" +
                                           r.inputs[0].ToString() + ", " + spec.ToString() + ")");
      }
    }
  }
  const std::filesystem::path out(r.output);
  const std::string dir = out.has_parent_path() ? out.parent_path().string() : ".";
  if (::access(dir.c_str(), W_OK) != 0) {
    throw Error(ErrorKind::kIo, "cannot write " + r.output + ": " + std::strerror(errno));
  }
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec)) throw Error(ErrorKind::kIo, "cannot write " + r.output + ": Is a directory");
}

// The Python file: a readable regular file, found before Python starts.
void RequirePythonFile(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw Error(ErrorKind::kIo, "cannot read " + file + ": No such file or directory");
  if (!std::filesystem::is_regular_file(file, ec)) throw Error(ErrorKind::kIo, "cannot read " + file + ": not a regular file");
  if (::access(file.c_str(), R_OK) != 0) throw Error(ErrorKind::kIo, "cannot read " + file + ": " + std::strerror(errno));
}

}  // namespace

MakeResult Export(const MakeRequest& r) {
  CheckExportRequest(r);
  const auto [file, name] = SplitPythonSpec(r.python);
  RequirePythonFile(file);
  if (!PythonPluginBuilt()) {
    throw Error(ErrorKind::kUnavailable,
                "export runs Python: this tsctl was built without Python support; "
                "scripts/build_torch2.sh builds a tsctl on PyTorch 2.x with it (build-torch2/bin/tsctl, docs/manual/building.md)");
  }
  TempDir work;
  // torch names the archive's top folder after the file it writes, and takes
  // the name as text: a name that is not UTF-8 is written as model.pt2 (the
  // folder's name is not part of the format).
  std::string base = std::filesystem::path(r.output).filename().string();
  if (!IsValidUtf8(base)) base = "model.pt2";
  PythonRequest p;
  static_cast<MakeSpec&>(p) = r;
  p.file = file;
  p.name = name;
  p.mode = "export";
  p.output = work.path + "/" + base;
  p.aoti = r.aoti;
  p.dynamic_batch = r.dynamic_batch;
  p.strict = r.strict;
  // With no --check-input the exported artifact is compared with the eager
  // model on the example shapes (fresh values): a check that ran.
  if (p.check_inputs.empty()) p.check_inputs.push_back(r.inputs);
  // In a child, as the data loader runs: an interrupt kills it and this
  // process removes the temporary folder; Python's torch never enters it.
  // No memory cap beyond the machine's (AOTInductor runs the C++ compiler).
  ChildLimits limits;
  limits.memory_bytes = MachineMemoryBytes();
  MakeResult result = RunTorchChild(PythonMakeRequest{.request = p}, limits)
                          .Take<MakeResult>("exporting " + p.name);
  result.output = r.output;
  if (result.diverged) return result;

  StampOptions stamp;
  stamp.set = {{"written_by", "tsctl"}};
  nlohmann::json specs = {{result.methods.empty() ? "model" : result.methods[0], result.inputs}};
  stamp.files = {{kInputsRecord, specs.dump() + "\n"}};
  stamp.output = r.output;
  Stamp(p.output, stamp);
  std::error_code ec;
  result.bytes = std::filesystem::file_size(r.output, ec);
  return result;
}

}  // namespace tsctl
