#include "tsctl/code.h"

#include <set>
#include <vector>

#include "tsctl/code_classes.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"

namespace tsctl {
namespace {

bool IsCodeRecord(const std::string& name) {
  return (RecordNameStartsWith(name, "code/") || RecordNameStartsWith(name, "libs/")) && name.size() > 3 &&
         RecordNameEndsWith(name, ".py");
}

std::string ModuleName(const std::string& record) {
  std::string m = record.substr(record.find('/') + 1);
  m.resize(m.size() - 3);
  for (char& c : m) {
    if (c == '/') c = '.';
  }
  return m;
}

// The lines of `source` from "class <name>(" up to the next top-level line.
std::string ClassBlock(const std::string& source, const std::string& name) {
  std::string out;
  bool inside = false;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t nl = source.find('\n', pos);
    size_t end = nl == std::string::npos ? source.size() : nl + 1;
    std::string line = source.substr(pos, end - pos);
    pos = end;
    bool top = !line.empty() && line[0] != ' ' && line[0] != '\n';
    if (top) inside = line.rfind("class " + name + "(", 0) == 0 || line.rfind("class " + name + ":", 0) == 0;
    if (inside) out += line;
  }
  return out;
}

// Code records together may hold at most kMaxCodeBytes of text (archive.h):
// a small archive of many records that share one deflate bomb would
// otherwise build gigabytes.
// Reads a code record within what is left of the budget.
std::string ReadCode(const Archive& archive, const std::string& record, uint64_t& budget) {
  const ZipEntry* e = archive.Find(record);
  if (e && e->uncompressed_size > budget) {
    throw Error(ErrorKind::kFormat, "code records hold more than " + std::to_string(kMaxCodeBytes >> 20) +
                                        " MiB of text (at " + record + ")");
  }
  std::string source = archive.Read(record, budget);
  budget -= source.size();
  return source;
}

// Code as text for a terminal: control bytes and invalid UTF-8 escaped,
// line breaks, tabs and backslashes kept.
std::string Shown(const std::string& source) {
  return EscapeText(source, {.keep_newlines = true, .escape_backslash = false});
}

}  // namespace

std::string StoredCode(const Archive& archive, const CodeQuery& query) {
  uint64_t budget = kMaxCodeBytes;
  std::vector<std::string> records;
  std::set<std::string> seen;  // a duplicated name reads as its last copy, once
  for (const std::string& name : archive.AllRecords()) {
    if (IsCodeRecord(name) && seen.insert(name).second) records.push_back(name);
  }
  if (records.empty()) throw Error(ErrorKind::kFormat, "the archive has no code records");
  if (!query.module.empty()) {
    std::string have;
    for (const std::string& r : records) {
      if (ModuleName(r) == query.module) return Shown(ReadCode(archive, r, budget));
      have += (have.empty() ? "" : ", ") + ModuleName(r);
    }
    throw Error(ErrorKind::kUsage, "no module '" + query.module + "' (modules: " + have + ")");
  }
  if (!query.class_name.empty()) {
    // The qualified name wins; a plain name must name one class only (three
    // classes called Linear in different modules are not the same class).
    std::string have;
    std::vector<std::pair<std::string, std::string>> plain_matches;  // (qualified name, its block)
    for (const std::string& r : records) {
      std::string source = ReadCode(archive, r, budget);
      for (const ClassInfo& c : ParseCodeClasses(r, source)) {
        std::string plain = c.qualified_name.substr(c.qualified_name.rfind('.') + 1);
        if (c.qualified_name == query.class_name) return Shown(ClassBlock(source, plain));
        if (plain == query.class_name) plain_matches.emplace_back(c.qualified_name, ClassBlock(source, plain));
        have += (have.empty() ? "" : ", ") + c.qualified_name;
      }
    }
    if (plain_matches.size() == 1) return Shown(plain_matches.front().second);
    if (plain_matches.size() > 1) {
      std::string names;
      for (const auto& [qualified, block] : plain_matches) names += (names.empty() ? "" : ", ") + qualified;
      throw Error(ErrorKind::kUsage, std::to_string(plain_matches.size()) + " classes are named '" + query.class_name +
                                         "'; give the qualified name: " + names);
    }
    throw Error(ErrorKind::kUsage, "no class '" + query.class_name + "' (classes: " + have + ")");
  }
  std::string out;
  for (const std::string& r : records) {
    std::string source = ReadCode(archive, r, budget);
    out += "# " + EscapeText(r) + "\n" + Shown(source);
    if (!source.empty() && source.back() != '\n') out += '\n';
  }
  return out;
}

}  // namespace tsctl
