// The rules of RefineFromError about recurrent layers (their input size,
// rank and hidden state), attention layers' embedding, and columns
// broadcast against a stored table (refine_rules.h).
#include "refine_rules.h"

#include <nlohmann/json.hpp>

namespace tsctl::refine {

namespace {

// `value` with `change` applied: to it, a tensor spec, or to each spec of
// it, a JSON list of at most 16 (a tuple of states); nullopt where
// `change` (false: leave that spec) changed none.
template <typename F>
std::optional<std::string> EachSpec(const std::string& value, F change) {
  auto one = [&](const std::string& v) -> std::optional<std::string> {
    try {
      InputSpec s = ParseInputSpec(v);
      if (!change(s)) return std::nullopt;
      return s.ToString();
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  if (std::optional<std::string> v = one(value)) return v;
  nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
  if (!j.is_array() || j.size() > 16) return std::nullopt;
  bool changed = false;
  for (auto& x : j) {
    if (!x.is_string()) continue;
    if (std::optional<std::string> v = one(x.get<std::string>())) {
      x = *v;
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return j.dump();
}

}  // namespace

std::optional<Refinement> Recurrent(const Tensors& t, const std::string& e) {
  // "input.size(-1) must be equal to input_size. Expected 40, got 224"
  std::smatch m = Match(e, R"(input\.size\(-1\) must be equal to input_size\. Expected (\d+), got (\d+))");
  if (!m.empty()) {
    const int64_t want = std::stoll(m[1]), got = std::stoll(m[2]);
    return t.LastSize(got, want, "a recurrent layer wants " + std::to_string(want) + " features");
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

// A recurrent layer's hidden state of the wrong size: "Expected hidden
// size (1, 1, 7), got [1, 1, 16000]" (a GRU's, an RNN's), "Expected
// hidden[0] size (1, 1, 10), got [...]" (an LSTM's h; [1] its c). The state
// is an argument of its own or a tuple of them (spelled as a JSON list of
// specs): every tensor of the size named takes the size wanted (an LSTM's
// h and c share it unless projected).
std::optional<Refinement> Hidden(const std::vector<ArgSpec>& args, const std::string& e) {
  std::smatch m = Match(e, R"(Expected hidden(?:\[\d\])? size \(([0-9, ]+)\), got \[([0-9, ]*)\])");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> want = Dims(m[1]), got = Dims(m[2]);
  if (!want || !got || *want == *got) return std::nullopt;
  auto retarget = [&](InputSpec& s) {
    if (s.shape != *got) return false;
    s.shape = *want;
    return true;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::optional<std::string> v = EachSpec(args[i].value, retarget)) {
      return Replaced(args, i, *v, "a recurrent layer wants a hidden state of " + ShapeText(*want));
    }
  }
  return std::nullopt;
}

// A column broadcast against a stored feature (PackedOpChecks): "aten::sub
// broadcasts [16, 1] from the inputs against the stored [37, 8]". The
// argument the column came from gets the feature as its last size: the
// column itself (its last size), or the argument that was unsqueezed into
// it (the feature appended).
std::optional<Refinement> FeatureBroadcast(const Tensors& t, const std::string& e) {
  std::smatch m = Match(e, R"(broadcasts \[([0-9, ]+)\] from the inputs against the stored \[([0-9, ]+)\])");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> column = Dims(m[1]), stored = Dims(m[2]);
  if (!column || !stored || column->empty() || stored->empty()) return std::nullopt;
  const int64_t feature = stored->back();
  const Shape trimmed(column->begin(), column->end() - 1);
  const std::string why = "rows of " + std::to_string(feature) + " features, as the stored " + ShapeText(*stored) + " has";
  if (auto i = t.Find([&](const InputSpec& s) { return s.shape == *column; })) {
    InputSpec s = *t.specs[*i];
    s.shape.back() = feature;
    return t.With(*i, s, why);
  }
  if (auto i = t.Find([&](const InputSpec& s) { return s.shape == trimmed; })) {
    InputSpec s = *t.specs[*i];
    s.shape.push_back(feature);
    return t.With(*i, s, why);
  }
  return std::nullopt;
}

// A recurrent layer's state of the wrong rank: "For batched 3-D input, hx
// should also be 3-D but got 2-D tensor" (an LSTM's: "hx and cx"). Every
// tensor of the rank named, in an argument or a tuple argument, gets leading
// 1s (layers, batch) or loses leading sizes.
std::optional<Refinement> HiddenRank(const std::vector<ArgSpec>& args, const std::string& e) {
  std::smatch m = Match(e, R"(For (?:un)?batched \d-D input, hx (?:and cx )?should also be (\d)-D but got (\d)-D tensor)");
  if (m.empty()) return std::nullopt;
  const size_t want = std::stoul(m[1]), got = std::stoul(m[2]);
  if (want == got || want < 2 || want > 3) return std::nullopt;
  auto rerank = [&](InputSpec& s) {
    if (s.shape.size() != got || !IsFloatingDtype(s.dtype)) return false;
    if (want > got) s.shape.insert(s.shape.begin(), want - got, 1);
    else s.shape.erase(s.shape.begin(), s.shape.begin() + static_cast<long>(got - want));
    return true;
  };
  // The state comes after the input: the last argument that fits.
  for (size_t i = args.size(); i-- > 0;) {
    if (std::optional<std::string> v = EachSpec(args[i].value, rerank)) {
      return Replaced(args, i, *v, "a recurrent layer wants a " + std::to_string(want) + "-D state");
    }
  }
  return std::nullopt;
}

// nn.MultiheadAttention's own check: "was expecting embedding dimension of
// 16, but got 224": the argument whose last size is 224 gets 16.
std::optional<Refinement> EmbeddingDim(const Tensors& t, const std::string& e) {
  std::smatch m = Match(e, R"(was expecting embedding dimension of (\d+), but got (\d+))");
  if (m.empty()) return std::nullopt;
  const int64_t want = std::stoll(m[1]), got = std::stoll(m[2]);
  if (want < 1) return std::nullopt;
  return t.LastSize(got, want, "an attention layer wants an embedding of " + std::to_string(want));
}

// pack_padded_sequence's lengths (and an index_select's index that must be
// a vector): "Expected `len(lengths)` to be equal to batch_size, but got
// 16 (batch_size=1)"; "'lengths' argument should be a 1D CPU int64 tensor,
// but got 1D cpu Float tensor"; "Length of all samples has to be greater
// than 0". The argument of that many values (or the 1-D float one) becomes
// one int64 length per item, each 1 (at least 1, at most any sequence's).
std::optional<Refinement> Lengths(const Tensors& t, const std::string& e) {
  // An index_select's "Index is supposed to be a vector" (the order of a
  // sort of the lengths, pack_padded_sequence's unsorted case): the float
  // argument of a higher rank becomes a vector of its first size.
  if (!Match(e, R"(index_select\(\): Index is supposed to be a vector)").empty()) {
    auto i = t.Find([](const InputSpec& s) { return s.shape.size() > 1 && IsFloatingDtype(s.dtype); });
    if (!i) return std::nullopt;
    InputSpec s = *t.specs[*i];
    s.shape = {std::max<int64_t>(1, s.shape[0])};
    return t.With(*i, s, "an index_select wants a vector of indices");
  }
  std::smatch m = Match(e, R"(Expected `len\(lengths\)` to be equal to batch_size, but got (\d+) \(batch_size=(\d+)\))");
  int64_t got = -1, batch = -1;
  if (!m.empty()) {
    got = std::stoll(m[1]);
    batch = std::stoll(m[2]);
  } else if (Match(e, R"('lengths' argument should be a 1D CPU int64 tensor, but got 1D \w+ (Float|Double|Half|BFloat16) tensor)").empty() &&
             Match(e, R"(Length of all samples has to be greater than 0)").empty()) {
    return std::nullopt;
  }
  auto i = t.Find([&](const InputSpec& s) {
    return s.shape.size() == 1 && (got < 0 ? IsFloatingDtype(s.dtype) : s.shape[0] == got);
  });
  if (!i || batch == 0 || batch > 4096) return std::nullopt;
  InputSpec s = *t.specs[*i];
  if (batch > 0) s.shape = {batch};
  s.dtype = "int64";
  s.fill = InputSpec::Fill::kRandint;
  s.low = 1;
  s.high = 2;
  return t.With(*i, s, "a packed sequence wants one int64 length per item");
}

// An interpolation's output size of the wrong length: "Input and output must
// have the same number of spatial dimensions, but got input with spatial
// dimensions of [224, 224] and output size of [1]": the int list argument
// of that value takes the input's spatial sizes.
std::optional<Refinement> OutputSize(const std::vector<ArgSpec>& args, const std::string& e) {
  std::smatch m = Match(e, R"(spatial dimensions of \[([0-9, ]+)\] and output size of \[([0-9, ]*)\])");
  if (m.empty()) return std::nullopt;
  std::optional<Shape> spatial = Dims(m[1]), size = Dims(m[2]);
  if (!spatial || !size || spatial->empty()) return std::nullopt;
  for (size_t i = 0; i < args.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(args[i].value, nullptr, false);
    if (!j.is_array() || j.size() != size->size()) continue;
    bool same = true;
    for (size_t k = 0; k < j.size() && same; ++k) same = j[k].is_number_integer() && j[k].get<int64_t>() == (*size)[k];
    if (!same) continue;
    return Replaced(args, i, nlohmann::json(*spatial).dump(), "an interpolation wants " + std::to_string(spatial->size()) + " output sizes");
  }
  return std::nullopt;
}

}  // namespace tsctl::refine
