#include "weight_checks.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "graph_shapes.h"

#include <torch/csrc/jit/passes/inliner.h>

namespace tsctl {
namespace {

std::string Sizes(at::IntArrayRef s) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < s.size(); ++i) out << (i ? ", " : "") << s[i];
  out << ']';
  return out.str();
}

// The shape of a context's weight as the unpacked module holds it, and its
// groups.
struct Known {
  std::vector<int64_t> shape;
  int64_t groups = 1;
};

// Callbacks are plain function pointers: their state is global.
struct State {
  std::mutex mu;
  std::string first;
  // By context object; nullopt where the context cannot say (weights
  // released after packing). Cleared when the checks end.
  std::unordered_map<const void*, std::optional<Known>> weights;
  std::unordered_set<const void*> stored;  // the data of the model's stored tensors
};

State& G() {
  static State s;
  return s;
}

// Inside the callback, reading a context's weight runs its __getstate__,
// which may call operators of its own.
thread_local bool in_check = false;

std::optional<Known> WeightOf(const c10::IValue& ctx) {
  if (!ctx.isObject()) return std::nullopt;
  const void* key = &ctx.toObjectRef();
  State& g = G();
  {
    std::lock_guard<std::mutex> lock(g.mu);
    auto it = g.weights.find(key);
    if (it != g.weights.end()) return it->second;
  }
  std::optional<Known> known;
  if (std::optional<PackedWeight> p = UnpackWeight(ctx)) known = Known{p->weight.sizes().vec(), p->groups};
  std::lock_guard<std::mutex> lock(g.mu);
  g.weights[key] = known;
  return known;
}

// The contradiction between `input` and the weight of operator `op`, in the
// words of the operator it replaced; "" if none.
std::string Contradiction(const std::string& op, const at::Tensor& input, const Known& w) {
  const auto in = input.sizes();
  if (op == "prepacked::linear_clamp_run") {
    // aten::linear's addmm/matmul: the last size against in_features.
    if (w.shape.size() != 2 || in.empty() || in.back() == w.shape[1]) return "";
    const int64_t rows = in.back() > 0 ? input.numel() / in.back() : 0;
    return op + " read " + std::to_string(w.shape[1]) + " of the " + std::to_string(in.back()) +
           " values of each row where aten::linear would have refused: mat1 and mat2 shapes cannot be multiplied (" +
           std::to_string(rows) + "x" + std::to_string(in.back()) + " and " + std::to_string(w.shape[1]) + "x" +
           std::to_string(w.shape[0]) + ")";
  }
  // aten::_convolution's check_input_shape_forward: input channels against
  // weight.size(1) * groups, or weight.size(0) for a transposed convolution.
  const bool transposed = op == "prepacked::conv2d_transpose_clamp_run";
  if (w.shape.size() != 4 || in.size() != 4) return "";
  const int64_t want = transposed ? w.shape[0] : w.shape[1] * w.groups;
  if (in[1] == want) return "";
  return op + " took " + std::to_string(in[1]) + " input channels where aten::conv2d" +
         (transposed ? "_transpose" : "") + " would have refused: Given " +
         (transposed ? "transposed=1" : "groups=" + std::to_string(w.groups)) + ", weight of size " + Sizes(w.shape) +
         ", expected input" + Sizes(in) + " to have " + std::to_string(want) + " channels, but got " +
         std::to_string(in[1]) + " channels instead";
}

// An elementwise operator broadcasting a column computed from the inputs
// against a stored tensor's feature: "aten::sub broadcasts [16, 1] from the
// inputs against the stored [37, 8]: ..."; "" if not.
std::string BroadcastAgainstStored(const std::string& op, const c10::IValue& x, const c10::IValue& y) {
  if (!x.isTensor() || !y.isTensor()) return "";
  const at::Tensor &a = x.toTensor(), &b = y.toTensor();
  if (!a.defined() || !b.defined()) return "";
  const State& g = G();
  const bool sa = g.stored.count(a.data_ptr()) > 0, sb = g.stored.count(b.data_ptr()) > 0;
  if (sa == sb) return "";
  const at::Tensor &stored = sa ? a : b, &other = sa ? b : a;
  // A stored row or vector made to broadcast ([1, 8], [8]: a timestep's
  // frequencies) is no table of rows.
  if (!IsTable(stored.sizes())) return "";
  if (other.dim() < 2 || other.size(-1) != 1 || other.numel() < 2) return "";
  return op + " broadcasts " + Sizes(other.sizes()) + " from the inputs against the stored " + Sizes(stored.sizes()) +
         ": its last size, " + std::to_string(stored.size(-1)) + ", is a feature the input's rows must have";
}

std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
  if (in_check) return nullptr;
  const char* name = fn.name();
  if (!name) return nullptr;
  if (std::strncmp(name, "aten::", 6) == 0 && !G().stored.empty() && IsElementwise(name)) {
    const auto inputs = fn.inputs();
    const std::string why = inputs.size() >= 2 ? BroadcastAgainstStored(name, inputs[0], inputs[1]) : std::string();
    if (!why.empty()) {
      std::lock_guard<std::mutex> lock(G().mu);
      if (G().first.empty()) G().first = why;
    }
    return nullptr;
  }
  if (std::strncmp(name, "prepacked::", 11) != 0) return nullptr;
  const std::string op = name;
  if (op != "prepacked::linear_clamp_run" && op != "prepacked::conv2d_clamp_run" &&
      op != "prepacked::conv2d_transpose_clamp_run") {
    return nullptr;
  }
  in_check = true;
  try {
    auto inputs = fn.inputs();
    if (inputs.size() >= 2 && inputs[0].isTensor()) {
      if (std::optional<Known> w = WeightOf(inputs[1])) {
        std::string why = Contradiction(op, inputs[0].toTensor(), *w);
        if (!why.empty()) {
          std::lock_guard<std::mutex> lock(G().mu);
          if (G().first.empty()) G().first = why;
        }
      }
    }
  } catch (const std::exception&) {
    // A context that cannot say its weight: nothing to compare.
  }
  in_check = false;
  return nullptr;
}

}  // namespace

bool IsElementwise(const std::string& op) {
  static const std::unordered_set<std::string> k = {"aten::add", "aten::sub", "aten::mul", "aten::div", "aten::rsub",
                                                    "aten::add_", "aten::sub_", "aten::mul_", "aten::div_"};
  return k.count(op) > 0;
}

bool IsTable(at::IntArrayRef sizes) {
  return sizes.size() >= 2 && std::all_of(sizes.begin(), sizes.end(), [](int64_t d) { return d >= 2; });
}

bool ElementwiseOnStored(const torch::jit::Method& method) try {
  std::shared_ptr<torch::jit::Graph> g = method.graph()->copy();
  torch::jit::Inline(*g);
  std::function<bool(torch::jit::Block*)> walk = [&](torch::jit::Block* b) {
    for (torch::jit::Node* n : b->nodes()) {
      for (torch::jit::Block* inner : n->blocks()) {
        if (walk(inner)) return true;
      }
      if (!IsElementwise(n->kind().toQualString())) continue;
      for (torch::jit::Value* v : n->inputs()) {
        if (v->node()->kind() == c10::prim::GetAttr && v->type()->kind() == c10::TypeKind::TensorType) return true;
      }
    }
    return false;
  };
  return walk(g->block());
} catch (const std::exception&) {
  return false;
}

std::unordered_set<const void*> StoredData(const torch::jit::Module& module) {
  std::unordered_set<const void*> out;
  for (const auto& a : module.named_attributes(/*recurse=*/true)) {
    if (a.value.isTensor() && a.value.toTensor().defined()) out.insert(a.value.toTensor().data_ptr());
  }
  return out;
}

PackedOpChecks::PackedOpChecks(std::unordered_set<const void*> stored) {
  {
    std::lock_guard<std::mutex> lock(G().mu);
    G().first.clear();
    G().weights.clear();
    G().stored = std::move(stored);
  }
  at::RecordFunctionCallback cb(&OnStart);
  cb.needsInputs(true).scopes({at::RecordScope::FUNCTION});
  handle_ = at::addGlobalCallback(cb);
}

PackedOpChecks::~PackedOpChecks() {
  at::removeCallback(handle_);
  std::lock_guard<std::mutex> lock(G().mu);
  G().weights.clear();
  G().stored.clear();
}

std::string PackedOpChecks::Take() {
  std::lock_guard<std::mutex> lock(G().mu);
  std::string first;
  first.swap(G().first);
  return first;
}

}  // namespace tsctl
