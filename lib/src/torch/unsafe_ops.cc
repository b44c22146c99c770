#include "unsafe_ops.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <set>

#include "tsctl/operators.h"

namespace tsctl {
namespace {

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
    // The one list of tsctl/operators.h; a flagged operator is refused
    // unless its flag is the constant False.
    const std::string kind = node->kind().toQualString();
    const UnsafeOperator* u = FindUnsafeOperator(kind);
    if (!u || (u->safe_when_false && ConstantFalse(node, u->safe_when_false))) continue;
    std::string line = where + " calls " + kind + ", which " + u->why;
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
