#include "infer_inputs.h"

#include "infer_guards.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <set>
#include <sstream>

namespace tsctl {
namespace {

using torch::jit::Node;
using torch::jit::Value;

struct Shape {
  InputSpec spec;
  std::string note;
};

// A weight kept packed in an operator context: XNNPACK's prepacked
// convolution and linear contexts (optimize_for_mobile), quantized packed
// parameters (Conv2dPackedParamsBase, LinearPackedParamsBase).
struct PackedWeight {
  at::Tensor weight;  // as the unpacked module holds it: [out, in/groups, k...], transposed [in, out/groups, k...]
  int64_t groups = 1;
  bool transposed = false;
};

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

// The weight of a packed context, read the way the class serializes itself:
// XNNPACK contexts by their __getstate__ (a tuple whose first tensor is the
// weight and whose last plain int is the groups), quantized parameters by
// their unpack operators. nullopt for any other object.
std::optional<PackedWeight> Unpack(const c10::IValue& v) {
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

// Resolves graph values that come from the module: attributes reached from
// `self` through prim::GetAttr, constants, and a few views of them.
class Resolver {
 public:
  Resolver(const torch::jit::Module& module, Value* self) : module_(module), self_(self) {}

  c10::IValue Resolve(Value* v, std::string& name) const {
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

  std::optional<at::Tensor> Tensor(Value* v, std::string& name) const {
    c10::IValue r = Resolve(v, name);
    if (r.isList() && r.toListRef().size() > 0) r = r.toListRef()[0];
    if (!r.isTensor() || !r.toTensor().defined()) return std::nullopt;
    return r.toTensor();
  }

  std::optional<PackedWeight> Packed(Value* v, std::string& name) const {
    return Unpack(Resolve(v, name));
  }

  std::optional<std::vector<int64_t>> IntList(Value* v) const {
    auto c = torch::jit::toIValue(v);
    if (!c || !c->isIntList()) return std::nullopt;
    return c->toIntVector();
  }
  std::optional<int64_t> Int(Value* v) const { return ConstantInt(v); }
  bool Bool(Value* v, bool fallback) const {
    auto c = torch::jit::toIValue(v);
    return c && c->isBool() ? c->toBool() : fallback;
  }

 private:
  const torch::jit::Module& module_;
  Value* self_;
};

std::string Dims(const at::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

InputSpec Spec(std::vector<int64_t> shape, std::string dtype = "float32") {
  InputSpec s;
  s.shape = std::move(shape);
  s.dtype = std::move(dtype);
  return s;
}

std::string FloatDtype(const at::Tensor& w) {
  switch (w.scalar_type()) {
    case at::kDouble: return "float64";
    default: return "float32";  // half/bfloat16 weights still run on float32 inputs on the CPU rarely; float32 is the safe guess
  }
}

// Input shapes a convolution weight implies: its input channels (times the
// groups; a transposed one's first dimension) and its rank.
std::vector<Shape> ConvShapes(const at::Tensor& w, int64_t groups, bool transposed, const std::string& note) {
  std::vector<Shape> out;
  const int64_t c = transposed ? w.size(0) : w.size(1) * groups;
  const std::string dt = FloatDtype(w);
  if (w.dim() == 3) {
    for (int64_t l : {16000, 1024, 128, 32}) out.push_back({Spec({1, c, l}, dt), note});
  } else if (w.dim() == 4) {
    for (int64_t hw : {224, 64, 32, 28, 128, 256}) out.push_back({Spec({1, c, hw, hw}, dt), note});
  } else if (w.dim() == 5) {
    for (auto d : std::vector<std::vector<int64_t>>{{8, 32, 32}, {16, 64, 64}, {4, 16, 16}}) {
      out.push_back({Spec({1, c, d[0], d[1], d[2]}, dt), note});
    }
  }
  return out;
}

// The smallest shape of `x` in which every slice, select and narrow with
// constant bounds that the code takes of it (or of a slice of it) is whole:
// a traced graph records the bounds of its example (`x[:, 1:4, 0:3]`).
// nullopt if no bound asks for more than 1.
std::optional<std::vector<int64_t>> SlicedShape(Value* x) {
  std::vector<int64_t> need;
  auto require = [&](int64_t dim, int64_t size) {
    if (dim < 0 || dim > 5 || size < 1 || size > 4096) return;
    if (need.size() <= static_cast<size_t>(dim)) need.resize(static_cast<size_t>(dim) + 1, 1);
    need[static_cast<size_t>(dim)] = std::max(need[static_cast<size_t>(dim)], size);
  };
  // A constant int, or `none` for a None bound (x[1:] ends at None).
  auto constant = [](Value* v, int64_t none) -> std::optional<int64_t> {
    auto c = torch::jit::toIValue(v);
    return c && c->isNone() ? std::optional<int64_t>(none) : ConstantInt(v);
  };
  constexpr int64_t kAll = int64_t{1} << 40;
  std::function<void(Value*, std::vector<int64_t>, int)> walk = [&](Value* v, std::vector<int64_t> offset, int depth) {
    if (depth > 4) return;
    for (const torch::jit::Use& use : v->uses()) {
      Node* n = use.user;
      const std::string k = n->kind().toQualString();
      if (use.offset != 0 || n->inputs().size() < 3) continue;
      auto dim = constant(n->input(1), -1);
      if (!dim || *dim < 0 || *dim > 5) continue;
      offset.resize(std::max(offset.size(), static_cast<size_t>(*dim) + 1), 0);
      const int64_t at = offset[static_cast<size_t>(*dim)];
      if (k == "aten::slice" && n->inputs().size() >= 4) {
        auto start = constant(n->input(2), 0), end = constant(n->input(3), kAll);
        if (!start || !end) continue;
        if (*start < 0) {
          require(*dim, at - *start);
          continue;
        }
        require(*dim, at + (*end > 0 && *end < kAll ? *end : *start + 1));
        std::vector<int64_t> next = offset;
        next[static_cast<size_t>(*dim)] += *start;
        walk(n->output(0), next, depth + 1);
      } else if (k == "aten::select") {
        auto index = constant(n->input(2), 0);
        if (index) require(*dim, *index >= 0 ? at + *index + 1 : at - *index);
      } else if (k == "aten::narrow" && n->inputs().size() >= 4) {
        auto start = constant(n->input(2), 0), length = constant(n->input(3), 0);
        if (!start || !length || *start < 0) continue;
        require(*dim, at + *start + *length);
        std::vector<int64_t> next = offset;
        next[static_cast<size_t>(*dim)] += *start;
        walk(n->output(0), next, depth + 1);
      }
    }
  };
  walk(x, {}, 0);
  if (std::all_of(need.begin(), need.end(), [](int64_t d) { return d <= 1; })) return std::nullopt;
  return need;
}

// Operators whose second argument is a packed weight (see Unpack).
const std::set<std::string> kPackedOps = {
    "prepacked::conv2d_clamp_run", "prepacked::conv2d_transpose_clamp_run", "prepacked::linear_clamp_run",
    "quantized::conv2d",           "quantized::conv2d_relu",                "quantized::conv3d",
    "quantized::conv3d_relu",      "quantized::conv_transpose2d",           "quantized::conv_transpose3d",
    "quantized::linear",           "quantized::linear_relu",                "quantized::linear_dynamic",
    "quantized::linear_relu_dynamic", "quantized::linear_dynamic_fp16"};

// Shapes the first informative consumer of `x` implies, in the order found.
std::vector<Shape> ShapesFromGraph(Value* x, const Resolver& r) {
  static const std::set<std::string> kTransparent = {
      "aten::contiguous", "aten::to",      "aten::float",   "aten::detach",  "aten::clone",      "aten::relu",
      "aten::relu_",      "aten::dropout", "aten::type_as", "aten::mul",     "aten::add",        "aten::sub",
      "aten::div",        "aten::sigmoid", "aten::tanh",    "aten::neg",     "aten::abs",        "aten::clamp",
      "aten::hardtanh",   "aten::sub_",    "aten::div_",    "aten::mul_",    "aten::add_",       "aten::quantize_per_tensor",
      "aten::dequantize", "prim::unchecked_cast", "aten::_cast_Float", "aten::sqrt", "aten::exp", "aten::log",
      "aten::pad", "aten::constant_pad_nd", "aten::reflection_pad1d", "aten::reflection_pad2d",
      "aten::replication_pad1d", "aten::replication_pad2d"};
  std::vector<Shape> out;
  std::deque<std::pair<Value*, int>> queue = {{x, 0}};
  std::set<Value*> seen;
  bool sliced = false;
  auto add = [&](InputSpec s, std::string note) { out.push_back({std::move(s), std::move(note)}); };
  while (!queue.empty() && out.size() < 16) {
    auto [v, depth] = queue.front();
    queue.pop_front();
    if (!seen.insert(v).second || depth > 10) continue;
    for (const torch::jit::Use& use : v->uses()) {
      Node* n = use.user;
      const std::string k = n->kind().toQualString();
      const size_t at = use.offset;
      std::string wname;
      if (at == 0 && (k == "aten::conv1d" || k == "aten::conv2d" || k == "aten::conv3d" || k == "aten::_convolution" ||
                      k == "aten::convolution" || k == "aten::conv_transpose1d" || k == "aten::conv_transpose2d" ||
                      k == "aten::conv_transpose3d")) {
        auto w = r.Tensor(n->input(1), wname);
        if (!w || w->dim() < 3) continue;
        bool transposed = k.find("transpose") != std::string::npos;
        int64_t groups = 1;
        if (k == "aten::_convolution" || k == "aten::convolution") {
          transposed = n->inputs().size() > 6 && r.Bool(n->input(6), false);
          if (n->inputs().size() > 8) groups = r.Int(n->input(8)).value_or(1);
        } else if (n->inputs().size() > 6) {
          groups = r.Int(n->input(6)).value_or(1);
        }
        for (Shape& g : ConvShapes(*w, groups, transposed, "from " + wname + " " + Dims(*w))) out.push_back(std::move(g));
      } else if (at == 0 && kPackedOps.count(k)) {
        auto p = r.Packed(n->input(1), wname);
        if (!p) continue;
        std::string note = "from " + wname + " " + Dims(p->weight) + " (packed by " + k + ")";
        if (p->weight.dim() == 2) {
          add(Spec({1, p->weight.size(1)}), note);
          add(Spec({1, 8, p->weight.size(1)}), note);
        } else {
          for (Shape& g : ConvShapes(p->weight, p->groups, p->transposed, note)) out.push_back(std::move(g));
        }
      } else if (at == 0 && (k == "aten::linear" || k == "aten::matmul" || k == "aten::mm")) {
        auto w = r.Tensor(n->input(1), wname);
        if (!w || w->dim() != 2) continue;
        int64_t in = k == "aten::linear" ? w->size(1) : w->size(0);
        std::string note = "from " + wname + " " + Dims(*w);
        add(Spec({1, in}, FloatDtype(*w)), note);
        add(Spec({1, 8, in}, FloatDtype(*w)), note);
      } else if (at == 1 && k == "aten::mv") {
        // A matrix times the argument: a vector as long as the matrix is wide.
        auto w = r.Tensor(n->input(0), wname);
        if (!w || w->dim() != 2) continue;
        add(Spec({w->size(1)}, FloatDtype(*w)), "from " + wname + " " + Dims(*w) + " (a matrix-vector product)");
      } else if (at == 0 && (k == "aten::slice" || k == "aten::select" || k == "aten::narrow") && !sliced) {
        sliced = true;
        if (auto shape = SlicedShape(v)) {
          std::ostringstream note;
          note << "the smallest shape whose constant slices are whole " << c10::IntArrayRef(*shape);
          add(Spec(*shape), note.str());
        }
      } else if (at == 1 && k == "aten::addmm") {
        auto w = r.Tensor(n->input(2), wname);
        if (!w || w->dim() != 2) continue;
        add(Spec({1, w->size(0)}, FloatDtype(*w)), "from " + wname + " " + Dims(*w));
      } else if (at == 1 && (k == "aten::embedding" || k == "aten::embedding_bag")) {
        auto w = r.Tensor(n->input(0), wname);
        if (!w || w->dim() != 2) continue;
        std::string note = "from " + wname + " " + Dims(*w);
        for (auto shape : std::vector<std::vector<int64_t>>{{1, 16}, {1, 8}, {16}}) {
          InputSpec s = Spec(shape, "int64");
          s.fill = InputSpec::Fill::kRandint;
          s.low = 0;
          s.high = static_cast<double>(std::max<int64_t>(1, w->size(0)));
          add(s, note);
        }
      } else if (at == 0 && (k == "aten::lstm" || k == "aten::gru" || k == "aten::rnn_tanh" || k == "aten::rnn_relu") &&
                 n->inputs().size() > 8) {
        auto w = r.Tensor(n->input(2), wname);
        if (!w || w->dim() != 2) continue;
        bool batch_first = r.Bool(n->input(8), false);
        std::string note = "from " + wname + " " + Dims(*w);
        int64_t in = w->size(1);
        add(Spec(batch_first ? std::vector<int64_t>{1, 16, in} : std::vector<int64_t>{16, 1, in}, FloatDtype(*w)), note);
        add(Spec({16, in}, FloatDtype(*w)), note);
      } else if (at == 0 && (k == "aten::batch_norm" || k == "aten::instance_norm")) {
        auto w = r.Tensor(n->input(1), wname);
        if (!w || w->dim() != 1) continue;
        std::string note = "from " + wname + " " + Dims(*w);
        int64_t c = w->size(0);
        add(Spec({1, c, 32, 32}, FloatDtype(*w)), note);
        add(Spec({2, c}, FloatDtype(*w)), note);
        add(Spec({1, c, 16}, FloatDtype(*w)), note);
      } else if (at == 0 && k == "aten::group_norm" && n->inputs().size() > 2) {
        auto w = r.Tensor(n->input(2), wname);
        if (!w || w->dim() != 1) continue;
        add(Spec({1, w->size(0), 32, 32}, FloatDtype(*w)), "from " + wname + " " + Dims(*w));
      } else if (at == 0 && k == "aten::layer_norm") {
        auto ns = r.IntList(n->input(1));
        if (!ns) continue;
        std::vector<int64_t> a = {1, 16}, b = {1};
        a.insert(a.end(), ns->begin(), ns->end());
        b.insert(b.end(), ns->begin(), ns->end());
        std::ostringstream note;
        note << "from layer_norm's normalized shape " << c10::IntArrayRef(*ns);
        add(Spec(a), note.str());
        add(Spec(b), note.str());
      } else if (at == 0 && (k == "aten::view" || k == "aten::reshape")) {
        auto dims = r.IntList(n->input(1));
        if (!dims) {
          // Sizes computed from the input itself (torch.stft's view to 3-D
          // and back): what comes after still sees the input's values.
          queue.push_back({n->output(0), depth + 1});
          continue;
        }
        int unknown = 0;
        for (int64_t& d : *dims) {
          if (d == -1) {
            ++unknown;
            d = 1;
          }
        }
        if (unknown > 1) continue;
        std::ostringstream note;
        note << "from " << k.substr(6) << " to " << c10::IntArrayRef(*r.IntList(n->input(1)));
        add(Spec(*dims), note.str());
      } else if (at == 0 && (k == "aten::max_pool2d" || k == "aten::avg_pool2d" || k == "aten::adaptive_avg_pool2d" ||
                             k == "aten::upsample_nearest2d" || k == "aten::upsample_bilinear2d" || k == "aten::pixel_shuffle")) {
        for (auto shape : std::vector<std::vector<int64_t>>{{1, 3, 224, 224}, {1, 1, 28, 28}, {1, 3, 64, 64}}) add(Spec(shape), "4-d: used by " + k);
      } else if (at == 0 && k == "aten::stft") {
        add(Spec({1, 16000}), "audio: used by aten::stft");
      } else if (at == 0 && kTransparent.count(k) && n->outputs().size() == 1) {
        queue.push_back({n->output(0), depth + 1});
      } else if (Value* result = IfResult(use)) {
        // Returned by a branch (an optional padding, a check): the If's value.
        queue.push_back({result, depth + 1});
      } else if (k == "prim::Loop" && at >= 2 && !n->blocks().empty() && at - 1 < n->blocks()[0]->inputs().size()) {
        // A loop-carried value: follow it into the loop body.
        queue.push_back({n->blocks()[0]->inputs()[at - 1], depth + 1});
      }
    }
  }
  return out;
}

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

}  // namespace

std::vector<InputCandidate> InferInputCandidates(const torch::jit::Module& module, const torch::jit::Method& method,
                                                 size_t max_candidates) {
  const c10::FunctionSchema& schema = method.function().getSchema();
  const auto& formal = schema.arguments();
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
      // An int the code compares with constants (`if sr != 16000: raise`)
      // takes the first of them.
      try {
        Resolver resolver(module, graph->inputs()[0]);
        std::vector<int64_t> compared = IntsComparedWith(graph->inputs()[i], [&](Value* v) {
          std::string unused;
          return resolver.Resolve(v, unused);
        });
        if (!compared.empty()) ints[i] = compared.front();
      } catch (const std::exception&) {
      }
    }
    std::vector<Shape> s;
    const bool tensor_list = IsTensorList(formal[i].type());
    if (graph && (formal[i].type()->kind() == c10::TypeKind::TensorType || tensor_list) && i < graph->inputs().size()) {
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
    for (Shape& g : GenericShapes(formal[i].name())) s.push_back(std::move(g));
    if (graph && i < graph->inputs().size() && formal[i].type()->kind() == c10::TypeKind::TensorType) {
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
    shapes[i] = std::move(unique);
    rounds = std::max(rounds, shapes[i].size());
  }
  std::vector<InputCandidate> out;
  for (size_t k = 0; k < std::min(rounds, max_candidates); ++k) {
    InputCandidate c;
    for (size_t i = 1; i < formal.size(); ++i) {
      if (formal[i].default_value()) continue;
      const Shape& s = shapes[i][std::min(k, shapes[i].size() - 1)];
      nlohmann::json v = ints[i] ? nlohmann::json(*ints[i]) : DefaultSpelling(formal[i].type(), s.spec.ToString());
      c.args.push_back({formal[i].name(), v.is_string() && formal[i].type()->kind() == c10::TypeKind::TensorType
                                              ? v.get<std::string>()
                                              : v.dump()});
      if (formal[i].type()->kind() == c10::TypeKind::TensorType || IsTensorList(formal[i].type())) {
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
