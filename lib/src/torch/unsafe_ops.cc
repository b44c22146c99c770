#include "unsafe_ops.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <set>

#include "torch_util.h"
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

template <typename Visit>
void EachFunctionGraph(const torch::jit::Module& module, const Visit& visit) {
  const auto unit = module._ivalue()->compilation_unit();
  for (torch::jit::Function* fn : unit->get_functions()) {
    if (fn->isGraphFunction()) visit(*fn, torch::jit::toGraphFunction(*fn).graph());
  }
}

}  // namespace

std::vector<std::string> GraphOperators(const torch::jit::Module& module) {
  std::set<std::string> names;
  EachFunctionGraph(module, [&](torch::jit::Function&, const std::shared_ptr<torch::jit::Graph>& graph) {
    EachNode(graph->block(), [&](const torch::jit::Node* node) {
      if (const c10::FunctionSchema* schema = node->maybeSchema()) {
        names.insert(schema->overload_name().empty() ? schema->name() : schema->name() + "." + schema->overload_name());
      } else {
        names.insert(node->kind().toQualString());
      }
    });
  });
  return {names.begin(), names.end()};
}

std::vector<std::string> UnsafeCalls(const torch::jit::Module& module) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  EachFunctionGraph(module, [&](torch::jit::Function& fn, const std::shared_ptr<torch::jit::Graph>& graph) {
    const std::string where = fn.qualname().qualifiedName();
    EachNode(graph->block(), [&](const torch::jit::Node* node) {
      // The one list of tsctl/operators.h; a flagged operator is refused
      // unless its flag is the constant False.
      const std::string kind = node->kind().toQualString();
      const UnsafeOperator* u = FindUnsafeOperator(kind);
      if (!u || (u->safe_when_false && ConstantFalse(node, u->safe_when_false))) return;
      if (u->only_with) {
        const c10::FunctionSchema* schema = node->maybeSchema();
        std::vector<std::string> arguments;
        if (schema) {
          for (const c10::Argument& a : schema->arguments()) arguments.push_back(a.name());
        }
        // No schema: the overload is unknown, so it is flagged.
        if (schema && !u->Flags(schema->overload_name(), arguments)) return;
      }
      std::string line = where + " calls " + kind + ", which " + u->why;
      if (seen.insert(line).second) out.push_back(std::move(line));
    });
  });
  return out;
}

}  // namespace tsctl
