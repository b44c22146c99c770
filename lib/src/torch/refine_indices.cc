// The rules of RefineFromError about indices: a float guess where an
// operator wants integer indices, and indices past their table
// (refine_rules.h).
#include "refine_rules.h"

namespace tsctl::refine {

std::optional<Refinement> IntegerIndices(const Tensors& t, const std::string& e) {
  // "Expected tensor for argument #1 'indices' to have one of the following
  // scalar types: Long, Int; but got torch.FloatTensor instead"; "expected
  // scalar type Long but found Float"
  // The type after "but got" is Python's name (torch.FloatTensor) or
  // LibTorch's own (CPUFloatType: what TorchScript run from C++ says, 1.13
  // and 2.x alike). The other operators that take indices say it their way:
  // index_select's "Expected dtype int32 or int64 for index", gather's and
  // scatter's "Expected dtype int64 for index" (2.x: "int32/int64"),
  // take's and put's "Expected a long tensor for index, but got Float",
  // indexing's "tensors used as indices must be long, byte or bool tensors"
  // (2.x: "long, int, byte or bool"), one_hot's "only applicable to index
  // tensor" (2.x: "... of type LongTensor").
  static const char* const kPatterns[] = {
      R"(scalar types?: Long(, Int)?; but got (torch\.\w+Tensor|\w*(Float|Double|Half|BFloat16)Type))",
      R"(expected scalar type (Long|Int) but found (Float|Double|Half|BFloat16))",
      R"(Expected dtype int(32 or int64|64|32/int64) for index)",
      R"(Expected a long tensor for index, but got (Float|Double|Half|BFloat16))",
      R"(tensors used as indices must be long, (int, )?byte or bool tensors)",
      R"(one_hot is only applicable to index tensor)"};
  std::smatch m;
  for (const char* p : kPatterns) {
    if (!(m = Match(e, p)).empty()) break;
  }
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

std::optional<Refinement> IndexRange(const Tensors& t, const std::string& e) {
  // An index past its table: embedding's and index_select's "index out of
  // range in self", indexing's, gather's and scatter's "index 7 is out of
  // bounds for dimension 0 with size 5", take's "out of range: tried to
  // access index 9 on a tensor of 5 elements". The guess made the indices:
  // integers drawn from a wide range, or floats made integers (`x.long()`,
  // negative half the time). That argument (an integer one drawn past 2
  // first, else the first floating one) becomes int64 indices in [0, 2),
  // its shape kept, below every table's size of 2 or more (a size of 1
  // named in the message gives [0, 1)).
  std::smatch m = Match(e, R"(index -?\d+ is out of bounds for dimension \d+ with size (\d+))");
  if (m.empty()) m = Match(e, R"(out of range: tried to access index -?\d+ on a tensor of (\d+) elements)");
  if (m.empty()) m = Match(e, R"(index out of range in self())");
  if (m.empty()) return std::nullopt;
  const int64_t high = m[1].length() > 0 && std::stoll(m[1]) == 1 ? 1 : 2;
  if (m[1].length() > 0 && std::stoll(m[1]) == 0) return std::nullopt;  // an empty table: no index fits
  auto wide = [&](const InputSpec& s) {
    return !IsFloatingDtype(s.dtype) && s.dtype != "bool" &&
           !(s.fill == InputSpec::Fill::kRandint && s.low >= 0 && s.high <= high);
  };
  auto i = t.Find(wide);
  if (!i) i = t.Find([](const InputSpec& s) { return IsFloatingDtype(s.dtype); });
  if (!i) return std::nullopt;
  InputSpec s = *t.specs[*i];
  s.dtype = "int64";
  s.fill = InputSpec::Fill::kRandint;
  s.low = 0;
  s.high = high;
  return t.With(*i, s, "an index is past its table: indices in [0, " + std::to_string(high) + ")");
}

}  // namespace tsctl::refine
