// What running a .pt2 needs besides its path (tsctl/pt2_run.h), without
// LibTorch: the runner, the model, the user inputs and a guess at them.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "tsctl/dtype.h"
#include "tsctl/error.h"
#include "tsctl/pt2.h"
#include "tsctl/pt2_run.h"

namespace tsctl {
namespace {

struct DimBounds {
  std::optional<int64_t> exact, min, max;
};

// The integer after `marker` at or after `from` in `text`, if it comes before `end`.
std::optional<int64_t> NumberAfter(const std::string& text, const std::string& marker, size_t from, size_t end) {
  const size_t at = text.find(marker, from);
  if (at == std::string::npos || at >= end) return std::nullopt;
  const char* start = text.c_str() + at + marker.size();
  char* stop = nullptr;
  const long long v = std::strtoll(start, &stop, 10);
  if (stop == start) return std::nullopt;
  return static_cast<int64_t>(v);
}

// Each "PHRASE at I, " in [begin, end) calls `f(I, position after it)`.
template <typename F>
void ForEachDim(const std::string& text, const std::string& phrase, size_t begin, size_t end, F f) {
  for (size_t at = text.find(phrase, begin); at != std::string::npos && at < end; at = text.find(phrase, at + 1)) {
    const size_t after = at + phrase.size();
    char* stop = nullptr;
    const long index = std::strtol(text.c_str() + after, &stop, 10);
    if (stop == text.c_str() + after || index < 0 || index > 64) continue;
    f(static_cast<size_t>(index), static_cast<size_t>(stop - text.c_str()));
  }
}

// The dtype the check compares with: "aoti_torch_dtype_float32()" -> "float32".
std::string CheckedDtype(const std::string& text, size_t begin, size_t end) {
  const std::string marker = "_expected_dtype = aoti_torch_dtype_";
  const size_t at = text.find(marker, begin);
  if (at == std::string::npos || at >= end) return "";
  const size_t stop = text.find('(', at);
  if (stop == std::string::npos || stop >= end) return "";
  std::string dtype = text.substr(at + marker.size(), stop - at - marker.size());
  return InputDtype(dtype) ? dtype : "";
}

// One input's spec from its check function's text in [begin, end); "" if unknown.
std::string InputSpecFrom(const std::string& text, size_t begin, size_t end) {
  const std::string dtype = CheckedDtype(text, begin, end);
  if (dtype.empty()) return "";
  std::map<size_t, DimBounds> dims;
  size_t rank = 0;
  auto seen = [&](size_t i) { rank = std::max(rank, i + 1); };
  ForEachDim(text, "unmatched dim value at ", begin, end, [&](size_t i, size_t at) {
    seen(i);
    dims[i].exact = NumberAfter(text, "expected: ", at, end);
  });
  ForEachDim(text, "dim value is too small at ", begin, end, [&](size_t i, size_t at) {
    seen(i);
    dims[i].min = NumberAfter(text, ">= ", at, end);
  });
  ForEachDim(text, "dim value is too large at ", begin, end, [&](size_t i, size_t at) {
    seen(i);
    dims[i].max = NumberAfter(text, "<= ", at, end);
  });
  ForEachDim(text, "unmatched stride value at ", begin, end, [&](size_t i, size_t) { seen(i); });
  std::string shape;
  for (size_t i = 0; i < rank; ++i) {
    const DimBounds& d = dims[i];
    int64_t size = 2;
    if (d.exact) size = *d.exact;
    else if (d.min) size = std::max<int64_t>(*d.min, 1);
    else if (d.max && *d.max < 2) size = std::max<int64_t>(*d.max, 1);
    if (size < 0) return "";
    shape += (i ? "x" : "") + std::to_string(size);
  }
  return (rank == 0 ? "scalar" : shape) + ":" + dtype;
}

// A size for a symbol of the program's range_constraints: its lower bound
// (at least 1), else 2 within its upper bound.
int64_t SymbolSize(const Pt2Model& m, const std::string& symbol) {
  for (const Pt2Symbol& s : m.symbols) {
    if (s.name != symbol) continue;
    if (s.min) return std::max<int64_t>(*s.min, 1);
    if (s.max && *s.max < 2) return std::max<int64_t>(*s.max, 1);
  }
  return 2;
}

// Names, types and a guess from an exported program's signature.
void FromSignature(const Pt2Model& m, Pt2RunSpec& s) {
  for (const Pt2Value& v : m.inputs) {
    s.input_names.push_back(v.name);
    std::string type = "Any", value;
    if (v.kind == "tensor") {
      type = "Tensor";
      std::string shape;
      for (const std::string& d : v.shape) {
        const bool digits = !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
        shape += (shape.empty() ? "" : "x") + (digits ? d : std::to_string(SymbolSize(m, d)));
      }
      value = (v.shape.empty() ? "scalar" : shape) + ":" + v.dtype;
    } else if (v.kind == "int" || v.kind == "sym_int") {
      type = "int";
      value = v.value.empty() ? "1" : v.value;
    } else if (v.kind == "float" || v.kind == "sym_float") {
      type = "float";
      value = v.value.empty() ? "1.0" : v.value;
    } else if (v.kind == "bool" || v.kind == "sym_bool") {
      type = "bool";
      value = v.value.empty() ? "false" : v.value;
    }
    s.input_types.push_back(type);
    if (value.empty() && s.guess_missing.empty()) s.guess_missing = "input " + v.name + " is a " + v.kind + ", which tsctl does not infer";
    s.guess.push_back({v.name, value});
  }
  if (!s.guess_missing.empty()) s.guess.clear();
  s.guess_note = "from the program's signature (" + m.record + ")";
}

}  // namespace

std::string Pt2RunSpec::Schema() const {
  std::string args;
  for (size_t i = 0; i < input_names.size(); ++i) {
    args += (i ? ", " : "") + (i < input_types.size() ? input_types[i] : std::string("Tensor")) + " " + input_names[i];
  }
  return "forward(" + args + ")";
}

std::vector<std::string> AotiInputSpecs(const std::string& text) {
  const std::string marker = "static void check_input_";
  std::vector<size_t> starts;
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) starts.push_back(at);
  std::vector<std::string> specs;
  for (size_t k = 0; k < starts.size(); ++k) {
    // The k-th function checks input k: "check_input_K(".
    if (NumberAfter(text, marker, starts[k], starts[k] + marker.size() + 1) != static_cast<int64_t>(k)) return {};
    const size_t end = k + 1 < starts.size() ? starts[k + 1] : text.find("__check_inputs_outputs", starts[k]);
    std::string spec = InputSpecFrom(text, starts[k], end == std::string::npos ? text.size() : end);
    if (spec.empty()) return {};
    specs.push_back(spec);
  }
  return specs;
}

Pt2RunSpec Pt2RunSpecOf(const Archive& a, const Pt2Info& info) {
  Pt2RunSpec s;
  if (info.aoti.empty()) {
    if (info.models.empty()) return s;
    s.kind = Pt2RunSpec::Kind::kProgram;
    s.model = info.models.front().name;
    FromSignature(info.models.front(), s);
    return s;
  }
  s.kind = Pt2RunSpec::Kind::kAoti;
  const Pt2AotiModel& m = info.aoti.front();
  s.model = m.name;
  std::string wrapper;
  const std::string suffix = ".wrapper.cpp";
  for (const auto& [name, size] : m.files) {
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) wrapper = name;
  }
  std::vector<std::string> specs;
  if (wrapper.empty()) {
    s.guess_missing = "the package holds no wrapper source (*.wrapper.cpp) to read its inputs from";
  } else {
    try {
      specs = AotiInputSpecs(a.Read(wrapper, uint64_t{64} << 20));
    } catch (const Error& e) {
      s.guess_missing = std::string("cannot read ") + wrapper + ": " + e.what();
    }
    if (specs.empty() && s.guess_missing.empty()) s.guess_missing = wrapper + " holds no input checks this tsctl reads";
  }
  // The program's names where the package carries its program too.
  const Pt2Model* program = nullptr;
  for (const Pt2Model& p : info.models) {
    if (p.name == m.name && p.inputs.size() == specs.size() &&
        std::all_of(p.inputs.begin(), p.inputs.end(), [](const Pt2Value& v) { return v.kind == "tensor"; })) {
      program = &p;
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    s.input_names.push_back(program ? program->inputs[i].name : "input" + std::to_string(i));
    s.input_types.push_back("Tensor");
    s.guess.push_back({s.input_names.back(), specs[i]});
  }
  s.guess_note = "from the input checks in " + wrapper;
  return s;
}

}  // namespace tsctl
