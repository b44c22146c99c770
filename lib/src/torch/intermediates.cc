#include "intermediates.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <map>
#include <set>
#include <sstream>

#include "py_values.h"
#include "torch_util.h"

namespace tsctl {
namespace {

std::string Label(const Intermediate& v) { return "%" + v.name + " = " + v.kind; }

std::string ShapeOf(const at::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

}  // namespace

std::vector<Intermediate> RecordIntermediates(const torch::jit::Module& module, const std::string& method,
                                              const std::vector<c10::IValue>& inputs, const torch::Device& device,
                                              uint64_t max_bytes, std::string& note) {
  note.clear();
  const torch::jit::Method m = module.get_method(method);
  std::shared_ptr<torch::jit::Graph> graph = m.graph()->copy();
  torch::jit::Inline(*graph);
  std::vector<torch::jit::Value*> values;
  std::vector<Intermediate> out;
  // Memory these allocate holds whatever was there: no value to compare.
  static const std::set<std::string> kUninitialized = {"aten::empty", "aten::empty_like", "aten::new_empty",
                                                       "aten::empty_strided", "aten::new_empty_strided"};
  for (torch::jit::Node* n : graph->nodes()) {
    if (n->kind() == c10::prim::Constant || n->kind() == c10::prim::GetAttr) continue;
    if (kUninitialized.count(n->kind().toQualString())) continue;
    for (torch::jit::Value* v : n->outputs()) {
      if (v->type()->kind() != c10::TypeKind::TensorType) continue;
      values.push_back(v);
      out.push_back({n->kind().toQualString(), v->debugName(), {}});
    }
  }
  // The method's own output first, then every value: one tuple.
  graph->setInsertPoint(graph->return_node());
  std::vector<torch::jit::Value*> returned = {graph->outputs()[0]};
  returned.insert(returned.end(), values.begin(), values.end());
  torch::jit::Value* tuple = graph->insertNode(graph->createTuple(returned))->output();
  graph->eraseOutput(0);
  graph->registerOutput(tuple);
  torch::jit::GraphFunction fn("tsctl_intermediates", graph, nullptr);
  std::vector<c10::IValue> stack = {module._ivalue()};
  const auto& formal = m.function().getSchema().arguments();
  for (size_t i = 0; i < inputs.size(); ++i) {
    stack.push_back(ToDevice(i + 1 < formal.size() ? Retype(formal[i + 1].type(), inputs[i]) : inputs[i], device));
  }
  c10::IValue result;
  {
    // Both models draw the same random numbers (aten::rand, dropout in
    // training mode, ...): the generator seeded alike before each run.
    at::manual_seed(0);
    c10::InferenceMode guard;
    result = fn(std::move(stack));
  }
  const auto& elements = result.toTupleRef().elements();
  uint64_t bytes = 0;
  size_t kept = 0;
  for (size_t i = 0; i < out.size() && i + 1 < elements.size(); ++i) {
    if (!elements[i + 1].isTensor()) continue;
    at::Tensor t = elements[i + 1].toTensor();
    bytes += t.defined() ? t.numel() * t.element_size() : 0;
    if (bytes > max_bytes) {
      note = std::to_string(out.size() - kept) + " values after the first " + std::to_string(kept) +
             " left out (over " + std::to_string(max_bytes >> 20) + " MiB)";
      break;
    }
    out[kept] = {out[i].kind, out[i].name, t.defined() ? t.cpu() : t};
    ++kept;
  }
  out.resize(kept);
  return out;
}

c10::IValue PackIntermediates(const std::vector<Intermediate>& values) {
  c10::impl::GenericList list(c10::AnyType::get());
  for (const Intermediate& v : values) list.push_back(c10::ivalue::Tuple::create({v.kind, v.name, v.value}));
  return list;
}

std::vector<Intermediate> UnpackIntermediates(const c10::IValue& packed) {
  std::vector<Intermediate> out;
  if (!packed.isList()) return out;
  for (const c10::IValue& e : packed.toListRef()) {
    if (!e.isTuple()) continue;
    const auto& t = e.toTupleRef().elements();
    if (t.size() != 3 || !t[0].isString() || !t[1].isString() || !t[2].isTensor()) continue;
    out.push_back({t[0].toStringRef(), t[1].toStringRef(), t[2].toTensor()});
  }
  return out;
}

IntermediatesResult CompareIntermediates(const std::vector<Intermediate>& a, const std::vector<Intermediate>& b,
                                         const Tolerances& tol) {
  IntermediatesResult r;
  std::vector<std::pair<size_t, size_t>> pairs;
  bool same_kinds = a.size() == b.size();
  for (size_t i = 0; same_kinds && i < a.size(); ++i) same_kinds = a[i].kind == b[i].kind;
  if (same_kinds) {
    r.matched_by = "position";
    for (size_t i = 0; i < a.size(); ++i) pairs.push_back({i, i});
  } else {
    std::map<std::string, size_t> by_name;
    for (size_t j = 0; j < b.size(); ++j) by_name.emplace(b[j].name, j);
    bool all = !a.empty();
    for (size_t i = 0; all && i < a.size(); ++i) {
      auto it = by_name.find(a[i].name);
      all = it != by_name.end() && b[it->second].kind == a[i].kind;
      if (all) pairs.push_back({i, it->second});
    }
    if (all) {
      r.matched_by = "debug name";
    } else {
      // The graphs part somewhere: the values before that point are
      // matched by position, and the note says where they part.
      size_t k = 0;
      while (k < a.size() && k < b.size() && a[k].kind == b[k].kind) ++k;
      const std::string where = "the graphs part at value " + std::to_string(k + 1) + " (" +
                                (k < a.size() ? a[k].kind : std::string("none")) + " here, " +
                                (k < b.size() ? b[k].kind : std::string("none")) + " in the reference model; this model computes " +
                                std::to_string(a.size()) + " tensor values, the reference model " + std::to_string(b.size()) + ")";
      if (k == 0) {
        r.note = where + ": values are matched by position, or by debug name, only where the graphs agree";
        return r;
      }
      pairs.clear();
      for (size_t i = 0; i < k; ++i) pairs.push_back({i, i});
      r.matched_by = "position, up to where the graphs part";
      r.partial = true;
      r.note = where;
    }
  }
  r.compared = true;
  Tolerances one;
  one.rtol = {tol.rtol.empty() ? 1e-5 : tol.rtol.front()};
  one.atol = {tol.atol.empty() ? 1e-8 : tol.atol.front()};
  for (auto [i, j] : pairs) {
    std::vector<ReferenceLeaf> leaves;
    CompareValues(a[i].value, b[j].value, Label(a[i]), one, leaves);
    ++r.values;
    if (leaves.empty() || leaves[0].pass) continue;
    const ReferenceLeaf& leaf = leaves[0];
    r.first_divergence = static_cast<int64_t>(i);
    r.node = Label(a[i]);
    r.node_b = Label(b[j]);
    std::ostringstream d;
    d.precision(3);  // as torch.reference prints its statistics
    if (!leaf.error.empty()) {
      d << leaf.error;
    } else {
      d << "max abs difference " << leaf.max_abs << ", max rel " << leaf.max_rel << " (rtol " << leaf.rtol << ", atol "
        << leaf.atol << ")";
    }
    d << "; shape " << ShapeOf(a[i].value);
    r.detail = d.str();
    break;
  }
  return r;
}

}  // namespace tsctl
