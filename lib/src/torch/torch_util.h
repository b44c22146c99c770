// Helpers shared by the LibTorch plugin's commands.
#pragma once

#include <torch/script.h>

#include <string>

#include "tsctl/error.h"

namespace tsctl {

// Loads an archive on the CPU (also when its tensors were saved on CUDA).
// Throws tsctl::Error (kTorch) with LibTorch's cause in one line and the full
// message as detail.
torch::jit::Module LoadModule(const std::string& path);

// Turns a LibTorch exception into a tsctl::Error of `kind`.
Error FromTorch(const std::exception& e, ErrorKind kind = ErrorKind::kTorch);

// Turns LibTorch's failure to load the archive at `path` into a
// tsctl::Error (kTorch): the operators it lacks and where to find them
// (DiagnoseMissingOperators) when that is the cause, else FromTorch(e).
Error FromLoadFailure(const std::exception& e, const std::string& path);

// The method `name` of `module`. Throws tsctl::Error (kUsage) listing the
// methods there are if it does not exist.
torch::jit::Method FindMethod(const torch::jit::Module& module, const std::string& name);

// Calls visit(node) for every node below `block`, subgraphs included.
template <typename Visit>
void EachNode(const torch::jit::Block* block, const Visit& visit) {
  for (const torch::jit::Node* node : block->nodes()) {
    for (const torch::jit::Block* inner : node->blocks()) EachNode(inner, visit);
    if (node->hasAttribute(c10::attr::Subgraph)) EachNode(node->g(c10::attr::Subgraph)->block(), visit);
    visit(node);
  }
}

// Makes `name` (qnnpack, fbgemm, onednn, x86; any case) LibTorch's quantized
// engine, as Python's torch.backends.quantized.engine = name; "" keeps the
// default. Throws tsctl::Error (kUsage) naming this LibTorch's engines if it
// has no such engine.
void UseQuantizedEngine(const std::string& name);

// The device `name` names (cpu, cuda, cuda:N), checked usable here: throws
// tsctl::Error kUsage for another name, kUnavailable when this LibTorch has
// no CUDA, no device is visible or there is no device N.
torch::Device UsableDevice(const std::string& name);

// A CUDA build of LibTorch linked without libtorch_cuda
// (TSCTL_CUDA_AT_RUN_TIME, lib/CMakeLists.txt): loads libtorch_cuda, which
// registers CUDA with ATen, where the NVIDIA driver's library
// (libcuda.so.1) loads, i.e. where CUDA could work at all. Once, before the
// server forks (a child never loads it). Elsewhere a no-op.
void LoadCudaWhereDriver();
// Whether this LibTorch has CUDA, loaded or not.
bool CudaCompiled();
// Why CUDA is not loaded ("" when it is, or the build has none).
const std::string& CudaNotLoaded();
// The file of the libtorch_cpu this process loaded (dladdr of
// at::globalContext); "" where the loader cannot say.
std::string LibTorchCpuPath();
// Its folder, with a trailing slash; "" where unknown.
std::string LibTorchFolder();

// `value` with every tensor in it (tuples, lists, dicts) moved to `device`.
c10::IValue ToDevice(const c10::IValue& value, const torch::Device& device);

// Makes CUDA runs repeatable and as close to the CPU's as the device allows,
// for a check: cuDNN deterministic and not autotuned, no TF32 in cuDNN or
// cuBLAS. Nothing changes for the CPU.
void UseExactCuda();

// The engines UseQuantizedEngine accepts here, lower case, comma-separated.
std::string QuantizedEngines();

}  // namespace tsctl
