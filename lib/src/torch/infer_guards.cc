#include "infer_guards.h"

#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <deque>
#include <set>
#include <sstream>

namespace tsctl {
namespace {

using torch::jit::Node;
using torch::jit::Value;

const std::set<std::string> kComparisons = {"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge"};

std::string Kind(const Node* n) { return n->kind().toQualString(); }

// `a OP b` for one of kComparisons.
bool CompareInts(const std::string& op, int64_t a, int64_t b) {
  if (op == "aten::eq") return a == b;
  if (op == "aten::ne") return a != b;
  if (op == "aten::lt") return a < b;
  if (op == "aten::le") return a <= b;
  if (op == "aten::gt") return a > b;
  return a >= b;
}

// The comparison with its operands swapped: `c < x` is `x > c`.
std::string Swapped(const std::string& op) {
  if (op == "aten::lt") return "aten::gt";
  if (op == "aten::gt") return "aten::lt";
  if (op == "aten::le") return "aten::ge";
  if (op == "aten::ge") return "aten::le";
  return op;
}

// The int constants `v` can be: a constant, or the result of an If whose
// branches each return a constant (`num_samples = 512 if sr == 16000 else 256`).
std::vector<int64_t> IntsOf(Value* v) {
  if (auto c = ConstantInt(v)) return {*c};
  Node* n = v->node();
  std::vector<int64_t> out;
  if (n->kind() != c10::prim::If) return out;
  for (size_t k = 0; k < n->outputs().size(); ++k) {
    if (n->output(k) != v) continue;
    for (torch::jit::Block* b : n->blocks()) {
      if (k >= b->outputs().size()) return {};
      auto c = ConstantInt(b->outputs()[k]);
      if (!c) return {};
      out.push_back(*c);
    }
  }
  return out;
}

bool Raises(const torch::jit::Block* b) {
  for (const Node* n : b->nodes()) {
    if (n->kind() == c10::prim::RaiseException) return true;
  }
  return false;
}

// For a bool that decides an If (directly or through `not`): the value of
// the bool for which the branch taken raises while the other does not.
std::optional<bool> RaisingValue(Value* cond) {
  for (const torch::jit::Use& use : cond->uses()) {
    Node* n = use.user;
    if (Kind(n) == "aten::__not__") {
      if (auto r = RaisingValue(n->output(0))) return !*r;
    }
    if (n->kind() == c10::prim::If && use.offset == 0 && n->blocks().size() == 2) {
      const bool then_raises = Raises(n->blocks()[0]), else_raises = Raises(n->blocks()[1]);
      if (then_raises != else_raises) return then_raises;
    }
  }
  return std::nullopt;
}

// Where a value goes on unchanged: an If's result when a branch returns it,
// a tuple element when the tuple is unpacked or indexed (a method that
// returns `(x, sr)`, inlined).
std::vector<Value*> PassedOn(const torch::jit::Use& use) {
  Node* n = use.user;
  std::vector<Value*> out;
  if (Value* result = IfResult(use)) {
    out.push_back(result);
  } else if (n->kind() == c10::prim::TupleConstruct) {
    for (const torch::jit::Use& t : n->output(0)->uses()) {
      if (t.user->kind() == c10::prim::TupleUnpack && use.offset < t.user->outputs().size()) {
        out.push_back(t.user->output(use.offset));
      } else if (t.user->kind() == c10::prim::TupleIndex) {
        auto i = ConstantInt(t.user->input(1));
        if (i && *i == static_cast<int64_t>(use.offset)) out.push_back(t.user->output(0));
      }
    }
  }
  return out;
}

}  // namespace

std::optional<int64_t> ConstantInt(Value* v) {
  auto c = torch::jit::toIValue(v);
  if (!c || !c->isInt()) return std::nullopt;
  return c->toInt();
}

Value* IfResult(const torch::jit::Use& use) {
  Node* n = use.user;
  if (n->kind() != c10::prim::Return || !n->owningBlock() || !n->owningBlock()->owningNode() ||
      n->owningBlock()->owningNode()->kind() != c10::prim::If) {
    return nullptr;
  }
  return n->owningBlock()->owningNode()->output(use.offset);
}

std::vector<int64_t> IntsComparedWith(Value* arg, const ResolveValue& resolve) {
  std::vector<int64_t> out;
  auto add = [&](int64_t c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  std::deque<Value*> queue = {arg};
  std::set<Value*> seen;
  while (!queue.empty() && seen.size() < 32 && out.size() < 8) {
    Value* v = queue.front();
    queue.pop_front();
    if (!seen.insert(v).second) continue;
    for (const torch::jit::Use& use : v->uses()) {
      Node* n = use.user;
      const std::string k = Kind(n);
      if ((k == "aten::eq" || k == "aten::ne") && n->inputs().size() == 2) {
        if (auto c = ConstantInt(n->input(1 - use.offset))) add(*c);
      } else if (k == "aten::__contains__" && use.offset == 1) {
        c10::IValue list = resolve(n->input(0));
        if (list.isIntList()) {
          for (int64_t c : list.toIntVector()) add(c);
        }
      } else {
        for (Value* next : PassedOn(use)) queue.push_back(next);
      }
    }
  }
  return out;
}

TensorGuards::TensorGuards(Value* x) {
  // Values x becomes with its rank kept (exact) or grown (unsqueeze: a
  // bound from above on its rank still holds for x's).
  std::deque<std::pair<Value*, bool>> queue = {{x, true}};
  std::set<Value*> seen;
  static const std::set<std::string> kKeep = {"aten::contiguous", "aten::to",    "aten::float", "aten::detach",
                                              "aten::clone",      "aten::slice", "aten::type_as", "prim::unchecked_cast"};
  while (!queue.empty() && seen.size() < 64) {
    auto [v, exact] = queue.front();
    queue.pop_front();
    if (!seen.insert(v).second) continue;
    for (const torch::jit::Use& use : v->uses()) {
      Node* n = use.user;
      const std::string k = Kind(n);
      if (k == "aten::dim" && use.offset == 0) {
        for (const torch::jit::Use& c : n->output(0)->uses()) {
          const std::string op = Kind(c.user);
          if (!kComparisons.count(op) || c.user->inputs().size() != 2) continue;
          auto constant = ConstantInt(c.user->input(1 - c.offset));
          auto raises = RaisingValue(c.user->output(0));
          if (!constant || !raises) continue;
          Check check{c.offset == 0 ? op : Swapped(op), *constant, *raises};
          // On a grown value, only "raises when the rank is above N" bounds x.
          const bool upper = (check.op == "aten::gt" || check.op == "aten::ge") == check.raises_when &&
                             check.op != "aten::eq" && check.op != "aten::ne";
          if (exact || upper) ranks_.push_back(check);
        }
      } else if (k == "aten::size" && use.offset == 0) {
        // x.size(d), or x.size()[d]: the size of dimension d.
        std::vector<std::pair<int64_t, Value*>> sizes;
        if (n->inputs().size() == 2) {
          if (auto d = ConstantInt(n->input(1))) sizes.push_back({*d, n->output(0)});
        } else {
          for (const torch::jit::Use& g : n->output(0)->uses()) {
            if (Kind(g.user) != "aten::__getitem__" || g.offset != 0) continue;
            if (auto d = ConstantInt(g.user->input(1))) sizes.push_back({*d, g.user->output(0)});
          }
        }
        for (auto [dim, size] : sizes) {
          if (!exact && dim >= 0) continue;
          for (const torch::jit::Use& c : size->uses()) {
            const std::string op = Kind(c.user);
            if (!kComparisons.count(op) || c.user->inputs().size() != 2) continue;
            std::vector<int64_t> constants = IntsOf(c.user->input(1 - c.offset));
            auto raises = RaisingValue(c.user->output(0));
            if (constants.empty() || !raises) continue;
            sizes_.push_back({dim, c.offset == 0 ? op : Swapped(op), std::move(constants), *raises});
          }
        }
      } else if ((kKeep.count(k) || k == "aten::unsqueeze") && use.offset == 0 && n->outputs().size() == 1) {
        queue.push_back({n->output(0), exact && k != "aten::unsqueeze"});
      } else {
        for (Value* next : PassedOn(use)) queue.push_back({next, exact});
      }
    }
  }
}

bool TensorGuards::RankAllowed(int64_t rank) const {
  return std::none_of(ranks_.begin(), ranks_.end(),
                      [&](const Check& c) { return CompareInts(c.op, rank, c.constant) == c.raises_when; });
}

bool TensorGuards::SizeAllowed(int64_t dim, int64_t rank, int64_t size) const {
  for (const SizeCheck& c : sizes_) {
    if ((c.dim < 0 ? c.dim + rank : c.dim) != dim) continue;
    // The constant compared with is one of c.constants (which one depends on
    // other values): the size passes if it passes with one of them.
    if (std::none_of(c.constants.begin(), c.constants.end(),
                     [&](int64_t m) { return CompareInts(c.op, size, m) != c.raises_when; })) {
      return false;
    }
  }
  return true;
}

std::string TensorGuards::Apply(std::vector<int64_t>& shape) const {
  std::ostringstream note;
  const auto rank = static_cast<int64_t>(shape.size());
  if (!RankAllowed(rank)) {
    // Fewer dimensions first (dropping those after the batch), then more.
    std::vector<int64_t> order;
    for (int64_t r = rank - 1; r >= 1; --r) order.push_back(r);
    for (int64_t r = rank + 1; r <= 5; ++r) order.push_back(r);
    for (int64_t r : order) {
      if (!RankAllowed(r)) continue;
      std::vector<int64_t> s;
      if (r < rank) {
        if (r > 1) s.push_back(shape.front());
        s.insert(s.end(), shape.end() - (r == 1 ? 1 : r - 1), shape.end());
      } else {
        s.assign(static_cast<size_t>(r - rank), 1);
        s.insert(s.end(), shape.begin(), shape.end());
      }
      shape = std::move(s);
      note << "rank " << r;
      break;
    }
  }
  const auto r = static_cast<int64_t>(shape.size());
  for (const SizeCheck& c : sizes_) {
    const int64_t dim = c.dim < 0 ? c.dim + r : c.dim;
    if (dim < 0 || dim >= r || SizeAllowed(dim, r, shape[static_cast<size_t>(dim)])) continue;
    for (int64_t m : c.constants) {
      if (m < 1 || !SizeAllowed(dim, r, m)) continue;
      shape[static_cast<size_t>(dim)] = m;
      note << (note.tellp() > 0 ? ", " : "") << "size " << m << " at dimension " << c.dim;
      break;
    }
  }
  if (note.tellp() > 0) note << " from the method's checks";
  return note.str();
}

}  // namespace tsctl
