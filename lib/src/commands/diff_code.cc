// The code section: stored TorchScript source split into classes and
// methods (the serializer's fixed layout, python_print.cpp), each pair
// compared with a unified diff.
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/text_diff.h"

namespace tsctl::diff_internal {
namespace {

constexpr const char* kDeclarations = "(declarations)";
constexpr uint64_t kMaxDiffCodeBytes = uint64_t{256} << 20;  // per archive

std::string ModuleOfRecord(const std::string& record) {
  std::string m = record;
  for (const char* prefix : {"code/", "libs/"}) {
    if (m.rfind(prefix, 0) == 0) m = m.substr(5);
  }
  if (m.size() > 3 && m.compare(m.size() - 3, 3, ".py") == 0) m.resize(m.size() - 3);
  for (char& c : m) {
    if (c == '/') c = '.';
  }
  return m;
}

struct Unit {
  std::string class_name;  // qualified class, or the module for functions
  std::string method;      // a method or function name, or kDeclarations
  std::string text;
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
    auto [it, inserted] = units.emplace(key, Unit{class_name, method, {}});
    if (inserted) order.push_back(key);
    current = &it->second;
  };
  for (std::string_view line : SplitLines(source)) {
    std::string l(line);
    bool top = !l.empty() && l[0] != ' ';
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
  std::set<std::string> classes_a, classes_b;
  for (const auto& [k, u] : ua) classes_a.insert(u.class_name);
  for (const auto& [k, u] : ub) classes_b.insert(u.class_name);
  std::set<std::string> reported;  // whole classes added or removed
  for (const std::string& key : order_a) {
    const Unit& x = ua.at(key);
    auto it = ub.find(key);
    if (it == ub.end()) {
      if (!classes_b.count(x.class_name)) {
        if (reported.insert(x.class_name).second) result.code.push_back({x.class_name, "", ChangeKind::kRemoved, ""});
      } else {
        result.code.push_back({x.class_name, x.method, ChangeKind::kRemoved, ""});
      }
      continue;
    }
    std::string d = UnifiedDiff(x.text, it->second.text, options.context_lines);
    if (!d.empty()) result.code.push_back({x.class_name, x.method, ChangeKind::kChanged, d});
  }
  for (const std::string& key : order_b) {
    const Unit& y = ub.at(key);
    if (ua.count(key)) continue;
    if (!classes_a.count(y.class_name)) {
      if (reported.insert(y.class_name).second) result.code.push_back({y.class_name, "", ChangeKind::kAdded, ""});
    } else {
      result.code.push_back({y.class_name, y.method, ChangeKind::kAdded, ""});
    }
  }
}

}  // namespace tsctl::diff_internal
