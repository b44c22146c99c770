#pragma once

#include <cstdint>
#include <string>

#include "tsctl/torch_backend.h"

namespace torch::jit {
struct Graph;
}

namespace tsctl {

// How many nodes `graph` holds once every call in it is inlined (as
// LibTorch's graph executor inlines before it runs a method, and graph
// --inlined prints), counted without inlining anything; saturates at 2^62.
uint64_t InlinedNodes(const torch::jit::Graph& graph);
// validate refuses to run a method past this (it would exhaust memory or
// time inside LibTorch's executor): about a hundred times the largest graph
// of the corpus.
constexpr uint64_t kMaxRunInlinedNodes = 1000000;

std::string RenderGraph(const GraphOptions& options);
std::string RenderCompiledCode(const std::string& path, const std::string& method);

}  // namespace tsctl
