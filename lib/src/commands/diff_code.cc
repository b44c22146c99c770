// The code section: stored TorchScript source split into classes and
// methods (the serializer's fixed layout, python_print.cpp), each pair
// compared with a unified diff. Classes are matched by qualified name, then
// modulo ___torch_mangle_N (name_mangler.cpp numbers a class again whenever
// a process compiles another one of the same name), so a model saved again
// by another process or PyTorch lists only real differences.
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "../archive/code_records.h"
#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/text_diff.h"

namespace tsctl::diff_internal {
namespace {

constexpr const char* kDeclarations = "(declarations)";
constexpr uint64_t kMaxDiffCodeBytes = uint64_t{256} << 20;  // per archive

struct Unit {
  std::string class_name;  // qualified class, or the module for functions
  std::string method;      // a method or function name, or kDeclarations
  std::string text;
  bool in_class = false;   // class_name is a class, not a module
};

using Units = std::map<std::string, Unit>;  // by class "::" method

std::string Ident(const std::string& s, size_t from) {
  size_t end = from;
  while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) ++end;
  return s.substr(from, end - from);
}

// Splits one record into units; `seen_classes` disambiguates class names
// that collide (after mangle normalization) with a "#2", "#3" suffix.
void Split(const std::string& record, const std::string& source, std::map<std::string, int>& seen_classes,
           Units& units, std::vector<std::string>& order) {
  const std::string module = ModuleOfRecord(record);
  std::string cls;  // current class key, "" at module level
  Unit* current = nullptr;
  auto open = [&](const std::string& class_name, const std::string& method) {
    std::string key = class_name + "::" + method;
    auto [it, inserted] = units.emplace(key, Unit{class_name, method, {}, class_name != module});
    if (inserted) order.push_back(key);
    current = &it->second;
  };
  for (std::string_view line : SplitLines(source)) {
    std::string l(line);
    bool top = !l.empty() && l[0] != ' ';
    // Formats 1 and 2 open each record with the operator version, which
    // the format section reports: not code.
    if (top && l.rfind("op_version_set = ", 0) == 0) continue;
    if (top && l.rfind("class ", 0) == 0) {
      std::string name = module + "." + Ident(l, 6);
      int n = ++seen_classes[name];
      cls = n == 1 ? name : name + "#" + std::to_string(n);
      open(cls, kDeclarations);
    } else if (top && l.rfind("def ", 0) == 0) {
      cls.clear();
      open(module, Ident(l, 4));
    } else if (top) {
      cls.clear();
      open(module, kDeclarations);
    } else if (!cls.empty() && l.rfind("  def ", 0) == 0) {
      open(cls, Ident(l, 6));
    } else if (!cls.empty() && l.size() > 2 && l[2] != ' ' && current && current->method != kDeclarations) {
      open(cls, kDeclarations);  // a class-level line after a method
    }
    if (!current) open(module, kDeclarations);
    current->text.append(l).append("\n");
  }
}

Units Read(const Side& side, const ArchiveInfo& info, const DiffOptions& options, std::vector<std::string>& order,
           DiffResult& result, const char* label) {
  Units units;
  std::map<std::string, int> seen;
  std::set<std::string> done;  // a duplicated record name is read once
  uint64_t budget = kMaxDiffCodeBytes;
  for (const CodeRecordInfo& c : info.code) {
    if (!done.insert(c.name).second) continue;
    const ZipEntry* e = side.Find(c.name);
    if (!e || e->uncompressed_size > budget) {
      result.warnings.push_back(std::string(label) + ": code record " + c.name +
                                (e ? ": over the 256 MiB of code compared per archive, left out" : ": missing"));
      continue;
    }
    budget -= e->uncompressed_size;
    std::string source;
    try {
      source = ReadEntry(side.archive.source(), *e, kMaxDiffCodeBytes);
    } catch (const Error& e) {
      result.warnings.push_back(std::string(label) + ": code record " + c.name + ": " + e.what());
      continue;
    }
    std::string record = c.name;
    if (options.ignore_mangle) {
      source = NormalizeMangle(source);
      // "code/.../linear/___torch_mangle_0.py" holds classes of module "...linear".
      static const std::regex kRecord("/___torch_mangle_[0-9]+\\.py$");
      record = std::regex_replace(record, kRecord, ".py");
    }
    Split(record, source, seen, units, order);
  }
  return units;
}

// Classes of A and B matched within each group of names equal modulo
// ___torch_mangle_N: first those with the same code modulo numbering (the
// same name preferred), then the same name, then in record order. Modules
// (module-level code) match by equal name.
struct Pairing {
  std::map<std::string, std::string> a_to_b, b_to_a;
  std::map<std::string, std::string> renamed;  // the pairs of a_to_b whose names differ
};

struct ClassList {
  std::vector<std::string> names;           // classes in record order
  std::map<std::string, std::string> code;  // all of a class's units
};

ClassList Classes(const Units& units, const std::vector<std::string>& order) {
  ClassList out;
  for (const std::string& key : order) {
    const Unit& u = units.at(key);
    if (!u.in_class) continue;
    auto [it, inserted] = out.code.emplace(u.class_name, "");
    if (inserted) out.names.push_back(u.class_name);
    it->second += u.text;
  }
  return out;
}

void PairGroup(const std::vector<std::string>& ga, const std::vector<std::string>& gb, const ClassList& ca,
               const ClassList& cb, Pairing& p) {
  std::vector<bool> taken(gb.size(), false);
  std::vector<std::string> code_b;
  for (const std::string& y : gb) code_b.push_back(NormalizeMangle(cb.code.at(y)));
  auto pass = [&](auto&& fits) {
    for (const std::string& x : ga) {
      if (p.a_to_b.count(x)) continue;
      for (size_t j = 0; j < gb.size(); ++j) {
        if (taken[j] || !fits(x, j)) continue;
        taken[j] = true;
        p.a_to_b[x] = gb[j];
        p.b_to_a[gb[j]] = x;
        if (x != gb[j]) p.renamed[x] = gb[j];
        break;
      }
    }
  };
  std::map<std::string, std::string> code_a;
  for (const std::string& x : ga) code_a[x] = NormalizeMangle(ca.code.at(x));
  pass([&](const std::string& x, size_t j) { return x == gb[j] && code_a[x] == code_b[j]; });
  pass([&](const std::string& x, size_t j) { return code_a[x] == code_b[j]; });
  pass([&](const std::string& x, size_t j) { return x == gb[j]; });
  pass([&](const std::string&, size_t) { return true; });
}

Pairing PairClasses(const Units& ua, const std::vector<std::string>& order_a, const Units& ub,
                    const std::vector<std::string>& order_b) {
  const ClassList ca = Classes(ua, order_a), cb = Classes(ub, order_b);
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> groups;
  for (const std::string& x : ca.names) groups[NormalizeMangle(x)].first.push_back(x);
  for (const std::string& y : cb.names) groups[NormalizeMangle(y)].second.push_back(y);
  Pairing p;
  for (const auto& [name, g] : groups) {
    if (g.first.size() == 1 && g.second.size() == 1 && g.first[0] == g.second[0]) {
      p.a_to_b[g.first[0]] = p.b_to_a[g.first[0]] = g.first[0];  // the usual case, without reading the code
    } else if (!g.first.empty() && !g.second.empty()) {
      PairGroup(g.first, g.second, ca, cb, p);
    }
  }
  return p;
}

// `text` with every class name that `names` maps to another replaced by it
// (whole dotted names: "a.___torch_mangle_1.M" is not a part of "a.___torch_mangle_12.M").
std::string Rename(const std::string& text, const std::map<std::string, std::string>& names) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (!ident(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && ident(text[end])) ++end;
    std::string token = text.substr(i, end - i);
    for (size_t cut = token.size(); cut != std::string::npos && cut > 0; cut = token.rfind('.', cut - 1)) {
      auto it = names.find(token.substr(0, cut));
      if (it == names.end()) continue;
      token = it->second + token.substr(cut);
      break;
    }
    out += token;
    i = end;
  }
  return out;
}

}  // namespace

std::string NormalizeMangle(const std::string& s) {
  // "a.___torch_mangle_3.Linear" -> "a.Linear"; any other use keeps the atom without its number.
  static const std::regex kAtom("___torch_mangle_[0-9]+\\.");
  static const std::regex kRest("___torch_mangle_[0-9]+");
  if (s.find("___torch_mangle_") == std::string::npos) return s;
  return std::regex_replace(std::regex_replace(s, kAtom, ""), kRest, "___torch_mangle_N");
}

void DiffCode(const Side& a, const ArchiveInfo& ia, const Side& b, const ArchiveInfo& ib, const DiffOptions& options,
              DiffResult& result) {
  std::vector<std::string> order_a, order_b;
  Units ua = Read(a, ia, options, order_a, result, "A");
  Units ub = Read(b, ib, options, order_b, result, "B");
  const Pairing pairs = PairClasses(ua, order_a, ub, order_b);
  std::set<std::string> reported;  // whole classes added or removed
  for (const std::string& key : order_a) {
    const Unit& x = ua.at(key);
    auto pair = pairs.a_to_b.find(x.class_name);
    if (pair == pairs.a_to_b.end() && x.in_class) {
      if (reported.insert(x.class_name).second) result.code.push_back({x.class_name, "", ChangeKind::kRemoved, "", ""});
      continue;
    }
    const std::string& class_b = pair == pairs.a_to_b.end() ? x.class_name : pair->second;
    auto it = ub.find(class_b + "::" + x.method);
    if (it == ub.end()) {
      result.code.push_back({x.class_name, x.method, ChangeKind::kRemoved, "", ""});
      continue;
    }
    if (x.text == it->second.text) continue;
    if (!pairs.renamed.empty() && Rename(x.text, pairs.renamed) == it->second.text) continue;
    CodeChange c{x.class_name, x.method, ChangeKind::kChanged, UnifiedDiff(x.text, it->second.text, options.context_lines), ""};
    if (class_b != x.class_name) c.class_b = class_b;
    result.code.push_back(std::move(c));
  }
  for (const std::string& key : order_b) {
    const Unit& y = ub.at(key);
    auto pair = pairs.b_to_a.find(y.class_name);
    if (pair == pairs.b_to_a.end() && y.in_class) {
      if (reported.insert(y.class_name).second) result.code.push_back({y.class_name, "", ChangeKind::kAdded, "", ""});
      continue;
    }
    const std::string& class_a = pair == pairs.b_to_a.end() ? y.class_name : pair->second;
    if (ua.count(class_a + "::" + y.method)) continue;
    CodeChange c{class_a, y.method, ChangeKind::kAdded, "", ""};
    if (class_a != y.class_name) c.class_b = y.class_name;
    result.code.push_back(std::move(c));
  }
}

}  // namespace tsctl::diff_internal
