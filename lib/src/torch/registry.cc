// tsctl compat --dump-runtime torch: what this LibTorch registers, read from
// its own tables, as scripts/gen_compat_data.py reads a torch from Python.
#include "registry.h"

#include <caffe2/serialize/versions.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/custom_class.h>
#include <torch/version.h>

#include <set>
#include <sstream>

#if __has_include(<torch/csrc/jit/operator_upgraders/version_map.h>)
#include <torch/csrc/jit/operator_upgraders/version_map.h>
#define TSCTL_HAVE_VERSION_MAP 1
#endif

namespace tsctl {

std::string RegistryText() {
  std::ostringstream out;
  out << "runtime torch " << TORCH_VERSION << "\n";
  out << "source tsctl's LibTorch plugin (torch::jit::getAllOperators, customClassSchemasForBCCheck)\n";
  out << "file_format " << caffe2::serialize::kMinSupportedFileFormatVersion << ' '
      << caffe2::serialize::kMaxSupportedFileFormatVersion << "\n";
  out << "bytecode " << caffe2::serialize::kMinSupportedBytecodeVersion << ' '
      << caffe2::serialize::kMaxSupportedBytecodeVersion << "\n";
  // Custom classes: the `self` type of their methods' schemas.
  std::set<std::string> classes;
  constexpr char kPrefix[] = "__torch__.torch.classes.";
  for (const c10::FunctionSchema& s : torch::customClassSchemasForBCCheck()) {
    if (s.arguments().empty()) continue;
    const std::string type = s.arguments()[0].type()->annotation_str();
    if (type.rfind(kPrefix, 0) == 0) classes.insert(type.substr(sizeof kPrefix - 1));
  }
  for (const std::string& c : classes) out << "class " << c << "\n";
#ifdef TSCTL_HAVE_VERSION_MAP
  std::set<std::string> upgraders;
  for (const auto& [op, entries] : torch::jit::get_operator_version_map()) {
    for (const auto& e : entries) {
      upgraders.insert("upgrader " + op + " " + std::to_string(e.bumped_at_version) + " " + e.upgrader_name);
    }
  }
  for (const std::string& u : upgraders) out << u << "\n";
#else
  out << "# upgraders: not listed (this LibTorch's headers declare no version map)\n";
#endif
  std::set<std::string> ops;
  for (const auto& op : torch::jit::getAllOperators()) {
    const c10::FunctionSchema& s = op->schema();
    ops.insert(s.name() + (s.overload_name().empty() ? "" : "." + s.overload_name()));
  }
  for (const std::string& op : ops) out << op << "\n";
  return out.str();
}

}  // namespace tsctl
