#include "graph_shapes.h"

#include "graph_layout.h"
#include "infer_guards.h"
#include "refine_inputs.h"
#include "weight_checks.h"

#include <torch/csrc/jit/ir/constants.h>

#include <deque>
#include <functional>
#include <set>
#include <sstream>

namespace tsctl {
namespace {

using torch::jit::Node;
using torch::jit::Use;
using torch::jit::Value;

std::string Dims(const at::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
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
    // A transposed convolution grows a small map (a generator's 1x1 latent).
    const std::vector<int64_t> sides = transposed ? std::vector<int64_t>{1, 4, 7, 16, 32, 224} : std::vector<int64_t>{224, 64, 32, 28, 128, 256};
    for (int64_t hw : sides) out.push_back({Spec({1, c, hw, hw}, dt), note});
  } else if (w.dim() == 5) {
    for (auto d : std::vector<std::vector<int64_t>>{{8, 32, 32}, {16, 64, 64}, {4, 16, 16}}) {
      out.push_back({Spec({1, c, d[0], d[1], d[2]}, dt), note});
    }
  }
  return out;
}

// Operators whose second argument is a packed weight (see Unpack).
const std::set<std::string> kPackedOps = {
    "prepacked::conv2d_clamp_run", "prepacked::conv2d_transpose_clamp_run", "prepacked::linear_clamp_run",
    "quantized::conv2d",           "quantized::conv2d_relu",                "quantized::conv3d",
    "quantized::conv3d_relu",      "quantized::conv_transpose2d",           "quantized::conv_transpose3d",
    "quantized::linear",           "quantized::linear_relu",                "quantized::linear_dynamic",
    "quantized::linear_relu_dynamic", "quantized::linear_dynamic_fp16"};

}  // namespace

InputSpec Spec(std::vector<int64_t> shape, std::string dtype) {
  InputSpec s;
  s.shape = std::move(shape);
  s.dtype = std::move(dtype);
  return s;
}

namespace {
// Operators that pass their first argument's shape on (elementwise,
// casts, padding, quantize/dequantize): the walk follows their result.
const std::set<std::string> kTransparent = {
    "aten::contiguous", "aten::to",      "aten::float",   "aten::detach",  "aten::clone",      "aten::relu",
    "aten::relu_",      "aten::dropout", "aten::type_as", "aten::mul",     "aten::add",        "aten::sub",
    "aten::div",        "aten::sigmoid", "aten::tanh",    "aten::neg",     "aten::abs",        "aten::clamp",
    "aten::hardtanh",   "aten::sub_",    "aten::div_",    "aten::mul_",    "aten::add_",       "aten::quantize_per_tensor",
    "aten::dequantize", "prim::unchecked_cast", "aten::_cast_Float", "aten::sqrt", "aten::exp", "aten::log",
    "aten::pad", "aten::constant_pad_nd", "aten::reflection_pad1d", "aten::reflection_pad2d",
    "aten::replication_pad1d", "aten::replication_pad2d"};

bool IsConvolution(const std::string& k) {
  return k == "aten::conv1d" || k == "aten::conv2d" || k == "aten::conv3d" || k == "aten::_convolution" ||
         k == "aten::convolution" || k == "aten::conv_transpose1d" || k == "aten::conv_transpose2d" ||
         k == "aten::conv_transpose3d";
}

// The breadth-first walk of ShapesFromGraph. Each use of a value is judged
// by one family of operators (the first that claims its kind): weights,
// norms, layout (slices, views, pools), or traversal to the values it
// passes the input on to, through layout operators that are undone for
// the argument's shape.
class ShapeWalk {
 public:
  ShapeWalk(Value* x, const Resolver& r) : r_(r), queue_{{x, 0, {}}} {}

  std::vector<Shape> Run() {
    Indices();
    while (!queue_.empty() && out_.size() < 16) {
      Queued q = queue_.front();
      queue_.pop_front();
      if (!seen_.insert(q.v).second || q.depth > 10) continue;
      undo_ = q.undo;
      for (const Use& use : q.v->uses()) {
        const std::string k = use.user->kind().toQualString();
        if (Convolution(use, k) || Matrix(use, k) || Norm(use, k) || Stored(use, k) || Layout(use, k, q.v, q.depth)) continue;
        Follow(use, k, q.depth);
      }
    }
    return std::move(out_);
  }

 private:
  struct Queued {
    Value* v;
    int depth;
    std::vector<Undo> undo;  // the layout operators from the argument to v, in order
  };

  // A shape proposed for the value being walked, as the argument's shape
  // (the layout operators on the way undone); dropped where they cannot
  // have produced it. Sizes past the batch and the one read (`fixed`
  // leading dimensions) count as free: spatial sizes, a sequence length.
  void Add(InputSpec s, std::string note, size_t fixed = 0) {
    std::vector<bool> free(s.shape.size(), false);
    for (size_t i = 0; i < free.size(); ++i) free[i] = fixed > 0 && i >= fixed;
    for (auto u = undo_.rbegin(); u != undo_.rend(); ++u) {
      if (!UndoOne(*u, s.shape, free)) return;
    }
    if (!undo_.empty()) note += ", through " + std::to_string(undo_.size()) + " layout operator" + (undo_.size() > 1 ? "s" : "");
    out_.push_back({std::move(s), std::move(note)});
  }
  void AddAll(std::vector<Shape> shapes, size_t fixed = 0) {
    for (Shape& s : shapes) Add(std::move(s.spec), std::move(s.note), fixed);
  }

  // Convolutions, plain or with a packed weight: the weight's input
  // channels and rank.
  bool Convolution(const Use& use, const std::string& k) {
    if (use.offset != 0) return false;
    Node* n = use.user;
    std::string wname;
    if (IsConvolution(k)) {
      auto w = r_.Tensor(n->input(1), wname);
      if (!w || w->dim() < 3) return true;
      bool transposed = k.find("transpose") != std::string::npos;
      int64_t groups = 1;
      if (k == "aten::_convolution" || k == "aten::convolution") {
        transposed = n->inputs().size() > 6 && r_.Bool(n->input(6), false);
        if (n->inputs().size() > 8) groups = r_.Int(n->input(8)).value_or(1);
      } else if (n->inputs().size() > 6) {
        groups = r_.Int(n->input(6)).value_or(1);
      }
      AddAll(ConvShapes(*w, groups, transposed, "from " + wname + " " + Dims(*w)), 2);
      return true;
    }
    if (!kPackedOps.count(k)) return false;
    auto p = r_.Packed(n->input(1), wname);
    if (!p) return true;
    std::string note = "from " + wname + " " + Dims(p->weight) + " (packed by " + k + ")";
    if (p->weight.dim() == 2) {
      Add(Spec({1, p->weight.size(1)}), note);
      Add(Spec({1, 8, p->weight.size(1)}), note);
    } else {
      AddAll(ConvShapes(p->weight, p->groups, p->transposed, note), 2);
    }
    return true;
  }

  // Matrix products, embeddings and recurrent layers: the weight's width,
  // vocabulary or input size.
  bool Matrix(const Use& use, const std::string& k) {
    Node* n = use.user;
    const size_t at = use.offset;
    std::string wname;
    if (at == 0 && (k == "aten::linear" || k == "aten::matmul" || k == "aten::mm")) {
      auto w = r_.Tensor(n->input(1), wname);
      if (!w || w->dim() != 2) return true;
      int64_t in = k == "aten::linear" ? w->size(1) : w->size(0);
      std::string note = "from " + wname + " " + Dims(*w);
      Add(Spec({1, in}, FloatDtype(*w)), note);
      Add(Spec({1, 8, in}, FloatDtype(*w)), note);
    } else if (at == 1 && k == "aten::mv") {
      // A matrix times the argument: a vector as long as the matrix is wide.
      auto w = r_.Tensor(n->input(0), wname);
      if (!w || w->dim() != 2) return true;
      Add(Spec({w->size(1)}, FloatDtype(*w)), "from " + wname + " " + Dims(*w) + " (a matrix-vector product)");
    } else if (at == 1 && k == "aten::addmm") {
      auto w = r_.Tensor(n->input(2), wname);
      if (!w || w->dim() != 2) return true;
      Add(Spec({1, w->size(0)}, FloatDtype(*w)), "from " + wname + " " + Dims(*w));
    } else if (at == 1 && (k == "aten::embedding" || k == "aten::embedding_bag")) {
      auto w = r_.Tensor(n->input(0), wname);
      if (!w || w->dim() != 2) return true;
      std::string note = "from " + wname + " " + Dims(*w);
      for (auto shape : std::vector<std::vector<int64_t>>{{1, 16}, {1, 8}, {16}}) {
        InputSpec s = Spec(shape, "int64");
        s.fill = InputSpec::Fill::kRandint;
        s.low = 0;
        s.high = static_cast<double>(std::max<int64_t>(1, w->size(0)));
        Add(s, note);
      }
    } else if (at == 0 && (k == "aten::lstm" || k == "aten::gru" || k == "aten::rnn_tanh" || k == "aten::rnn_relu") &&
               n->inputs().size() > 8) {
      auto w = r_.Tensor(n->input(2), wname);
      if (!w || w->dim() != 2) return true;
      bool batch_first = r_.Bool(n->input(8), false);
      std::string note = "from " + wname + " " + Dims(*w);
      int64_t in = w->size(1);
      Add(Spec(batch_first ? std::vector<int64_t>{1, 16, in} : std::vector<int64_t>{16, 1, in}, FloatDtype(*w)), note);
      Add(Spec({16, in}, FloatDtype(*w)), note);
    } else {
      return false;
    }
    return true;
  }

  // Batch, instance, group and layer norms: the channels or the normalized
  // shape.
  bool Norm(const Use& use, const std::string& k) {
    if (use.offset != 0) return false;
    Node* n = use.user;
    std::string wname;
    if (k == "aten::batch_norm" || k == "aten::instance_norm") {
      auto w = r_.Tensor(n->input(1), wname);
      if (!w || w->dim() != 1) return true;
      std::string note = "from " + wname + " " + Dims(*w);
      int64_t c = w->size(0);
      Add(Spec({1, c, 32, 32}, FloatDtype(*w)), note);
      Add(Spec({2, c}, FloatDtype(*w)), note);
      Add(Spec({1, c, 16}, FloatDtype(*w)), note);
    } else if (k == "aten::group_norm" && n->inputs().size() > 2) {
      auto w = r_.Tensor(n->input(2), wname);
      if (!w || w->dim() != 1) return true;
      Add(Spec({1, w->size(0), 32, 32}, FloatDtype(*w)), "from " + wname + " " + Dims(*w));
    } else if (k == "aten::layer_norm") {
      auto ns = r_.IntList(n->input(1));
      if (!ns) return true;
      std::vector<int64_t> a = {1, 16}, b = {1};
      a.insert(a.end(), ns->begin(), ns->end());
      b.insert(b.end(), ns->begin(), ns->end());
      std::ostringstream note;
      note << "from layer_norm's normalized shape " << c10::IntArrayRef(*ns);
      Add(Spec(a), note.str());
      Add(Spec(b), note.str());
    } else {
      return false;
    }
    return true;
  }

  // Slices with constant bounds (once), views and reshapes to constant
  // sizes, 4-d pools and resamplers, the STFT.
  bool Layout(const Use& use, const std::string& k, Value* v, int depth) {
    if (use.offset != 0) return false;
    Node* n = use.user;
    if ((k == "aten::slice" || k == "aten::select" || k == "aten::narrow") && !sliced_) {
      sliced_ = true;
      if (auto shape = SlicedShape(v)) {
        std::ostringstream note;
        note << "the smallest shape whose constant slices are whole " << c10::IntArrayRef(*shape);
        Add(Spec(*shape), note.str());
      }
    } else if (k == "aten::view" || k == "aten::reshape") {
      View(n, k, depth);
    } else if (k == "aten::max_pool2d" || k == "aten::avg_pool2d" || k == "aten::adaptive_avg_pool2d" ||
               k == "aten::upsample_nearest2d" || k == "aten::upsample_bilinear2d" || k == "aten::pixel_shuffle") {
      for (auto shape : std::vector<std::vector<int64_t>>{{1, 3, 224, 224}, {1, 1, 28, 28}, {1, 3, 64, 64}}) {
        Add(Spec(shape), "4-d: used by " + k);
      }
    } else if (k == "aten::stft") {
      Add(Spec({1, 16000}), "audio: used by aten::stft");
    } else {
      return false;
    }
    return true;
  }

  void View(Node* n, const std::string& k, int depth) {
    auto dims = r_.IntList(n->input(1));
    if (!dims) {
      // Sizes computed from the input itself (torch.stft's view to 3-D
      // and back): what comes after still sees the input's values.
      queue_.push_back({n->output(0), depth + 1, undo_});
      return;
    }
    int unknown = 0;
    for (int64_t& d : *dims) {
      if (d == -1) {
        ++unknown;
        d = 1;
      }
    }
    if (unknown > 1) return;
    std::ostringstream note;
    note << "from " << k.substr(6) << " to " << c10::IntArrayRef(*r_.IntList(n->input(1)));
    // A view that splits the argument into more than an image's four
    // sizes (patches): the image, its sizes grouped, first.
    if (dims->size() > 4) {
      if (std::optional<std::vector<int64_t>> image = refine::GroupedShape(*dims, 4)) Add(Spec(*image), note.str() + ", read as an image");
    }
    Add(Spec(*dims), note.str());
  }

  // Uses that pass the value on: shape-keeping operators, a branch's
  // result, a loop-carried value.
  void Follow(const Use& use, const std::string& k, int depth) {
    Node* n = use.user;
    const size_t at = use.offset;
    if (at == 0 && kTransparent.count(k) && n->outputs().size() == 1) {
      queue_.push_back({n->output(0), depth + 1, undo_});
    } else if (std::optional<Undo> u = LayoutOp(n, k, at)) {
      std::vector<Undo> undo = undo_;
      undo.push_back(*u);
      queue_.push_back({n->output(0), depth + 1, std::move(undo)});
    } else if (Value* result = IfResult(use)) {
      // Returned by a branch (an optional padding, a check): the If's value.
      queue_.push_back({result, depth + 1, undo_});
    } else if (k == "prim::Loop" && at >= 2 && !n->blocks().empty() && at - 1 < n->blocks()[0]->inputs().size()) {
      // A loop-carried value: follow it into the loop body.
      queue_.push_back({n->blocks()[0]->inputs()[at - 1], depth + 1, undo_});
    }
  }

  // An index operator's indices (IndexDepth): int64 in [0, 2).
  void Indices() {
    Value* x = queue_.front().v;
    std::optional<int> selects = IndexDepth(x);
    if (!selects) return;
    std::vector<int64_t> shape = SlicedShape(x).value_or(std::vector<int64_t>{});
    while (shape.size() < static_cast<size_t>(*selects) + 1) shape.push_back(16);
    InputSpec s = Spec(shape, "int64");
    s.fill = InputSpec::Fill::kRandint;
    s.low = 0;
    s.high = 2;
    Add(s, "indices of an index operator" + std::string(*selects > 0 ? ", after " + std::to_string(*selects) + " select" + (*selects > 1 ? "s" : "") : ""));
  }

  // A transpose, permute, unsqueeze or one-dimension squeeze of the value
  // with constant dimensions: what undoes it.
  std::optional<Undo> LayoutOp(Node* n, const std::string& k, size_t at) const {
    if (at != 0 || n->outputs().size() != 1) return std::nullopt;
    if (k == "aten::t") return Undo{Undo::Kind::kTranspose, {0, 1}};
    if (k == "aten::permute") {
      auto dims = r_.IntList(n->input(1));
      if (!dims || dims->empty() || dims->size() > 8) return std::nullopt;
      return Undo{Undo::Kind::kPermute, *dims};
    }
    if (n->inputs().size() < 2) return std::nullopt;
    auto a = r_.Int(n->input(1));
    if (!a || *a < -8 || *a > 8) return std::nullopt;
    if (k == "aten::transpose" && n->inputs().size() == 3) {
      auto b = r_.Int(n->input(2));
      if (!b || *b < -8 || *b > 8) return std::nullopt;
      return Undo{Undo::Kind::kTranspose, {*a, *b}};
    }
    if (k == "aten::unsqueeze") return Undo{Undo::Kind::kUnsqueeze, {*a}};
    if (k == "aten::squeeze" && n->inputs().size() == 2) return Undo{Undo::Kind::kSqueeze, {*a}};
    return std::nullopt;
  }

  // An elementwise operator against a stored table (2 to 4 sizes, none 1):
  // the value's last size must equal the table's (a 1 broadcast against it
  // means nothing): rows of rank 2 and 3 (an unsqueeze keeps the one it
  // needs); the walk goes on.
  bool Stored(const Use& use, const std::string& k) {
    Node* n = use.user;
    if (!IsElementwise(k) || use.offset > 1 || n->inputs().size() < 2) return false;
    std::string wname;
    auto t = r_.Tensor(n->input(1 - use.offset), wname);
    // A bias, a row or a vector made to broadcast says nothing of the
    // value's shape.
    if (!t || !IsTable(t->sizes()) || t->dim() > 4 || !t->is_floating_point()) return false;
    std::ostringstream note;
    note << "its last size from " << wname << " " << t->sizes() << " (an elementwise " << k.substr(6) << ")";
    const int64_t f = t->size(-1);
    Add(Spec({1, f}, FloatDtype(*t)), note.str());
    Add(Spec({1, 1, f}, FloatDtype(*t)), note.str());
    return false;  // what follows may say more
  }

  const Resolver& r_;
  std::deque<Queued> queue_;
  std::vector<Undo> undo_;
  std::set<Value*> seen_;
  std::vector<Shape> out_;
  bool sliced_ = false;
};

}  // namespace

std::vector<Shape> ShapesFromGraph(Value* x, const Resolver& r) { return ShapeWalk(x, r).Run(); }

}  // namespace tsctl
