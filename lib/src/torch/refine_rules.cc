// What the refinement rules share (refine_rules.h): shapes as vectors,
// a candidate's tensor arguments parsed (lists of one spec included),
// LibTorch's message matched.
#include "refine_rules.h"

#include <nlohmann/json.hpp>

namespace tsctl::refine {

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

// `args` with argument i's value replaced, the note saying which (the
// source and why are added by RefineFromError).
Refinement Replaced(const std::vector<ArgSpec>& args, size_t i, const std::string& value, const std::string& why) {
  Refinement r{args, "", why};
  r.args[i].value = value;
  r.note = ArgName(args, i) + " " + value;
  return r;
}

std::smatch Match(const std::string& error, const char* pattern) {
  std::smatch m;
  std::regex_search(error, m, std::regex(pattern));
  return m;
}

Tensors::Tensors(const std::vector<ArgSpec>& a) : args(a), list(a.size(), 0) {
  for (size_t i = 0; i < args.size(); ++i) {
    try {
      specs.push_back(ParseInputSpec(args[i].value));
      continue;
    } catch (const Error&) {
    }
    specs.push_back(std::nullopt);
    nlohmann::json j = nlohmann::json::parse(args[i].value, nullptr, false);
    if (!j.is_array() || j.empty() || j.size() > 16 || !j[0].is_string()) continue;
    const std::string first = j[0].get<std::string>();
    if (!std::all_of(j.begin(), j.end(), [&](const nlohmann::json& x) { return x.is_string() && x.get<std::string>() == first; })) continue;
    try {
      specs.back() = ParseInputSpec(first);
      list[i] = j.size();
    } catch (const Error&) {
    }
  }
}

std::string Tensors::Value(size_t i, const InputSpec& spec) const {
  if (list[i] == 0) return spec.ToString();
  return nlohmann::json(std::vector<std::string>(list[i], spec.ToString())).dump();
}

std::optional<Refinement> Tensors::LastSize(int64_t got, int64_t want, const std::string& why) const {
  auto i = Find([&](const InputSpec& s) { return !s.shape.empty() && s.shape.back() == got; });
  if (!i) return std::nullopt;
  InputSpec s = *specs[*i];
  s.shape.back() = want;
  return With(*i, s, why);
}

std::optional<std::pair<int64_t, int64_t>> CountMismatch(const std::string& e) {
  std::smatch m = Match(e, R"(The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton dimension)");
  if (!m.empty()) return std::pair{std::stoll(m[1]), std::stoll(m[2])};
  m = Match(e, R"(expected input\[[0-9, ]+\] to have (\d+) channels, but got (\d+) channels)");
  if (!m.empty()) return std::pair{std::stoll(m[2]), std::stoll(m[1])};
  m = Match(e, R"(mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\))");
  if (!m.empty()) return std::pair{std::stoll(m[2]), std::stoll(m[3])};
  return std::nullopt;
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

}  // namespace tsctl::refine
