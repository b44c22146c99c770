#include "unsafe_ops.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <set>

namespace tsctl {
namespace {

// From a review of native_functions.yaml (LibTorch 1.13 and 2.x): the
// operators that touch files, and those that build tensors from indices or
// offsets they never check (their `unsafe` in the name or in an argument).
struct Unsafe {
  const char* op;
  const char* why;
};
constexpr Unsafe kAlways[] = {
    {"aten::save", "writes a file"},
    {"aten::from_file", "maps any file into a tensor"},
    {"inductor::_reinterpret_tensor", "views memory with sizes and offsets it never checks"},
    {"aten::_sparse_coo_tensor_unsafe", "builds a sparse tensor from indices it never checks"},
    {"aten::_sparse_csr_tensor_unsafe", "builds a sparse tensor from indices it never checks"},
    {"aten::_sparse_csc_tensor_unsafe", "builds a sparse tensor from indices it never checks"},
    {"aten::_sparse_bsr_tensor_unsafe", "builds a sparse tensor from indices it never checks"},
    {"aten::_sparse_bsc_tensor_unsafe", "builds a sparse tensor from indices it never checks"},
    {"aten::_sparse_compressed_tensor_unsafe", "builds a sparse tensor from indices it never checks"},
};
// Operators that are safe unless a flag says otherwise: refused unless the
// flag is the constant false.
struct Flagged {
  const char* op;
  const char* flag;
  const char* why;
};
constexpr Flagged kFlagged[] = {
    {"aten::segment_reduce", "unsafe", "trusts its lengths and offsets (unsafe=True reads outside the tensor)"},
};

bool ConstantFalse(const torch::jit::Node* node, const char* name) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (!schema) return false;
  const auto index = schema->argumentIndexWithName(name);
  if (!index || *index >= node->inputs().size()) return false;
  const auto value = torch::jit::toIValue(node->input(*index));
  return value && value->isBool() && !value->toBool();
}

void Walk(const torch::jit::Block* block, const std::string& where, std::set<std::string>& seen,
          std::vector<std::string>& out) {
  for (const torch::jit::Node* node : block->nodes()) {
    for (const torch::jit::Block* inner : node->blocks()) Walk(inner, where, seen, out);
    // fork's and the closures' bodies are subgraphs, not blocks.
    if (node->hasAttribute(c10::attr::Subgraph)) Walk(node->g(c10::attr::Subgraph)->block(), where, seen, out);
    const std::string kind = node->kind().toQualString();
    std::string why;
    for (const Unsafe& u : kAlways) {
      if (kind == u.op) why = u.why;
    }
    for (const Flagged& f : kFlagged) {
      if (kind == f.op && !ConstantFalse(node, f.flag)) why = f.why;
    }
    if (why.empty()) continue;
    std::string line = where + " calls " + kind + ", which " + why;
    if (seen.insert(line).second) out.push_back(std::move(line));
  }
}

}  // namespace

std::vector<std::string> UnsafeCalls(const torch::jit::Module& module) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto unit = module._ivalue()->compilation_unit();
  for (torch::jit::Function* fn : unit->get_functions()) {
    if (!fn->isGraphFunction()) continue;
    const auto graph = torch::jit::toGraphFunction(*fn).graph();
    Walk(graph->block(), fn->qualname().qualifiedName(), seen, out);
  }
  return out;
}

}  // namespace tsctl
