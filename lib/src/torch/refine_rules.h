// What the refinement rules share (refine_rules.cc): shapes as vectors, a
// candidate's tensor arguments parsed, LibTorch's message matched, and the
// rules of refine_layout.cc, refine_recurrent.cc, refine_indices.cc and
// refine_count.cc that RefineFromError (refine_inputs.cc) tries in turn.
// Private to those files.
#pragma once

#include <algorithm>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tsctl/error.h"
#include "refine_inputs.h"

namespace tsctl::refine {

using Shape = std::vector<int64_t>;

// "1, 3, 224, 224" -> {1, 3, 224, 224}; nullopt for anything else.
std::optional<Shape> Dims(const std::string& text);
int64_t Numel(const Shape& s);
// "1x3x224x224", or "scalar".
std::string ShapeText(const Shape& s);
// An argument as the notes name it: its name, or "argument N".
std::string ArgName(const std::vector<ArgSpec>& args, size_t i);
// `args` with argument i's value replaced, the note saying which (the
// source and why are added by RefineFromError).
Refinement Replaced(const std::vector<ArgSpec>& args, size_t i, const std::string& value, const std::string& why);
// The first match of `pattern` in `error` (empty if none).
std::smatch Match(const std::string& error, const char* pattern);
// A batched input of rank `rank` with `channels` channels, at sizes the
// usual models of that rank take.
Shape BatchedShape(size_t rank, int64_t channels);
// (got, wanted) of a count LibTorch says does not match: a broadcast's two
// sizes, a convolution's channels, a matrix product's inner size.
std::optional<std::pair<int64_t, int64_t>> CountMismatch(const std::string& e);

// The tensor arguments of a candidate, parsed.
// A list of tensors of one spec (`["3x224x224:float32"]`, a List[Tensor]
// argument) counts as that tensor: a rule that changes it changes every
// element.
struct Tensors {
  std::vector<ArgSpec> args;
  std::vector<std::optional<InputSpec>> specs;  // nullopt: not a tensor spec
  std::vector<size_t> list;                     // > 0: a list of that many tensors, each specs[i]

  explicit Tensors(const std::vector<ArgSpec>& a);
  // Argument i's value with `spec` (every element of a list).
  std::string Value(size_t i, const InputSpec& spec) const;
  size_t Count() const { return static_cast<size_t>(std::count_if(specs.begin(), specs.end(), [](const auto& s) { return s.has_value(); })); }
  // The first tensor argument `pick` accepts.
  template <typename F>
  std::optional<size_t> Find(F pick) const {
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i] && pick(*specs[i])) return i;
    }
    return std::nullopt;
  }
  // The only tensor argument, if there is one.
  std::optional<size_t> Only() const {
    return Count() == 1 ? Find([](const InputSpec&) { return true; }) : std::nullopt;
  }
  std::string Name(size_t i) const { return ArgName(args, i); }
  Refinement With(size_t i, const InputSpec& spec, const std::string& why) const {
    return Replaced(args, i, Value(i, spec), why);
  }
  // The first tensor argument whose last size is `got`, that size made
  // `want`; nullopt if none.
  std::optional<Refinement> LastSize(int64_t got, int64_t want, const std::string& why) const;
  // Argument `first` changed by `change`, and so every other tensor
  // argument `pick` accepts (as `first` was); `changed` counts them all.
  // The note names `first`.
  template <typename P, typename C>
  Refinement WithEach(size_t first, P pick, C change, const std::string& why, size_t& changed) const {
    InputSpec s = *specs[first];
    change(s);
    Refinement r = With(first, s, why);
    changed = 1;
    for (size_t j = 0; j < specs.size(); ++j) {
      if (j == first || !specs[j] || !pick(*specs[j])) continue;
      InputSpec o = *specs[j];
      change(o);
      r.args[j].value = Value(j, o);
      ++changed;
    }
    return r;
  }
};

// Rules over layouts (refine_layout.cc): each reads one LibTorch message
// and gives the next candidate, or nullopt.
std::optional<Refinement> Recurrent(const Tensors& t, const std::string& e);
// refine_indices.cc: integer indices on a float guess, indices past a table.
std::optional<Refinement> IntegerIndices(const Tensors& t, const std::string& e);
std::optional<Refinement> IndexRange(const Tensors& t, const std::string& e);
std::optional<Refinement> Norms(const Tensors& t, const std::string& e);
std::optional<Refinement> FeatureBroadcast(const Tensors& t, const std::string& e);
std::optional<Refinement> Concatenation(const Tensors& t, const std::string& e);
std::optional<Refinement> Stack(const Tensors& t, const std::string& e);
std::optional<Refinement> FlattenedArea(const Tensors& t, const std::string& e);
std::optional<Refinement> DimensionRange(const Tensors& t, const std::string& e);
std::optional<Refinement> UnpackRank(const Tensors& t, const std::string& e);
std::optional<Refinement> AreaScale(const Tensors& t, const std::string& e);
// The sizes of `shape` a count (got, wanted) grows with (refine_layout.cc).
std::vector<size_t> SpatialDims(const Shape& shape, int64_t got, int64_t want);
// refine_count.cc: a count solved from the earlier candidates' errors.
std::optional<Refinement> CountSolve(const Tensors& t, const std::string& e, const std::vector<Attempt>& earlier);
std::optional<Refinement> DictKey(const std::vector<ArgSpec>& args, const std::string& e);
std::optional<Refinement> Hidden(const std::vector<ArgSpec>& args, const std::string& e);
std::optional<Refinement> HiddenRank(const std::vector<ArgSpec>& args, const std::string& e);
std::optional<Refinement> EmbeddingDim(const Tensors& t, const std::string& e);
std::optional<Refinement> Lengths(const Tensors& t, const std::string& e);
std::optional<Refinement> OutputSize(const std::vector<ArgSpec>& args, const std::string& e);

}  // namespace tsctl::refine
