// The next inferred candidate from LibTorch's own error for the last one.
// LibTorch's standard shape and dtype checks say what an operator wanted
// (a convolution's channels, a matrix product's inner size, a view's element
// count, an embedding's integer indices, a norm's normalized shape); each rule
// below reads one such message, as LibTorch 1.13 and 2.x word it, and changes
// the argument it is about. No rule knows any model: only operators.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tsctl/error.h"
#include "tsctl/inputs.h"

namespace tsctl {
namespace {

using Shape = std::vector<int64_t>;

// "1, 3, 224, 224" -> {1, 3, 224, 224}; nullopt for anything else.
std::optional<Shape> Dims(const std::string& text) {
  Shape out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      size_t a = cur.find_first_not_of(' '), b = cur.find_last_not_of(' ');
      if (a == std::string::npos) {
        if (text.find_first_not_of(" ,") == std::string::npos && out.empty()) return out;
        return std::nullopt;
      }
      std::string n = cur.substr(a, b - a + 1);
      if (n.empty() || n.size() > 12 || n.find_first_not_of("-0123456789") != std::string::npos) return std::nullopt;
      out.push_back(std::stoll(n));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string ShapeText(const Shape& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "x" : "") + std::to_string(s[i]);
  return t.empty() ? "scalar" : t;
}

// An argument as the notes name it: its name, or "argument N".
std::string ArgName(const std::vector<ArgSpec>& args, size_t i) {
  return args[i].name.empty() ? "argument " + std::to_string(i + 1) : args[i].name;
}

// `args` with argument i's value replaced, the note saying why.
Refinement Replaced(const std::vector<ArgSpec>& args, size_t i, const std::string& value, const std::string& why) {
  Refinement r{args, ""};
  r.args[i].value = value;
  r.note = ArgName(args, i) + " " + value + ", from LibTorch's error: " + why;
  return r;
}

// The tensor arguments of a candidate, parsed.
struct Tensors {
  std::vector<ArgSpec> args;
  std::vector<std::optional<InputSpec>> specs;  // nullopt: not a tensor spec

  explicit Tensors(const std::vector<ArgSpec>& a) : args(a) {
    for (const ArgSpec& x : args) {
      try {
        specs.push_back(ParseInputSpec(x.value));
      } catch (const Error&) {
        specs.push_back(std::nullopt);
      }
    }
  }
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
    return Replaced(args, i, spec.ToString(), why);
  }
};

std::smatch Match(const std::string& error, const char* pattern) {
  std::smatch m;
  std::regex_search(error, m, std::regex(pattern));
  return m;
}

// A batched input of rank `rank` with `channels` channels, at sizes the
// usual models of that rank take.
Shape BatchedShape(size_t rank, int64_t channels) {
  switch (rank) {
    case 2: return {1, channels};
    case 3: return {1, channels, 128};
    case 4: return {1, channels, 224, 224};
    case 5: return {1, channels, 16, 112, 112};
    default: return {};
  }
}

std::optional<Refinement> ConvChannels(const Tensors& t, const std::string& e) {
  // "Given groups=1, weight of size [8, 6, 3, 3], expected input[1, 3, 224, 224]
  // to have 6 channels, but got 3 channels instead"
  std::smatch m = Match(e, R"(expected input\[([0-9, ]+)\] to have (\d+) channels, but got (\d+) channels)");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> got = Dims(m[1]);
  if (!got || got->size() < 2) return std::nullopt;
  auto i = t.Find([&](const InputSpec& s) { return s.shape == *got; });
  if (!i) i = t.Find([&](const InputSpec& s) { return s.shape.size() == got->size() && s.shape[1] == (*got)[1]; });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.shape[1] = std::stoll(m[2]);
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

std::optional<Refinement> MatrixProduct(const Tensors& t, const std::string& e) {
  // "mat1 and mat2 shapes cannot be multiplied (1x16 and 128x10)"
  std::smatch m = Match(e, R"(mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\))");
  if (m.empty()) return std::nullopt;
  const int64_t got = std::stoll(m[2]), want = std::stoll(m[3]);
  auto i = t.Find([&](const InputSpec& s) { return !s.shape.empty() && s.shape.back() == got; });
  if (i) {
    InputSpec s = *t.specs[*i];
    s.shape.back() = want;
    return t.With(*i, s, "a matrix product wants " + std::to_string(want) + " features");
  }
  // The argument concatenated with a few features of its own before the
  // product (`cat([x, ones], -1) @ w`): its last size moves by the same step.
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
  const int64_t got = (*input)[dim];
  auto i = t.Find([&](const InputSpec& s) { return !s.shape.empty() && s.shape.back() == got; });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.shape.back() = std::max<int64_t>(16000, 4 * pad);
  return t.With(*i, s, "a padding of " + std::to_string(pad) + " wants a longer input");
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
  s.shape = *target;
  return t.With(*i, s, "a view wants " + ShapeText(*target));
}

std::optional<Refinement> IntegerIndices(const Tensors& t, const std::string& e) {
  // "Expected tensor for argument #1 'indices' to have one of the following
  // scalar types: Long, Int; but got torch.FloatTensor instead"; "expected
  // scalar type Long but found Float"
  std::smatch m = Match(e, R"(scalar types?: Long(, Int)?; but got torch\.(\w+)Tensor)");
  if (m.empty()) m = Match(e, R"(expected scalar type (Long|Int) but found (Float|Double|Half|BFloat16))");
  if (m.empty()) return std::nullopt;
  auto floating = [](const InputSpec& s) { return IsFloatingDtype(s.dtype); };
  auto i = t.Find(floating);  // the first: indices come before masks and lengths
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.dtype = "int64";
  if (s.shape.size() > 2) s.shape = {1, 16};  // token ids, not an image
  // Indices below 2 fit every table (embeddings, gathers, one-hot).
  s.fill = InputSpec::Fill::kRandint;
  s.low = 0;
  s.high = 2;
  return t.With(*i, s, "an operator wants integer indices");
}

std::optional<Refinement> Broadcast(const Tensors& t, const std::string& e) {
  // "The size of tensor a (224) must match the size of tensor b (64) at
  // non-singleton dimension 3"
  std::smatch m = Match(e, R"(The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton dimension (\d+))");
  if (m.empty()) return std::nullopt;
  const int64_t a = std::stoll(m[1]), b = std::stoll(m[2]);
  const size_t dim = std::stoul(m[3]);
  for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    auto i = t.Find([&](const InputSpec& s) { return dim < s.shape.size() && s.shape[dim] == from; });
    if (!i) continue;
    InputSpec s = *t.specs[*i];
    s.shape[dim] = to;
    return t.With(*i, s, "dimension " + std::to_string(dim) + " must be " + std::to_string(to));
  }
  return std::nullopt;
}

std::optional<Refinement> Recurrent(const Tensors& t, const std::string& e) {
  // "input.size(-1) must be equal to input_size. Expected 40, got 224"
  std::smatch m = Match(e, R"(input\.size\(-1\) must be equal to input_size\. Expected (\d+), got (\d+))");
  if (!m.empty()) {
    const int64_t want = std::stoll(m[1]), got = std::stoll(m[2]);
    auto i = t.Find([&](const InputSpec& s) { return !s.shape.empty() && s.shape.back() == got; });
    if (!i) return std::nullopt;
    InputSpec s = *t.specs[*i];
    s.shape.back() = want;
    return t.With(*i, s, "a recurrent layer wants " + std::to_string(want) + " features");
  }
  // "input must have 3 dimensions, got 4"
  m = Match(e, R"(input must have (\d) dimensions, got (\d))");
  if (m.empty()) return std::nullopt;
  const size_t want = std::stoul(m[1]), got = std::stoul(m[2]);
  auto i = t.Find([&](const InputSpec& s) { return s.shape.size() == got; });
  if (!i || (want != 2 && want != 3)) return std::nullopt;
  InputSpec s = *t.specs[*i];
  const int64_t features = s.shape.empty() ? 16 : s.shape.back();
  s.shape = want == 3 ? Shape{1, 8, features} : Shape{8, features};
  return t.With(*i, s, "a recurrent layer wants a " + std::to_string(want) + "-D sequence");
}

std::optional<Refinement> Norms(const Tensors& t, const std::string& e) {
  // "Given normalized_shape=[768], expected input with shape [*, 768], but
  // got input of size[1, 16]"
  std::smatch m = Match(e, R"(Given normalized_shape=\[([0-9, ]+)\], expected input with shape \[\*, [0-9, ]+\], but got input of size\s*\[([0-9, ]+)\])");
  if (!m.empty()) {
    std::optional<Shape> norm = Dims(m[1]), got = Dims(m[2]);
    if (!norm || !got) return std::nullopt;
    auto i = t.Find([&](const InputSpec& s) { return s.shape == *got; });
    if (!i) return std::nullopt;
    InputSpec s = *t.specs[*i];
    Shape shape = got->size() > norm->size() ? Shape(got->begin(), got->end() - static_cast<long>(norm->size())) : Shape{1};
    shape.insert(shape.end(), norm->begin(), norm->end());
    s.shape = shape;
    return t.With(*i, s, "a layer norm wants [*, " + ShapeText(*norm) + "]");
  }
  // "running_mean should contain 64 elements not 3"
  m = Match(e, R"(running_mean should contain (\d+) elements not (\d+))");
  if (m.empty()) return std::nullopt;
  const int64_t want = std::stoll(m[1]), got = std::stoll(m[2]);
  auto i = t.Find([&](const InputSpec& s) { return s.shape.size() >= 2 && s.shape[1] == got; });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.shape[1] = want;
  return t.With(*i, s, "a batch norm wants " + std::to_string(want) + " channels");
}

std::optional<Refinement> Concatenation(const Tensors& t, const std::string& e) {
  // "Sizes of tensors must match except in dimension 1. Expected size 512 but
  // got size 224 for tensor number 1 in the list."
  std::smatch m = Match(e, R"(Sizes of tensors must match except in dimension (\d+)\. Expected size (\d+) but got size (\d+) for tensor number (\d+))");
  if (!m.empty()) {
    const size_t except = std::stoul(m[1]), number = std::stoul(m[4]);
    const int64_t want = std::stoll(m[2]), got = std::stoll(m[3]);
    // The number counts the concatenated tensors: the arguments, in order,
    // when they are what is concatenated.
    std::vector<size_t> order;
    size_t k = 0;
    for (size_t i = 0; i < t.specs.size(); ++i) {
      if (!t.specs[i]) continue;
      if (k++ == number) order.insert(order.begin(), i);
      else order.push_back(i);
    }
    for (size_t i : order) {
      InputSpec s = *t.specs[i];
      for (size_t d = s.shape.size(); d-- > 0;) {
        if (d == except || s.shape[d] != got) continue;
        s.shape[d] = want;
        return t.With(i, s, "a concatenation wants size " + std::to_string(want) + " in dimension " + std::to_string(d));
      }
    }
    return std::nullopt;
  }
  // "Tensors must have same number of dimensions: got 4 and 3": concatenated
  // with something of another rank; the argument takes that rank (its
  // trailing sizes kept).
  m = Match(e, R"(Tensors must have same number of dimensions: got (\d) and (\d))");
  if (m.empty()) return std::nullopt;
  for (auto [from, to] : {std::pair{std::stoul(m[1]), std::stoul(m[2])}, std::pair{std::stoul(m[2]), std::stoul(m[1])}}) {
    auto i = t.Find([&](const InputSpec& s) { return s.shape.size() == from; });
    if (!i || to == 0) continue;
    InputSpec s = *t.specs[*i];
    if (to < from) s.shape.erase(s.shape.begin(), s.shape.begin() + static_cast<long>(from - to));
    else s.shape.insert(s.shape.begin(), to - from, 1);
    return t.With(*i, s, "a concatenation wants a " + std::to_string(to) + "-D tensor");
  }
  return std::nullopt;
}

std::optional<Refinement> DimensionRange(const Tensors& t, const std::string& e) {
  // "Dimension out of range (expected to be in range of [-2, 1], but got 2)":
  // an operator indexes a dimension the argument lacks; one more leading 1.
  std::smatch m = Match(e, R"(Dimension out of range \(expected to be in range of \[-(\d+), \d+\], but got (-?\d+)\))");
  if (m.empty()) return std::nullopt;
  const size_t rank = std::stoul(m[1]);
  const long got = std::stol(m[2]);
  const size_t need = static_cast<size_t>(got < 0 ? -got : got + 1);
  auto i = t.Find([&](const InputSpec& s) { return s.shape.size() == rank; });
  if (!i || need <= rank || need > 5) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.shape.insert(s.shape.begin(), need - rank, 1);
  return t.With(*i, s, "an operator reads dimension " + std::string(m[2]));
}

// A size that no argument has, which grows with the input's area (anchors
// of a detector, a flattened feature map before a linear layer, the
// positions of a patch grid): "The size of tensor a (2890) must match the
// size of tensor b (9984)", "expected input[1, 529, 40] to have 441
// channels", "mat1 and mat2 shapes cannot be multiplied (1x2890 and
// 9984x10)". The first image argument (rank 4; a video's frames of rank
// 5; a signal of rank 3, whose length scales by want/got) takes the size
// whose area is nearest want/got times its own: its height and width scaled
// by the square root, rounded to a multiple of 4, or one of the common
// input sizes (240x320, 300x300, 360x480, ...: detectors' anchors fix one,
// often not square), never the size that gave the error.
std::optional<Refinement> AreaScale(const Tensors& t, const std::string& e) {
  int64_t got = 0, want = 0;
  std::smatch m = Match(e, R"(The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton dimension)");
  if (!m.empty()) {
    got = std::stoll(m[1]);
    want = std::stoll(m[2]);
  } else if (!(m = Match(e, R"(expected input\[[0-9, ]+\] to have (\d+) channels, but got (\d+) channels)")).empty()) {
    want = std::stoll(m[1]);
    got = std::stoll(m[2]);
  } else if (!(m = Match(e, R"(mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\))")).empty()) {
    got = std::stoll(m[2]);
    want = std::stoll(m[3]);
  } else {
    return std::nullopt;
  }
  if (got < 2 || want < 2 || got == want || want > 256 * got || got > 256 * want) return std::nullopt;
  // Only a size the arguments do not have: else another rule's case.
  if (t.Find([&](const InputSpec& s) { return std::count(s.shape.begin(), s.shape.end(), got) > 0; })) return std::nullopt;
  auto i = t.Find([](const InputSpec& s) { return IsFloatingDtype(s.dtype) && s.shape.size() >= 3 && s.shape.size() <= 5; });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  const double ratio = static_cast<double>(want) / static_cast<double>(got);
  auto round_to = [](double v, int64_t step) { return std::max<int64_t>(step, static_cast<int64_t>(v / step + 0.5) * step); };
  Shape next = s.shape;
  if (s.shape.size() == 3) {
    next[2] = round_to(static_cast<double>(s.shape[2]) * ratio, 4);
  } else {
    // Height and width (a video's frames keep their number): the scaled
    // size, or the common input size whose area is nearest the one wanted
    // (detectors' anchors fix one size, often not square), whichever is
    // nearer; never the size that gave this error.
    const size_t h = s.shape.size() - 2, w = s.shape.size() - 1;
    const double area = static_cast<double>(s.shape[h] * s.shape[w]) * ratio;
    const double scale = std::sqrt(ratio);
    std::vector<std::pair<int64_t, int64_t>> sizes = {
        {round_to(static_cast<double>(s.shape[h]) * scale, 4), round_to(static_cast<double>(s.shape[w]) * scale, 4)},
        {240, 320}, {320, 240}, {300, 300}, {320, 320}, {360, 480}, {480, 360}, {384, 384}, {416, 416}, {512, 512},
        {480, 640}, {640, 480}, {384, 640}, {608, 608}, {640, 640}, {720, 1280}, {1024, 1024}};
    double best = -1;
    for (auto [hh, ww] : sizes) {
      if (hh == s.shape[h] && ww == s.shape[w]) continue;
      const double miss = std::abs(static_cast<double>(hh * ww) - area);
      if (best >= 0 && miss >= best) continue;
      best = miss;
      next[h] = hh;
      next[w] = ww;
    }
  }
  if (next == s.shape || std::any_of(next.begin() + 2, next.end(), [](int64_t d) { return d > 8192; })) return std::nullopt;
  s.shape = next;
  return t.With(*i, s, "a size of " + std::to_string(want) + " where the input gives " + std::to_string(got) +
                           ": a count that grows with the input's " + (next.size() == 3 ? "length" : "area"));
}

// "KeyError: foo": TorchScript's dict lookup (aten::__getitem__.Dict_str)
// found no such key. The first dictionary argument (spelled as a JSON object)
// without it gets the key, its value a copy of the dictionary's first value:
// a model reads the keys it needs, one error at a time.
std::optional<Refinement> DictKey(const std::vector<ArgSpec>& args, const std::string& e) {
  std::smatch m = Match(e, R"(KeyError: ([^\n]{1,64}?)(?: at File |\n|$))");
  if (m.empty()) return std::nullopt;
  std::string key = m[1];
  if (key.size() >= 2 && (key[0] == '\'' || key[0] == '"') && key.back() == key[0]) key = key.substr(1, key.size() - 2);
  for (size_t i = 0; i < args.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(args[i].value, nullptr, false);
    if (!j.is_object() || j.empty() || j.contains(key) || j.size() >= 16) continue;
    j[key] = j.begin().value();
    return Replaced(args, i, j.dump(), "the code reads key '" + key + "'");
  }
  return std::nullopt;
}

}  // namespace

std::optional<Refinement> RefineFromError(const std::vector<ArgSpec>& args, const std::string& error) {
  // LibTorch's messages are short; a TorchScript traceback before them is not
  // read past 64 KiB.
  const std::string e = error.size() > (64u << 10) ? error.substr(error.size() - (64u << 10)) : error;
  try {
    if (std::optional<Refinement> r = DictKey(args, e)) return r;
  } catch (const std::exception&) {
  }
  const Tensors t(args);
  if (t.Count() == 0) return std::nullopt;
  for (auto rule : {ConvChannels, ConvRank, MatrixProduct, MatrixVector, Signal, ViewSize, IntegerIndices, Broadcast,
                    Recurrent, Norms, Concatenation, DimensionRange, AreaScale}) {
    try {
      if (std::optional<Refinement> r = rule(t, e)) return r;
    } catch (const std::exception&) {
      // A number too large for stoll, a regex limit: no refinement.
    }
  }
  return std::nullopt;
}

}  // namespace tsctl
