#include "graph_shapes.h"

#include "infer_guards.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/constants.h>

namespace tsctl {
namespace {

using torch::jit::Node;
using torch::jit::Value;

// Calls operator `name` (overload "") on `args` and returns its first
// result (a boxed call leaves each result on the stack); nullopt if this
// LibTorch does not have it or it throws.
std::optional<c10::IValue> CallOp(const char* name, std::vector<c10::IValue> args) {
  try {
    auto op = c10::Dispatcher::singleton().findSchema({name, ""});
    if (!op) return std::nullopt;
    torch::jit::Stack stack(std::move(args));
    op->callBoxed(&stack);
    if (stack.empty()) return std::nullopt;
    return stack.front();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

// XNNPACK contexts by their __getstate__ (a tuple whose first tensor is the
// weight and whose last plain int is the groups), quantized parameters by
// their unpack operators.
std::optional<PackedWeight> UnpackWeight(const c10::IValue& v) {
  if (!v.isObject()) return std::nullopt;
  const auto obj = v.toObject();
  const std::string cls = obj->type()->name() ? obj->type()->name()->qualifiedName() : "";
  PackedWeight p;
  try {
    if (cls.rfind("__torch__.torch.classes.xnnpack.", 0) == 0) {
      torch::jit::Function* getstate = obj->type()->findMethod("__getstate__");
      if (!getstate) return std::nullopt;
      c10::IValue state = (*getstate)({v});
      if (!state.isTuple()) return std::nullopt;
      for (const c10::IValue& e : state.toTupleRef().elements()) {
        if (e.isTensor() && !p.weight.defined()) p.weight = e.toTensor();
        if (e.isInt()) p.groups = e.toInt();
      }
      p.transposed = cls.find("TransposeConv") != std::string::npos;
    } else if (cls == "__torch__.torch.classes.quantized.Conv2dPackedParamsBase" ||
               cls == "__torch__.torch.classes.quantized.Conv3dPackedParamsBase") {
      const bool three = cls.find("Conv3d") != std::string::npos;
      auto wb = CallOp(three ? "quantized::conv3d_unpack" : "quantized::conv2d_unpack", {v});
      if (!wb || !wb->isTensor()) return std::nullopt;
      p.weight = wb->toTensor();
      auto g = CallOp(three ? "quantized::conv3d_groups" : "quantized::conv2d_groups", {v});
      if (g && g->isInt()) p.groups = g->toInt();
      auto t = CallOp(three ? "quantized::conv3d_transpose" : "quantized::conv2d_transpose", {v});
      p.transposed = t && t->isBool() && t->toBool();
    } else if (cls == "__torch__.torch.classes.quantized.LinearPackedParamsBase") {
      auto wb = CallOp("quantized::linear_unpack", {v});
      if (!wb) wb = CallOp("quantized::linear_unpack_fp16", {v});
      if (!wb || !wb->isTensor()) return std::nullopt;
      p.weight = wb->toTensor();
    } else {
      return std::nullopt;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!p.weight.defined() || p.groups < 1) return std::nullopt;
  return p;
}

c10::IValue Resolver::Resolve(Value* v, std::string& name) const {
  if (v == self_) return module_._ivalue();
  Node* n = v->node();
  const std::string kind = n->kind().toQualString();
  if (kind == "prim::Constant") {
    name = "a constant";
    auto c = torch::jit::toIValue(v);
    return c ? *c : c10::IValue();
  }
  if (kind == "prim::GetAttr") {
    std::string parent_name;
    c10::IValue parent = Resolve(n->input(0), parent_name);
    if (!parent.isObject()) return {};
    auto obj = parent.toObject();
    const std::string attr = n->s(c10::attr::name);
    if (!obj->type()->hasAttribute(attr)) return {};
    name = parent_name.empty() || parent_name == "a constant" ? attr : parent_name + "." + attr;
    return obj->getAttr(attr);
  }
  if (kind == "aten::t") {
    c10::IValue t = Resolve(n->input(0), name);
    if (t.isTensor() && t.toTensor().dim() <= 2) return t.toTensor().t();
    return {};
  }
  if (kind == "prim::ListConstruct" && n->inputs().size() > 0) {
    // Only the first element is used (an RNN's first weight).
    c10::IValue first = Resolve(n->input(0), name);
    c10::impl::GenericList list(c10::AnyType::get());
    if (!first.isNone()) list.push_back(first);
    return list;
  }
  return {};
}

std::optional<at::Tensor> Resolver::Tensor(Value* v, std::string& name) const {
  c10::IValue r = Resolve(v, name);
  if (r.isList() && r.toListRef().size() > 0) r = r.toListRef()[0];
  if (!r.isTensor() || !r.toTensor().defined()) return std::nullopt;
  return r.toTensor();
}

std::optional<PackedWeight> Resolver::Packed(Value* v, std::string& name) const { return UnpackWeight(Resolve(v, name)); }

std::optional<std::vector<int64_t>> Resolver::IntList(Value* v) const {
  // A list built of constants (what scripting emits for `x.permute(0, 3,
  // 1, 2)`) is as constant as a constant list.
  if (v->node()->kind() == c10::prim::ListConstruct) {
    std::vector<int64_t> out;
    for (Value* e : v->node()->inputs()) {
      std::optional<int64_t> i = ConstantInt(e);
      if (!i) return std::nullopt;
      out.push_back(*i);
    }
    return out;
  }
  auto c = torch::jit::toIValue(v);
  if (!c || !c->isIntList()) return std::nullopt;
  return c->toIntVector();
}

std::optional<int64_t> Resolver::Int(Value* v) const { return ConstantInt(v); }

bool Resolver::Bool(Value* v, bool fallback) const {
  auto c = torch::jit::toIValue(v);
  return c && c->isBool() ? c->toBool() : fallback;
}

}  // namespace tsctl
