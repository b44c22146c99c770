// The rules of RefineFromError about layouts: norms' normalized shape,
// concatenation, dimension ranges, sizes that grow with an image's area,
// and dictionary keys (recurrent layers: refine_recurrent.cc).
#include "refine_rules.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace tsctl::refine {

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
  for (const auto& ranks : {std::pair{std::stoul(m[1]), std::stoul(m[2])}, std::pair{std::stoul(m[2]), std::stoul(m[1])}}) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one.
    const unsigned long from = ranks.first, to = ranks.second;
    auto i = t.Find([&](const InputSpec& s) { return s.shape.size() == from; });
    if (!i || to == 0) continue;
    InputSpec s = *t.specs[*i];
    if (to < from) s.shape.erase(s.shape.begin(), s.shape.begin() + static_cast<long>(from - to));
    else s.shape.insert(s.shape.begin(), to - from, 1);
    return t.With(*i, s, "a concatenation wants a " + std::to_string(to) + "-D tensor");
  }
  return std::nullopt;
}

std::optional<Refinement> Stack(const Tensors& t, const std::string& e) {
  // "stack expects each tensor to be equal size, but got [1, 11] at entry 0
  // and [1, 3] at entry 1": the argument of the second shape takes the first.
  std::smatch m = Match(e, R"(stack expects each tensor to be equal size, but got \[([0-9, ]*)\] at entry \d+ and \[([0-9, ]*)\] at entry)");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> want = Dims(m[1]), got = Dims(m[2]);
  if (!want || !got || *want == *got) return std::nullopt;
  for (const auto& sizes : {std::pair{*got, *want}, std::pair{*want, *got}}) {
    const Shape from = sizes.first, to = sizes.second;
    auto i = t.Find([&](const InputSpec& s) { return s.shape == from; });
    if (!i) continue;
    InputSpec s = *t.specs[*i];
    s.shape = to;
    return t.With(*i, s, "a stack wants " + ShapeText(to) + " like the other tensors");
  }
  return std::nullopt;
}

namespace {

// n without its square factors: 10000 -> 1, 392 -> 2.
int64_t SquareFree(int64_t n) {
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % (p * p) == 0) n /= p * p;
  }
  return n;
}

}  // namespace

// A view or reshape of a flattened feature map: "shape '[-1, 784]' is
// invalid for input of size 10000". The map of an image of side S has
// C * h * h elements, h = S / s - k for a stride s (a power of two) and a few
// pixels k lost at the borders; the view wants a multiple of 784 (the sizes
// other than -1; all of them without a -1). The count and the one wanted
// are read as C * h^2 and C * t^2 (C their common square-free part, the
// wanted count times the smallest factor up to 16 that gives one), s as the
// largest power of two with S / s >= h, and the image (rank 4, or a video's
// frames: rank 5, square) takes the side (t + k) * s, batch and channels
// kept: 224 -> 10000 and 784 wanted give 80. Counts that share no such
// part, or a map larger than the image, are left alone (a guess there cost
// candidates and found nothing on the corpus: `[-1, 1, 100, 13]`). A second
// error of the same kind refines again from the new side.
std::optional<Refinement> FlattenedArea(const Tensors& t, const std::string& e) {
  std::smatch m = Match(e, R"(shape '\[([-0-9, ]+)\]' is invalid for input of size (\d+))");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> target = Dims(m[1]);
  if (!target || target->empty()) return std::nullopt;
  const bool batch_free = std::count(target->begin(), target->end(), -1) == 1;
  int64_t need = 1;
  for (int64_t d : *target) {
    if (d == -1) continue;
    if (d <= 0 || need > (int64_t{1} << 40) / d) return std::nullopt;
    need *= d;
  }
  const int64_t got = std::stoll(m[2]);
  if (got < 1 || (batch_free && got % need == 0) || (!batch_free && got == need)) return std::nullopt;
  // The argument itself viewed: ViewSize's case.
  if (t.Find([&](const InputSpec& s) { return Numel(s.shape) == got; })) return std::nullopt;
  auto i = t.Find([](const InputSpec& s) {
    const size_t r = s.shape.size();
    return IsFloatingDtype(s.dtype) && (r == 4 || r == 5) && s.shape[r - 1] == s.shape[r - 2];
  });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  const size_t r = s.shape.size();
  const int64_t side = s.shape[r - 1];
  int64_t next = 0;
  const int64_t c = SquareFree(got);
  for (int64_t k = 1; k <= (batch_free ? 16 : 1) && next == 0; ++k) {
    if (SquareFree(need * k) != c) continue;
    const auto h = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(got / c))));
    const auto want = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(need * k / c))));
    if (h < 1 || side < h) break;
    int64_t stride = 1;
    while (side / (stride * 2) >= h) stride *= 2;
    const double lost = static_cast<double>(side) / static_cast<double>(stride) - static_cast<double>(h);
    next = std::llround((static_cast<double>(want) + lost) * static_cast<double>(stride));
  }
  if (next <= 0 || next == side || next > 8192) return std::nullopt;
  s.shape[r - 1] = s.shape[r - 2] = next;
  return t.With(*i, s, "a view wants " + std::to_string(need) + (batch_free ? " features per item" : " elements") + " where the input gives " +
                           std::to_string(got) + ": a feature map that grows with the input's area");
}

// A shape unpacked into names (`b, t, c, h, w = x.shape`): "Expected 5
// elements in a list but found 4". The argument of the rank found gets 1s
// after its batch (or loses the sizes after it).
std::optional<Refinement> UnpackRank(const Tensors& t, const std::string& e) {
  std::smatch m = Match(e, R"(Expected (\d) elements in a list but found (\d)\b)");
  if (m.empty()) return std::nullopt;
  const size_t want = std::stoul(m[1]), found = std::stoul(m[2]);
  auto i = t.Find([&](const InputSpec& s) { return s.shape.size() == found; });
  if (!i || want == found || want < 1 || want > 6 || found < 1) return std::nullopt;
  InputSpec s = *t.specs[*i];
  if (want > found) s.shape.insert(s.shape.begin() + 1, want - found, 1);
  else s.shape.erase(s.shape.begin() + 1, s.shape.begin() + 1 + static_cast<long>(found - want));
  return t.With(*i, s, "the code unpacks " + std::to_string(want) + " sizes");
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

// The sizes of `shape` a count grows with: an image's (or a video frame's)
// height and width; a 3-D tensor's last two where they are equal (a map
// without channels, a spectrogram); else one length: a signal's last size,
// or a sequence's second where the count is proportional to it (scaling it
// by want/got gives a whole number and scaling the last does not: time
// steps times features).
std::vector<size_t> SpatialDims(const Shape& shape, int64_t got, int64_t want) {
  const size_t r = shape.size();
  if (r >= 4) return {r - 2, r - 1};
  if (r == 3 && shape[1] == shape[2] && shape[1] > 1) return {1, 2};
  if (r == 3 && got > 0) {
    auto whole = [&](int64_t d) {
      return d > 1 && (d * want) % got == 0;
    };
    if (whole(shape[1]) && !whole(shape[2])) return {1};
  }
  return {r - 1};
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
// often not square), or, where the count is exactly proportional to the
// area and the area wanted has no square side, its most nearly square
// factor pair (a 4000-input linear after a map giving 2 values per pixel:
// 20x100); never the size that gave the error.
std::optional<Refinement> AreaScale(const Tensors& t, const std::string& e) {
  const auto count = CountMismatch(e);
  if (!count) return std::nullopt;
  const auto [got, want] = *count;
  if (got < 2 || want < 2 || got == want || want > 256 * got || got > 256 * want) return std::nullopt;
  // Only a size the arguments do not have: else another rule's case.
  if (t.Find([&](const InputSpec& s) { return std::count(s.shape.begin(), s.shape.end(), got) > 0; })) return std::nullopt;
  auto i = t.Find([](const InputSpec& s) { return IsFloatingDtype(s.dtype) && s.shape.size() >= 2 && s.shape.size() <= 5; });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  const double ratio = static_cast<double>(want) / static_cast<double>(got);
  auto round_to = [](double v, int64_t step) { return std::max<int64_t>(step, static_cast<int64_t>(v / step + 0.5) * step); };
  Shape next = s.shape;
  const std::vector<size_t> dims = SpatialDims(s.shape, got, want);
  if (dims.size() == 1) {
    // One length: scaled exactly where the count is proportional to it,
    // else to a multiple of 4.
    const double scaled = static_cast<double>(s.shape[dims[0]]) * ratio;
    next[dims[0]] = std::abs(scaled - std::round(scaled)) < 1e-9 && scaled >= 1 ? std::llround(scaled) : round_to(scaled, 4);
  } else {
    // Height and width (a video's frames keep their number): the scaled
    // size, or the common input size whose area is nearest the one wanted
    // (detectors' anchors fix one size, often not square), whichever is
    // nearer; never the size that gave this error.
    const size_t h = dims[0], w = dims[1];
    const double area = static_cast<double>(s.shape[h] * s.shape[w]) * ratio;
    const double scale = std::sqrt(ratio);
    std::vector<std::pair<int64_t, int64_t>> sizes = {
        {round_to(static_cast<double>(s.shape[h]) * scale, 4), round_to(static_cast<double>(s.shape[w]) * scale, 4)},
        {240, 320}, {320, 240}, {300, 300}, {320, 320}, {360, 480}, {480, 360}, {384, 384}, {416, 416}, {512, 512},
        {480, 640}, {640, 480}, {384, 640}, {608, 608}, {640, 640}, {720, 1280}, {1024, 1024}};
    // A count exactly proportional to the area (a flattened feature map:
    // channels * (H/s) * (W/s)) whose wanted area has no square side: the
    // most nearly square factor pair of it, both multiples of 4 (the
    // strides), wider than high (spectrograms, text lines), at most 8:1.
    const int64_t own = s.shape[h] * s.shape[w];
    if (own <= (int64_t{1} << 40) / want && own * want % got == 0) {
      const int64_t exact = own * want / got;
      const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(exact))));
      if (side * side != exact) {
        for (int64_t hh = 4 * (side / 4); hh >= 4; hh -= 4) {
          if (exact % hh != 0 || (exact / hh) % 4 != 0) continue;
          if (exact / hh <= 8 * hh) sizes.insert(sizes.begin() + 1, {hh, exact / hh});
          break;
        }
      }
    }
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
  if (next == s.shape || std::any_of(next.begin() + 1, next.end(), [](int64_t d) { return d > 8192; })) return std::nullopt;
  s.shape = next;
  return t.With(*i, s, "a size of " + std::to_string(want) + " where the input gives " + std::to_string(got) +
                           ": a count that grows with the input's " + (dims.size() == 1 ? "length" : "area"));
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
    if (!j.is_object() || j.empty() || j.contains(key) || j.size() >= 32) continue;
    j[key] = j.begin().value();
    return Replaced(args, i, j.dump(), "the code reads key '" + key + "'");
  }
  return std::nullopt;
}

}  // namespace tsctl::refine
