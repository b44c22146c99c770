#include "tsctl/code.h"

#include <vector>

#include "tsctl/error.h"
#include "tsctl/inspect.h"

namespace tsctl {
namespace {

bool IsCodeRecord(const std::string& name) {
  return (name.rfind("code/", 0) == 0 || name.rfind("libs/", 0) == 0) && name.size() > 3 &&
         name.compare(name.size() - 3, 3, ".py") == 0;
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

}  // namespace

std::string StoredCode(const Archive& archive, const CodeQuery& query) {
  std::vector<std::string> records;
  for (const ZipEntry& e : archive.layout().entries) {
    std::string name = archive.RecordName(e);
    if (IsCodeRecord(name)) records.push_back(name);
  }
  if (records.empty()) throw Error(ErrorKind::kFormat, "the archive has no code records");
  if (!query.module.empty()) {
    std::string have;
    for (const std::string& r : records) {
      if (ModuleName(r) == query.module) return archive.Read(r);
      have += (have.empty() ? "" : ", ") + ModuleName(r);
    }
    throw Error(ErrorKind::kUsage, "no module '" + query.module + "' (modules: " + have + ")");
  }
  if (!query.class_name.empty()) {
    std::string have;
    for (const std::string& r : records) {
      std::string source = archive.Read(r);
      for (const ClassInfo& c : ParseCodeClasses(r, source)) {
        std::string plain = c.qualified_name.substr(c.qualified_name.rfind('.') + 1);
        if (c.qualified_name == query.class_name || plain == query.class_name) return ClassBlock(source, plain);
        have += (have.empty() ? "" : ", ") + c.qualified_name;
      }
    }
    throw Error(ErrorKind::kUsage, "no class '" + query.class_name + "' (classes: " + have + ")");
  }
  std::string out;
  for (const std::string& r : records) {
    std::string source = archive.Read(r);
    out += "# " + r + "\n" + source;
    if (!source.empty() && source.back() != '\n') out += '\n';
  }
  return out;
}

}  // namespace tsctl
