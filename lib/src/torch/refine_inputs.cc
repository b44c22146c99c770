// The next inferred candidate from LibTorch's own error for the last one.
// LibTorch's standard shape and dtype checks say what an operator wanted
// (a convolution's channels, a matrix product's inner size, a view's element
// count, an embedding's integer indices, a norm's normalized shape); each
// rule (here and in refine_layout.cc) reads one such message, as LibTorch
// 1.13 and 2.x word it, and changes the argument it is about. No rule knows any model: only operators.
#include "refine_rules.h"

#include <nlohmann/json.hpp>

#include <cmath>


namespace tsctl {

// The shared helpers and the layout rules (refine_rules.h).
using namespace refine;

namespace {

std::optional<Refinement> ConvChannels(const Tensors& t, const std::string& e) {
  // "Given groups=1, weight of size [8, 6, 3, 3], expected input[1, 3, 224, 224]
  // to have 6 channels, but got 3 channels instead"
  std::smatch m = Match(e, R"(expected input\[([0-9, ]+)\] to have (\d+) channels, but got (\d+) channels)");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> got = Dims(m[1]);
  if (!got || got->size() < 2) return std::nullopt;
  const int64_t want = std::stoll(m[2]);
  auto i = t.Find([&](const InputSpec& s) { return s.shape == *got; });
  if (!i) i = t.Find([&](const InputSpec& s) { return s.shape.size() == got->size() && s.shape[1] == (*got)[1]; });
  if (!i) {
    // Arguments concatenated along the channels (an image and a depth map):
    // those of the input's rank and other sizes whose channels add up to
    // the ones given; the last of them takes what the others leave.
    auto same = [&](const InputSpec& s) {
      if (s.shape.size() != got->size()) return false;
      for (size_t d = 0; d < s.shape.size(); ++d) {
        if (d != 1 && s.shape[d] != (*got)[d]) return false;
      }
      return true;
    };
    int64_t sum = 0;
    std::optional<size_t> last;
    for (size_t k = 0; k < t.specs.size(); ++k) {
      if (!t.specs[k] || !same(*t.specs[k])) continue;
      sum += t.specs[k]->shape[1];
      last = k;
    }
    const int64_t left = last ? want - (sum - t.specs[*last]->shape[1]) : 0;
    if (!last || sum != (*got)[1] || left < 1) return std::nullopt;
    InputSpec s = *t.specs[*last];
    s.shape[1] = left;
    return t.With(*last, s, "a convolution wants " + std::to_string(want) + " channels, concatenated from the arguments");
  }
  InputSpec s = *t.specs[*i];
  s.shape[1] = want;
  return t.With(*i, s, "a convolution wants " + std::string(m[2]) + " channels");
}

std::optional<Refinement> ConvRank(const Tensors& t, const std::string& e) {
  // 1.13: "Expected 4-dimensional input for 4-dimensional weight [8, 6, 3, 3],
  // but got 3-dimensional input of size [1, 3, 224] instead"
  std::smatch m = Match(e, R"(Expected (\d)-dimensional input for \d-dimensional weight \[([0-9, ]+)\], but got \d-dimensional input of size \[([0-9, ]*)\])");
  size_t rank = 0;
  int64_t channels = 0;
  std::optional<Shape> got;
  if (!m.empty()) {
    rank = std::stoul(m[1]);
    std::optional<Shape> w = Dims(m[2]);
    if (!w || w->size() < 2) return std::nullopt;
    channels = (*w)[1];
    got = Dims(m[3]);
  } else {
    // 2.x: "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got
    // input of size: [1, 16]"
    m = Match(e, R"(Expected (\d)D \(unbatched\) or (\d)D \(batched\) input to \w+, but got input of size: \[([0-9, ]*)\])");
    if (m.empty()) return std::nullopt;
    rank = std::stoul(m[2]);
    got = Dims(m[3]);
  }
  if (!got) return std::nullopt;
  auto i = t.Find([&](const InputSpec& s) { return s.shape == *got; });
  if (!i) i = t.Only();
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  if (channels == 0) channels = got->size() >= 2 ? (*got)[1] : 3;
  Shape shape = BatchedShape(rank, channels);
  if (shape.empty()) return std::nullopt;
  s.shape = shape;
  return t.With(*i, s, "a convolution wants a " + std::to_string(rank) + "-D input");
}

// Float arguments whose last size L divides `got` (got = k x L: k, at most
// 8, copies of rows of L features concatenated) take want / k, where k
// divides want. (A flattened map's count is a multiple of its width too,
// but of far more than 8 rows.)
std::optional<Refinement> SharedRows(const Tensors& t, int64_t got, int64_t want) {
  for (size_t i = 0; i < t.specs.size(); ++i) {
    if (!t.specs[i] || t.specs[i]->shape.empty() || !IsFloatingDtype(t.specs[i]->dtype)) continue;
    const int64_t l = t.specs[i]->shape.back();
    if (l < 2 || got % l != 0 || got / l < 2 || got / l > 8 || want % (got / l) != 0) continue;
    const int64_t next = want / (got / l);
    size_t changed = 0;
    return t.WithEach(
        i, [&](const InputSpec& s) { return !s.shape.empty() && s.shape.back() == l && IsFloatingDtype(s.dtype); },
        [&](InputSpec& s) { s.shape.back() = next; },
        "a matrix product wants " + std::to_string(want) + " features, " + std::to_string(got / l) + " rows of " +
            std::to_string(next) + " concatenated",
        changed);
  }
  return std::nullopt;
}

std::optional<Refinement> MatrixProduct(const Tensors& t, const std::string& e) {
  // "mat1 and mat2 shapes cannot be multiplied (1x16 and 128x10)"
  std::smatch m = Match(e, R"(mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\))");
  if (m.empty()) return std::nullopt;
  const int64_t got = std::stoll(m[2]), want = std::stoll(m[3]);
  if (std::optional<Refinement> r = t.LastSize(got, want, "a matrix product wants " + std::to_string(want) + " features")) return r;
  // One size where the product wants the features (1x1 and 16x2): a
  // reduction (a mean over time) took a dimension the argument, rows of
  // those features, lacks: it gets one (a sequence of 8).
  auto i = t.Find([&](const InputSpec& s) { return got == 1 && want > 1 && s.shape.size() <= 2 && !s.shape.empty() && s.shape.back() == want; });
  if (i) {
    InputSpec s = *t.specs[*i];
    s.shape.insert(s.shape.end() - 1, 8);
    return t.With(*i, s, "a matrix product wants " + std::to_string(want) + " features after a reduction");
  }
  // Several arguments' rows (or copies of them: `cat([a, b, a * b], -1)`)
  // concatenated: the count is a whole multiple of a last size they share,
  // and each takes its share of the features wanted.
  if (std::optional<Refinement> r = SharedRows(t, got, want)) return r;
  // The argument concatenated with a few features of its own before the
  // product (`cat([x, ones], -1) @ w`): its last size moves by the same
  // step. (More features added, as two embeddings' before rows of
  // features: a count affine in the last size, which CountSolve fits.)
  i = t.Find([&](const InputSpec& s) { return !s.shape.empty() && s.shape.back() < got && got - s.shape.back() <= 8; });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  const int64_t added = got - s.shape.back();
  if (want - added < 1) return std::nullopt;
  s.shape.back() = want - added;
  return t.With(*i, s, "a matrix product wants " + std::to_string(want) + " features, " + std::to_string(added) +
                           " of them added to the argument's");
}

std::optional<Refinement> MatrixVector(const Tensors& t, const std::string& e) {
  // addmv/mv: "vector + matrix @ vector expected, got 1, 2, 4": the argument
  // of that rank becomes a vector (its last size kept); "size mismatch, got
  // 2, 2x6,16": the vector must be as long as the matrix is wide.
  std::smatch m = Match(e, R"(size mismatch, got (\d+), (\d+)x(\d+),(\d+))");
  if (!m.empty()) {
    const int64_t want = std::stoll(m[3]), got = std::stoll(m[4]);
    auto i = t.Find([&](const InputSpec& s) { return s.shape == Shape{got}; });
    if (!i) return std::nullopt;
    InputSpec s = *t.specs[*i];
    s.shape = {want};
    return t.With(*i, s, "a matrix-vector product wants a vector of " + std::to_string(want));
  }
  m = Match(e, R"(vector \+ matrix @ vector expected, got \d+, \d+, (\d+))");
  if (m.empty()) return std::nullopt;
  const size_t rank = std::stoul(m[1]);
  auto i = t.Find([&](const InputSpec& s) { return s.shape.size() == rank; });
  if (!i || rank == 1) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.shape = {s.shape.empty() ? 16 : s.shape.back()};
  return t.With(*i, s, "a matrix-vector product wants a vector");
}

std::optional<Refinement> Signal(const Tensors& t, const std::string& e) {
  // stft: "stft(CPUFloatType[1, 1, 16320], n_fft=320, ...) : expected a 1D or
  // 2D tensor": the argument becomes a batch of one signal (its last size).
  std::smatch m = Match(e, R"(stft\(\w+\[([0-9, ]+)\].*expected a 1D or 2D tensor)");
  if (!m.empty()) {
    std::optional<Shape> got = Dims(m[1]);
    if (!got || got->size() <= 2) return std::nullopt;
    auto i = t.Find([&](const InputSpec& s) { return s.shape.size() == got->size(); });
    if (!i) i = t.Find([&](const InputSpec& s) { return s.shape.size() > 2; });
    if (!i) return std::nullopt;
    InputSpec s = *t.specs[*i];
    s.shape = {1, s.shape.back()};
    return t.With(*i, s, "a short-time Fourier transform wants a 1-D or 2-D signal");
  }
  // A reflection pad wider than the input: "Padding size should be less than
  // the corresponding input dimension, but got: padding (160, 160) at
  // dimension 2 of input [1, 1, 16]": the argument's size there (its last,
  // for a signal) grows to a second of 16 kHz audio, or past the padding.
  m = Match(e, R"(Padding size should be less than the corresponding input dimension, but got: padding \((\d+), (\d+)\) at dimension (\d+) of input \[([0-9, ]+)\])");
  if (m.empty()) return std::nullopt;
  const int64_t pad = std::max(std::stoll(m[1]), std::stoll(m[2]));
  std::optional<Shape> input = Dims(m[4]);
  const size_t dim = std::stoul(m[3]);
  if (!input || dim >= input->size() || pad > 100000) return std::nullopt;
  return t.LastSize((*input)[dim], std::max<int64_t>(16000, 4 * pad), "a padding of " + std::to_string(pad) + " wants a longer input");
}

std::optional<Refinement> ViewSize(const Tensors& t, const std::string& e) {
  // "shape '[3, 4, 8]' is invalid for input of size 3072": a view of the
  // argument itself, with the sizes of the example it was traced on.
  std::smatch m = Match(e, R"(shape '\[([-0-9, ]+)\]' is invalid for input of size (\d+))");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> target = Dims(m[1]);
  if (!target || target->empty() || std::count(target->begin(), target->end(), -1) > 1 ||
      std::any_of(target->begin(), target->end(), [](int64_t d) { return d == 0 || d < -1; })) {
    return std::nullopt;
  }
  // One -1 (a batch left free): the argument takes the view's shape with 1 there.
  std::replace(target->begin(), target->end(), int64_t{-1}, int64_t{1});
  const int64_t size = std::stoll(m[2]);
  auto i = t.Find([&](const InputSpec& s) { return Numel(s.shape) == size; });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  // A view that splits the argument (an image cut into patches: [1, 1, 4,
  // 7, 4, 7]) is not the argument's own shape: its sizes grouped back into
  // the argument's rank, where a grouping reads as an image.
  std::optional<Shape> grouped;
  if (s.shape.size() >= 3 && s.shape.size() < target->size()) grouped = GroupedShape(*target, s.shape.size());
  s.shape = grouped ? *grouped : *target;
  return t.With(*i, s, "a view wants " + ShapeText(*target) + (grouped ? ", read as " + ShapeText(*grouped) : std::string()));
}

std::optional<Refinement> Broadcast(const Tensors& t, const std::string& e) {
  // "The size of tensor a (224) must match the size of tensor b (64) at
  // non-singleton dimension 3"
  std::smatch m = Match(e, R"(The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton dimension (\d+))");
  if (m.empty()) return std::nullopt;
  const int64_t a = std::stoll(m[1]), b = std::stoll(m[2]);
  const size_t dim = std::stoul(m[3]);
  for (const auto& sizes : {std::pair{a, b}, std::pair{b, a}}) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one.
    const int64_t from = sizes.first, to = sizes.second;
    auto i = t.Find([&](const InputSpec& s) { return dim < s.shape.size() && s.shape[dim] == from; });
    if (!i) continue;
    // A length the arguments share (a forecaster's values and marks): every
    // argument of that rank with the size there takes the one wanted.
    const size_t rank = t.specs[*i]->shape.size();
    size_t changed = 0;
    Refinement r = t.WithEach(
        *i, [&](const InputSpec& s) { return s.shape.size() == rank && s.shape[dim] == from; },
        [&](InputSpec& s) { s.shape[dim] = to; }, "dimension " + std::to_string(dim) + " must be " + std::to_string(to), changed);
    if (changed > 1) r.note += " (and " + std::to_string(changed - 1) + " more sharing it)";
    return r;
  }
  // Rows of features that grew leading dimensions on the way (an
  // unsqueeze, x[:, None]): their last size against a stored tensor's last.
  // (Not an image's: its width is no feature.)
  auto i = t.Find([&](const InputSpec& s) { return !s.shape.empty() && s.shape.size() <= 2 && s.shape.size() <= dim && s.shape.back() == a; });
  if (!i || b < 2) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.shape.back() = b;
  return t.With(*i, s, "its last size, broadcast as dimension " + std::to_string(dim) + ", must be " + std::to_string(b));
}

}  // namespace

namespace {

std::optional<Refinement> FirstRule(const std::vector<ArgSpec>& args, const std::string& error, const std::vector<Attempt>& earlier) {
  // LibTorch's messages are short; a TorchScript traceback before them is not
  // read past 64 KiB.
  const std::string e = error.size() > (64u << 10) ? error.substr(error.size() - (64u << 10)) : error;
  for (auto rule : {DictKey, Hidden, HiddenRank, OutputSize}) {
    try {
      if (std::optional<Refinement> r = rule(args, e)) return r;
    } catch (const std::exception&) {
    }
  }
  const Tensors t(args);
  if (t.Count() == 0) return std::nullopt;
  for (auto rule : {ConvChannels, ConvRank, MatrixProduct, MatrixVector, Signal, ViewSize, FlattenedArea, IntegerIndices, IndexRange, Broadcast,
                    Recurrent, Norms, FeatureBroadcast, EmbeddingDim, Lengths, Concatenation, Stack, DimensionRange, UnpackRank}) {
    try {
      if (std::optional<Refinement> r = rule(t, e)) return r;
    } catch (const std::exception&) {
      // A number too large for stoll, a regex limit: no refinement.
    }
  }
  // A count no argument has: solved from the earlier candidates where they
  // say enough, else scaled with the input's area.
  try {
    if (std::optional<Refinement> r = CountSolve(t, e, earlier)) return r;
    return AreaScale(t, e);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<Refinement> RefineFromError(const std::vector<ArgSpec>& args, const std::string& error,
                                          const std::string& source, const std::vector<Attempt>& earlier) {
  std::optional<Refinement> r = FirstRule(args, error, earlier);
  if (r) r->note += ", from " + source + ": " + r->why;
  return r;
}

}  // namespace tsctl
