#include "graph_layout.h"

#include "infer_guards.h"

#include <torch/csrc/jit/ir/constants.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <string>

namespace tsctl {

using torch::jit::Node;
using torch::jit::Value;

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

bool UndoOne(const Undo& u, std::vector<int64_t>& shape, std::vector<bool>& free) {
  const auto rank = static_cast<int64_t>(shape.size());
  auto norm = [](int64_t d, int64_t r) { return d < 0 ? d + r : d; };
  switch (u.kind) {
    case Undo::Kind::kTranspose: {
      const int64_t a = norm(u.dims[0], rank), b = norm(u.dims[1], rank);
      if (a < 0 || b < 0 || a >= rank || b >= rank) return false;
      std::swap(shape[a], shape[b]);
      const bool fa = free[a];
      free[a] = free[b];
      free[b] = fa;
      return true;
    }
    case Undo::Kind::kPermute: {
      if (static_cast<int64_t>(u.dims.size()) != rank) return false;
      std::vector<int64_t> before(shape.size());
      std::vector<bool> before_free(shape.size());
      for (int64_t i = 0; i < rank; ++i) {
        const int64_t d = norm(u.dims[i], rank);
        if (d < 0 || d >= rank) return false;
        before[d] = shape[i];
        before_free[d] = free[i];
      }
      shape = before;
      free = before_free;
      return true;
    }
    case Undo::Kind::kUnsqueeze: {
      const int64_t d = norm(u.dims[0], rank);
      if (d < 0 || d >= rank || (shape[d] != 1 && !free[d])) return false;
      shape.erase(shape.begin() + d);
      free.erase(free.begin() + d);
      return true;
    }
    case Undo::Kind::kSqueeze: {
      const int64_t d = norm(u.dims[0], rank + 1);
      if (d < 0 || d > rank) return false;
      shape.insert(shape.begin() + d, 1);
      free.insert(free.begin() + d, false);
      return true;
    }
  }
  return false;
}

std::optional<int> IndexDepth(Value* x) {
  static const std::set<std::string> kIndexAt2 = {
      "aten::index_select", "aten::index_add", "aten::index_add_", "aten::index_copy", "aten::index_copy_",
      "aten::index_fill", "aten::index_fill_", "aten::gather", "aten::scatter", "aten::scatter_",
      "aten::scatter_add", "aten::scatter_add_", "aten::scatter_reduce"};
  static const std::set<std::string> kPass = {"aten::slice", "aten::narrow", "aten::contiguous", "aten::to",
                                              "aten::long", "aten::flatten", "aten::view", "aten::reshape"};
  std::deque<std::pair<Value*, int>> queue = {{x, 0}};
  std::set<Value*> seen;
  while (!queue.empty()) {
    auto [v, selects] = queue.front();
    queue.pop_front();
    if (!seen.insert(v).second || seen.size() > 64) continue;
    for (const torch::jit::Use& use : v->uses()) {
      const std::string k = use.user->kind().toQualString();
      if (use.offset == 2 && kIndexAt2.count(k)) return selects;
      if (k == "prim::ListConstruct") {
        for (const torch::jit::Use& u : use.user->output()->uses()) {
          const std::string kk = u.user->kind().toQualString();
          if (u.offset == 1 && (kk == "aten::index" || kk == "aten::index_put_" || kk == "aten::index_put")) return selects;
        }
        continue;
      }
      if (use.offset != 0 || use.user->outputs().size() != 1 || selects > 3) continue;
      if (k == "aten::select") queue.push_back({use.user->output(), selects + 1});
      else if (kPass.count(k)) queue.push_back({use.user->output(), selects});
    }
  }
  return std::nullopt;
}

}  // namespace tsctl
