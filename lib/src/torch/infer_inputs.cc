#include "infer_inputs.h"

#include "graph_shapes.h"
#include "infer_guards.h"

#include <torch/csrc/jit/passes/inliner.h>

#include <nlohmann/json.hpp>

#include <set>

namespace tsctl {
namespace {

using torch::jit::Value;

std::vector<Shape> GenericShapes(const std::string& arg_name) {
  std::vector<Shape> out;
  std::string lower;
  for (char c : arg_name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("ids") != std::string::npos || lower.find("token") != std::string::npos || lower.find("index") != std::string::npos) {
    InputSpec s = Spec({1, 16}, "int64");
    s.fill = InputSpec::Fill::kRandint;
    s.low = 0;
    s.high = 100;
    out.push_back({s, "token ids by the argument's name"});
  }
  for (auto shape : std::vector<std::vector<int64_t>>{{1, 3, 224, 224}, {1, 3, 64, 64}, {1, 1, 28, 28}, {1, 16},
                                                     {1, 1, 16000}, {1, 10}, {16}, {1, 3, 32, 32}}) {
    out.push_back({Spec(shape), "a common shape (the graph does not pin it)"});
  }
  return out;
}

// The spelling of a plain value for a non-tensor argument without a default.
nlohmann::json DefaultSpelling(const c10::TypePtr& type, const std::string& tensor) {
  using c10::TypeKind;
  switch (type->kind()) {
    case TypeKind::TensorType: return tensor;
    case TypeKind::IntType:
    case TypeKind::NumberType: return 1;
    case TypeKind::FloatType: return 1.0;
    case TypeKind::BoolType: return false;
    case TypeKind::StringType: return "";
    case TypeKind::DeviceObjType: return "cpu";
    case TypeKind::ListType: {
      nlohmann::json a = nlohmann::json::array();
      a.push_back(DefaultSpelling(type->expectRef<c10::ListType>().getElementType(), tensor));
      return a;
    }
    case TypeKind::TupleType: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& e : type->expectRef<c10::TupleType>().elements()) a.push_back(DefaultSpelling(e, tensor));
      return a;
    }
    case TypeKind::DictType: {
      const auto& d = type->expectRef<c10::DictType>();
      nlohmann::json o = nlohmann::json::object();
      std::string key = d.getKeyType()->kind() == TypeKind::IntType ? "0" : "input";
      o[key] = DefaultSpelling(d.getValueType(), tensor);
      return o;
    }
    default: return nullptr;  // Optional, None, and what cannot be spelled
  }
}

bool IsTensorList(const c10::TypePtr& type) {
  return type->kind() == c10::TypeKind::ListType &&
         type->expectRef<c10::ListType>().getElementType()->kind() == c10::TypeKind::TensorType;
}

// The values that stand for the elements of a list input: what indexing it
// (aten::__getitem__, also inside a loop's body, which uses the list
// directly) or unpacking it (prim::ListUnpack) gives.
std::vector<Value*> ListElements(Value* list) {
  std::vector<Value*> out;
  for (const torch::jit::Use& use : list->uses()) {
    const std::string k = use.user->kind().toQualString();
    if (k == "aten::__getitem__" && use.offset == 0) out.push_back(use.user->output(0));
    if (k == "prim::ListUnpack") {
      for (Value* o : use.user->outputs()) out.push_back(o);
    }
  }
  return out;
}

// The int constant an int argument is compared with first (`if sr !=
// 16000: raise`), which is the value the method accepts.
std::optional<int64_t> ComparedInt(const torch::jit::Module& module, torch::jit::Graph& graph, size_t i) {
  try {
    Resolver resolver(module, graph.inputs()[0]);
    std::vector<int64_t> compared = IntsComparedWith(graph.inputs()[i], [&](Value* v) {
      std::string unused;
      return resolver.Resolve(v, unused);
    });
    if (!compared.empty()) return compared.front();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The candidate shapes of tensor argument `i` (or of the elements of a
// tensor list), most likely first, without repeats: from the graph's
// consumers, then generic ones, each made to pass the method's own guards.
std::vector<Shape> ArgumentShapes(const torch::jit::Module& module, torch::jit::Graph* graph,
                                  const c10::Argument& formal, size_t i) {
  std::vector<Shape> s;
  const bool tensor = formal.type()->kind() == c10::TypeKind::TensorType;
  const bool tensor_list = IsTensorList(formal.type());
  const bool in_graph = graph && i < graph->inputs().size();
  if (in_graph && (tensor || tensor_list)) {
    try {
      Resolver resolver(module, graph->inputs()[0]);
      for (Value* x : tensor_list ? ListElements(graph->inputs()[i]) : std::vector<Value*>{graph->inputs()[i]}) {
        for (Shape& g : ShapesFromGraph(x, resolver)) s.push_back(std::move(g));
      }
    } catch (const std::exception&) {
      s.clear();
    }
  }
  if (tensor_list) {
    // A list of tensors is most often a batch of images, one (C, H, W) each,
    // as torchvision's and detectron2's detection models take them.
    for (auto shape : std::vector<std::vector<int64_t>>{{3, 224, 224}, {3, 320, 320}}) {
      s.push_back({Spec(shape), "an image (C, H, W) per list element, as detection models take"});
    }
  }
  for (Shape& g : GenericShapes(formal.name())) s.push_back(std::move(g));
  if (in_graph && tensor) {
    // The method's own checks (rank, sizes) before it raises: every
    // candidate is made to pass them.
    try {
      const TensorGuards guards(graph->inputs()[i]);
      if (!guards.empty()) {
        for (Shape& g : s) {
          const std::string why = guards.Apply(g.spec.shape);
          if (!why.empty()) g.note += " (" + why + ")";
        }
      }
    } catch (const std::exception&) {
    }
  }
  // Drop repeats, keep the first note.
  std::vector<Shape> unique;
  std::set<std::string> seen;
  for (Shape& x : s) {
    if (seen.insert(x.spec.ToString()).second) unique.push_back(std::move(x));
  }
  return unique;
}

}  // namespace

std::vector<InputCandidate> InferInputCandidates(const torch::jit::Module& module, const torch::jit::Method& method,
                                                 size_t max_candidates) {
  const auto& formal = method.function().getSchema().arguments();
  std::shared_ptr<torch::jit::Graph> graph;
  try {
    graph = method.graph()->copy();
    torch::jit::Inline(*graph);
  } catch (const std::exception&) {
    graph.reset();
  }
  // Per argument without a default: its candidate shapes (tensors) or none.
  std::vector<std::vector<Shape>> shapes(formal.size());
  std::vector<std::optional<int64_t>> ints(formal.size());
  size_t rounds = 1;
  for (size_t i = 1; i < formal.size(); ++i) {
    if (formal[i].default_value()) continue;
    if (graph && i < graph->inputs().size() && formal[i].type()->kind() == c10::TypeKind::IntType) {
      ints[i] = ComparedInt(module, *graph, i);
    }
    shapes[i] = ArgumentShapes(module, graph.get(), formal[i], i);
    rounds = std::max(rounds, shapes[i].size());
  }
  // Candidate k takes each argument's k-th shape (or its last).
  std::vector<InputCandidate> out;
  for (size_t k = 0; k < std::min(rounds, max_candidates); ++k) {
    InputCandidate c;
    for (size_t i = 1; i < formal.size(); ++i) {
      if (formal[i].default_value()) continue;
      const Shape& s = shapes[i][std::min(k, shapes[i].size() - 1)];
      const bool tensor = formal[i].type()->kind() == c10::TypeKind::TensorType;
      nlohmann::json v = ints[i] ? nlohmann::json(*ints[i]) : DefaultSpelling(formal[i].type(), s.spec.ToString());
      c.args.push_back({formal[i].name(), v.is_string() && tensor ? v.get<std::string>() : v.dump()});
      if (tensor || IsTensorList(formal[i].type())) {
        c.note += (c.note.empty() ? "" : "; ") + formal[i].name() + " " + s.note;
      } else if (ints[i]) {
        c.note += (c.note.empty() ? "" : "; ") + formal[i].name() + " " + std::to_string(*ints[i]) +
                  ", a constant the method compares it with";
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<c10::IValue> BundledInputs(torch::jit::Module& module, const std::string& method, std::string& source) {
  std::string name = "get_all_bundled_inputs_for_" + method;
  auto m = module.find_method(name);
  if (!m && method == "forward") {
    name = "get_all_bundled_inputs";
    m = module.find_method(name);
  }
  if (!m) return {};
  c10::IValue all = (*m)(std::vector<c10::IValue>{});
  if (!all.isList() || all.toListRef().empty()) return {};
  c10::IValue first = all.toListRef()[0];
  std::vector<c10::IValue> values;
  if (first.isTuple()) {
    for (const auto& v : first.toTupleRef().elements()) values.push_back(v);
  } else if (first.isList()) {
    for (const auto& v : first.toListRef()) values.push_back(v);
  } else {
    return {};
  }
  source = "bundled inputs (" + name + ")";
  return values;
}

}  // namespace tsctl
