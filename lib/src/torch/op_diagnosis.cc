#include "../text/lists.h"
#include "op_diagnosis.h"

#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/version.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "tsctl/archive.h"
#include "tsctl/operators.h"
#include "tsctl/source.h"
#include "torch_util.h"

namespace tsctl {
namespace {

}  // namespace

bool OperatorRegistered(const std::string& op) {
  std::string base = OperatorBaseName(op);
  if (base.find("::") == std::string::npos) return true;  // not an operator name: nothing to say
  const auto& ops = torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(base));
  if (ops.empty()) return false;
  if (base.size() == op.size()) return true;
  std::string overload = op.substr(base.size() + 1);
  for (const auto& o : ops) {
    if (o->schema().overload_name() == overload) return true;
  }
  return false;
}

namespace {

// The LibTorch library this process loaded (libtorch_cpu).
std::string LoadedLibTorch() { return LibTorchCpuPath(); }

std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

bool FileMentions(const std::string& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return !text.empty() && bytes.find(text) != std::string::npos;
}

// torchvision's _C library for the LibTorch in use: beside it in a Python
// site folder (a PyPI wheel's .../site-packages/torch/lib/libtorch_cpu.so),
// or in the Python packages of the prefix LibTorch was installed in
// (Debian: /usr/lib/x86_64-linux-gnu -> /usr/lib/python3/dist-packages).
// Only a library linked against this LibTorch's file name counts.
std::string FindTorchvisionLibrary() {
  std::string lib = LoadedLibTorch();
  if (lib.empty() || lib.find('/') == std::string::npos) return "";
  // The name it was loaded by (the soname a torchvision library links to),
  // and the folder it really is in (/lib may be a link to /usr/lib).
  std::string soname = lib.substr(lib.rfind('/') + 1);
  char real[PATH_MAX];
  if (::realpath(lib.c_str(), real)) lib = real;
  std::string dir = lib.substr(0, lib.rfind('/'));
  std::vector<std::string> patterns;
  const std::string wheel_tail = "/torch/lib";
  if (dir.size() > wheel_tail.size() && dir.compare(dir.size() - wheel_tail.size(), wheel_tail.size(), wheel_tail) == 0) {
    patterns.push_back(dir.substr(0, dir.size() - wheel_tail.size()) + "/torchvision/_C*.so");
  }
  size_t lib_pos = dir.rfind("/lib");
  if (lib_pos != std::string::npos) {
    std::string prefix = dir.substr(0, lib_pos);
    for (const char* site : {"/lib/python3/dist-packages", "/lib/python3*/dist-packages", "/lib/python3*/site-packages",
                             "/local/lib/python3*/dist-packages"}) {
      patterns.push_back(prefix + site + "/torchvision/_C*.so");
    }
  }
  for (const auto& pattern : patterns) {
    for (const auto& candidate : Glob(pattern)) {
      if (FileMentions(candidate, soname)) return candidate;
    }
  }
  return "";
}


}  // namespace

std::vector<std::string> MissingOperators(const std::string& path) {
  Archive archive = Archive::Open(OpenFileSource(path));
  std::vector<std::string> missing;
  for (const std::string& op : ListOperators(archive).Names()) {
    if (!OperatorRegistered(op)) missing.push_back(op);
  }
  return missing;
}

std::string DescribeMissingOperators(const std::vector<std::string>& missing) {
  std::map<std::string, std::vector<std::string>> by_ns;
  for (const auto& op : missing) by_ns[OperatorNamespace(op)].push_back(op);
  std::vector<std::string> parts;
  for (const auto& [ns, ops] : by_ns) {
    std::string list = JoinAll(ops, ", ");
    if (ns == "prepacked") {
      // Registered by ATen's XNNPACK code (RegisterOpContextClass.cpp) only
      // in builds with USE_XNNPACK; optimize_for_mobile writes them.
      parts.push_back(list + " (XNNPACK's operators, written by optimize_for_mobile: LibTorch " +
                      std::string(TORCH_VERSION) +
                      " was built without XNNPACK; run it on a LibTorch built with it, or save the model without "
                      "optimize_for_mobile)");
    } else if (ns == "aten" || ns == "prim" || ns == "quantized" || ns == "_quantized") {
      parts.push_back(list + " (not in LibTorch " + std::string(TORCH_VERSION) + ": the archive needs another version)");
    } else if (ns == "torchvision") {
      std::string lib = FindTorchvisionLibrary();
      parts.push_back(list + (lib.empty() ? " (from torchvision's _C library: install the torchvision built for this LibTorch "
                                             "and pass --load-library .../torchvision/_C*.so)"
                                          : " (from torchvision: --load-library " + lib + ")"));
    } else {
      parts.push_back(list + " (namespace '" + ns + "': pass the library that registers it, TORCH_LIBRARY(" + ns +
                      ", ...), with --load-library or TSCTL_LOAD_LIBRARIES)");
    }
  }
  return "operators not registered in this LibTorch: " + JoinAll(parts, "; ");
}

std::string DiagnoseMissingOperators(const std::string& path) {
  try {
    std::vector<std::string> missing = MissingOperators(path);
    return missing.empty() ? "" : DescribeMissingOperators(missing);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace tsctl
