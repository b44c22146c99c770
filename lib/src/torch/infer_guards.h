// What a method's own checks say about its arguments: the guards TorchScript
// code writes before it raises (`if x.dim() > 2: raise ...`,
// `if x.size(-1) != num_samples: raise ...`) and the constants an int
// argument is compared with (`if sr == 16000`, `sr in self.sample_rates`).
// Read from the inlined graph, by the semantics of aten::dim, aten::size,
// the comparison operators and prim::If/prim::RaiseException, never from
// names. Private to the input inference (infer_inputs.cc, graph_shapes.cc,
// graph_resolver.cc).
#pragma once

#include <torch/script.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tsctl {

// The int a graph value holds when it is a constant int; nullopt otherwise.
std::optional<int64_t> ConstantInt(torch::jit::Value* v);

// The If's result a use passes its value on to when the use is a branch's
// return (`x = pad(x) if ... else x`); nullptr for any other use.
torch::jit::Value* IfResult(const torch::jit::Use& use);

// A value of the graph resolved to a constant or a module attribute (a list
// of ints held by the module); None when it is neither.
using ResolveValue = std::function<c10::IValue(torch::jit::Value*)>;

// The int constants `arg` (an int argument of the graph) is compared with
// (==, !=) or looked up in (`in` a constant or attribute list), in the order
// the code meets them, without repeats; empty if it is compared with none.
std::vector<int64_t> IntsComparedWith(torch::jit::Value* arg, const ResolveValue& resolve);

// The guards on a tensor argument: the ranks and sizes whose comparison
// leads into a branch that raises.
class TensorGuards {
 public:
  // Reads the guards on `x` and on what it becomes through rank-keeping or
  // rank-growing steps (unsqueeze, slice, elementwise ops, an If's result).
  explicit TensorGuards(torch::jit::Value* x);

  bool empty() const { return ranks_.empty() && sizes_.empty(); }
  // `shape` changed to pass the guards: a rank they refuse becomes the
  // nearest they accept (dropping dimensions after the batch, or adding
  // leading 1s), a size compared with constants takes the first of them that
  // passes. What it did, for the candidate's note ("rank 2, size -1 512 from
  // the method's checks"); empty if nothing changed.
  std::string Apply(std::vector<int64_t>& shape) const;

 private:
  struct Check {
    std::string op;       // aten::eq, ne, lt, le, gt, ge
    int64_t constant = 0;
    bool raises_when = true;  // the branch taken when the comparison is this value raises
  };
  struct SizeCheck {
    int64_t dim = 0;                 // as written: -1 is the last
    std::string op;
    std::vector<int64_t> constants;  // one, or what an If's branches give
    bool raises_when = true;
  };
  bool RankAllowed(int64_t rank) const;
  bool SizeAllowed(int64_t dim, int64_t rank, int64_t size) const;

  std::vector<Check> ranks_;
  std::vector<SizeCheck> sizes_;
};

}  // namespace tsctl
