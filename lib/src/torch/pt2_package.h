// An AOTInductor package loaded in this process, and the inputs of a .pt2
// run: shared by validate's check (pt2_runner.cc) and bench (pt2_bench.cc).
// Private to the LibTorch plugin; compiled against LibTorch 2.x only
// (TSCTL_HAVE_AOTI).
#pragma once

#include <torch/script.h>
#include <torch/version.h>

#include <memory>
#include <string>
#include <vector>

#include "tsctl/pt2_run.h"

#if TORCH_VERSION_MAJOR >= 2 && __has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#define TSCTL_HAVE_AOTI 1
namespace torch::inductor {
class AOTIModelPackageLoader;
}  // namespace torch::inductor
#endif

namespace tsctl {

#ifdef TSCTL_HAVE_AOTI
// The compiled wrapper of an AOTInductor package calls the aoti_torch_* C
// shim of libtorch_cpu and is not always linked with it (inductor's
// link_libtorch): it finds those symbols in the process's global scope,
// where a library that tsctl dlopened with its plugin (RTLD_LOCAL) is not.
// Python's torch needs TORCH_USE_RTLD_GLOBAL=1 for the same reason. Promotes
// the loaded libtorch_cpu, which defines them, to global scope, and loads
// libtorch.so from beside it. Once per process (later calls do nothing).
void ExposeLibTorchSymbols();

class AotiPackage {
 public:
  // Loads model `model` of the package at `file` on its device. Throws
  // tsctl::Error (kTorch) with the loader's message.
  AotiPackage(const std::string& file, const std::string& model);
  ~AotiPackage();
  AotiPackage(const AotiPackage&) = delete;
  AotiPackage& operator=(const AotiPackage&) = delete;

  // One call; LibTorch's exceptions pass through.
  std::vector<at::Tensor> Run(const std::vector<at::Tensor>& inputs);
  // A call's outputs as Python's runner returns them: one tensor alone,
  // else a tuple (or list, as the package's output spec says).
  c10::IValue Outputs(std::vector<at::Tensor> flat) const;
  const std::string& device() const { return device_; }

 private:
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  std::string device_;  // the metadata's AOTI_DEVICE_KEY ("cpu")
  bool list_out_ = false, tuple_out_ = false;
};
#endif

// While alive, this process's stderr goes to /dev/null (unless
// TSCTL_VERBOSE is set, as -v sets it): AOTInductor's runtime prints each
// error it returns to std::cerr ("Error: input_handles[0]: ..."), and the
// same message comes back as the exception tsctl reports in one line.
class QuietStderr {
 public:
  QuietStderr();
  ~QuietStderr();
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_ = -1;
};

// `spec` with its inputs named input0.. up to `given` when it names none.
Pt2RunSpec Pt2Named(const Pt2RunSpec& spec, size_t given);

// The schema a spec's inputs are typed by ("forward(Any self, Tensor x) ->
// Any"); unnamed inputs (no names known) are named input0.. up to `given`.
c10::FunctionSchema Pt2Schema(const Pt2RunSpec& spec, size_t given);

// A .pt2's argument list from a loaded value: (args, kwargs) as
// data/sample_inputs/<model>.pt holds them (kwargs must be empty), else the
// value as --load-inputs reads it. Throws tsctl::Error (kUsage).
std::vector<c10::IValue> Pt2ArgumentList(const c10::IValue& loaded, const std::string& what);

// The tensors of an argument list; throws tsctl::Error (kUsage) naming an
// argument that is not a tensor (AOTInductor packages take tensors).
std::vector<at::Tensor> TensorsOf(const std::vector<c10::IValue>& args);

}  // namespace tsctl
