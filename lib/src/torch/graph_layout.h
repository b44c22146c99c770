// Layouts in a method's graph, for ShapesFromGraph (graph_shapes.cc): the
// smallest shape whose constant slices are whole, and the layout operators
// (transpose, permute, unsqueeze, squeeze) undone to map a shape proposed
// for a value back to the argument it came from. Private to graph_shapes.cc.
#pragma once

#include <torch/script.h>

#include <optional>
#include <vector>

namespace tsctl {

// The smallest shape of `x` in which every slice, select and narrow with
// constant bounds that the code takes of it (or of a slice of it) is whole:
// a traced graph records the bounds of its example (`x[:, 1:4, 0:3]`).
// nullopt if no bound asks for more than 1.
std::optional<std::vector<int64_t>> SlicedShape(torch::jit::Value* x);

// A layout operator between the argument and the value a shape is proposed
// for, undone to give the argument's shape: a transpose or permute (their
// inverse permutation), an unsqueeze (that dimension dropped: it must be 1,
// or a size the proposal left free), a squeeze of one dimension (a 1 put
// back).
struct Undo {
  enum class Kind { kTranspose, kPermute, kUnsqueeze, kSqueeze } kind;
  std::vector<int64_t> dims;
};

// `shape` (of the value after `u`) as it was before `u`; false where `u`
// cannot have produced it. `free` marks the sizes the proposal chose
// (spatial sizes, a sequence length) rather than read from a weight.
bool UndoOne(const Undo& u, std::vector<int64_t>& shape, std::vector<bool>& free);

// How many selects lie between `x` and its use as the indices of an index
// operator (index_select, index_add, index_copy, index_fill, gather,
// scatter's index; aten::index's list of indices), through slices and
// casts; nullopt if it is used so nowhere near. Such indices are int64, of
// one more dimension than the selects take away.
std::optional<int> IndexDepth(torch::jit::Value* x);

}  // namespace tsctl
