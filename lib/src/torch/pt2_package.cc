#include "pt2_package.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <nlohmann/json.hpp>

#ifdef TSCTL_HAVE_AOTI
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

#include "compare_values.h"
#include "py_values.h"
#include "torch_util.h"
#include "tsctl/error.h"

namespace tsctl {

#ifdef TSCTL_HAVE_AOTI
void ExposeLibTorchSymbols() {
  static const bool done = [] {
    const std::string cpu = LibTorchCpuPath();
    if (cpu.empty()) return true;
    ::dlopen(cpu.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    // The wrapper also needs libtorch.so, which the plugin of a CUDA build
    // does not link (it loads CUDA only where a driver is: torch_util.h
    // LoadCudaWhereDriver). Loaded as the wrapper's own dependency, inside
    // its dlopen, it crashed with SIGBUS (torch 2.15); loaded first, from
    // beside libtorch_cpu, it does not.
    const std::string whole = LibTorchFolder() + "libtorch.so";
    if (::access(whole.c_str(), R_OK) == 0) ::dlopen(whole.c_str(), RTLD_NOW | RTLD_GLOBAL);
    return true;
  }();
  (void)done;
}

namespace {

// The top node's type of a pytree spec ("[1, {\"type\": \"builtins.tuple\", ...}]"); "" for a leaf or unreadable.
std::string TopType(const std::string& spec) {
  const nlohmann::json j = nlohmann::json::parse(spec, nullptr, false);
  if (!j.is_array() || j.size() < 2 || !j[1].is_object()) return "";
  const auto it = j[1].find("type");
  return it != j[1].end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

AotiPackage::AotiPackage(const std::string& file, const std::string& model) {
  ExposeLibTorchSymbols();
  try {
    loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(file, model);
    const auto metadata = loader_->get_metadata();
    if (auto it = metadata.find("AOTI_DEVICE_KEY"); it != metadata.end()) device_ = it->second;
    const std::vector<std::string> spec = loader_->get_call_spec();
    const std::string out = spec.size() > 1 ? TopType(spec[1]) : "";
    tuple_out_ = out == "builtins.tuple";
    list_out_ = out == "builtins.list";
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw FromTorch(e);
  }
}

AotiPackage::~AotiPackage() = default;

std::vector<at::Tensor> AotiPackage::Run(const std::vector<at::Tensor>& inputs) { return loader_->run(inputs); }

c10::IValue AotiPackage::Outputs(std::vector<at::Tensor> flat) const {
  if (flat.size() == 1 && !tuple_out_ && !list_out_) return flat.front();
  if (list_out_) return c10::List<at::Tensor>(flat);
  std::vector<c10::IValue> items(flat.begin(), flat.end());
  return c10::ivalue::Tuple::create(std::move(items));
}
#endif

QuietStderr::QuietStderr() {
  if (std::getenv("TSCTL_VERBOSE")) return;
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return;
  std::cerr.flush();
  std::fflush(stderr);
  saved_ = ::dup(2);
  if (saved_ >= 0) ::dup2(null, 2);
  ::close(null);
}

QuietStderr::~QuietStderr() {
  if (saved_ < 0) return;
  std::cerr.flush();
  std::fflush(stderr);
  ::dup2(saved_, 2);
  ::close(saved_);
}

Pt2RunSpec Pt2Named(const Pt2RunSpec& spec, size_t given) {
  Pt2RunSpec named = spec;
  if (named.input_names.empty()) {
    for (size_t i = 0; i < given; ++i) {
      named.input_names.push_back("input" + std::to_string(i));
      named.input_types.push_back("Tensor");
    }
  }
  return named;
}

c10::FunctionSchema Pt2Schema(const Pt2RunSpec& spec, size_t given) {
  const Pt2RunSpec named = Pt2Named(spec, given);
  std::string text = named.Schema();  // "forward(Tensor x, ...)"
  text.insert(8, named.input_names.empty() ? "Any self" : "Any self, ");
  return torch::jit::parseSchema(text + " -> Any");
}

std::vector<c10::IValue> Pt2ArgumentList(const c10::IValue& loaded, const std::string& what) {
  if (IsReferenceRecord(loaded)) return ArgumentList(loaded.toGenericDict().at("inputs"));
  if (loaded.isTuple()) {
    const auto& items = loaded.toTupleRef().elements();
    if (items.size() == 2 && items[0].isTuple() && items[1].isGenericDict()) {
      if (!items[1].toGenericDict().empty()) {
        throw Error(ErrorKind::kUsage, what + " holds keyword arguments; tsctl passes a .pt2's inputs by position only");
      }
      return ArgumentList(items[0]);
    }
  }
  return ArgumentList(loaded);
}

std::vector<at::Tensor> TensorsOf(const std::vector<c10::IValue>& args) {
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].isTensor()) {
      throw Error(ErrorKind::kUsage, "argument " + std::to_string(i) + " is " + KindOf(args[i]) +
                                         ": an AOTInductor package takes tensors only");
    }
    out.push_back(args[i].toTensor());
  }
  return out;
}

}  // namespace tsctl
