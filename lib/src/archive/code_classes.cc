// Reads class declarations out of TorchScript code records. The serializer
// writes them in a fixed shape (python_print.cpp), e.g.:
//   class Linear(Module):
//     __parameters__ = ["weight", "bias", ]
//     __buffers__ = []
//     weight : Tensor
//     in_features : Final[int] = 3
//     def forward(self: __torch__...Linear,
#include "tsctl/code_classes.h"

#include <algorithm>
#include <string>
#include <vector>

#include "code_records.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

std::vector<std::string> QuotedList(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = text.find('"', pos)) != std::string::npos) {
    size_t end = text.find('"', pos + 1);
    if (end == std::string::npos) break;
    out.push_back(text.substr(pos + 1, end - pos - 1));
    pos = end + 1;
  }
  return out;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The signature of the def at `at` ("def " starts there): its name,
// parameters and return annotation up to the colon that ends it, over as many
// lines as it spans, with runs of white space made one space
// ("forward(self, x: Tensor) -> Tensor"). Empty if it does not end.
std::string DefSignature(const std::string& source, size_t at) {
  std::string out;
  int depth = 0;
  bool space = false;
  for (size_t i = at + 4; i < source.size() && out.size() < 4096; ++i) {
    const char c = source[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ':' && depth == 0) {
      // "forward(self: __torch__.Net, x: Tensor)": the class of self is the
      // class being listed; show "forward(self, x: Tensor)".
      const size_t self = out.find("(self: ");
      if (self != std::string::npos) {
        const size_t end = out.find_first_of(",)", self);
        if (end != std::string::npos) out.erase(self + 5, end - (self + 5));
      }
      return out;
    }
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != '(' && out.back() != '[' && c != ')' && c != ']' && c != ',') out += ' ';
    space = false;
    out += c;
  }
  return {};
}

}  // namespace

std::vector<std::string> TopLevelSignatures(const std::string& source) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < source.size();) {
    size_t nl = source.find('\n', pos);
    if (nl == std::string::npos) nl = source.size();
    if (source.compare(pos, 4, "def ") == 0) {
      const std::string line = source.substr(pos, nl - pos);
      const size_t paren = line.find('(');
      if (paren != std::string::npos) {
        const std::string signature = DefSignature(source, pos);
        out.push_back(signature.empty() ? Trim(line.substr(4, paren - 4)) + "(...)" : signature);
      }
    }
    pos = nl + 1;
  }
  return out;
}

std::vector<ClassInfo> ParseCodeClasses(const std::string& record, const std::string& source) {
  std::vector<ClassInfo> classes;
  const std::string module = ModuleOfRecord(record);
  ClassInfo* current = nullptr;
  size_t pos = 0;
  while (pos < source.size()) {
    size_t nl = source.find('\n', pos);
    if (nl == std::string::npos) nl = source.size();
    const size_t line_start = pos;
    std::string line = source.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("class ", 0) == 0) {
      size_t paren = line.find('(');
      size_t colon = line.find(':');
      size_t name_end = std::min(paren, colon);
      if (name_end == std::string::npos) continue;
      ClassInfo c;
      c.qualified_name = module + "." + Trim(line.substr(6, name_end - 6));
      c.record = record;
      if (paren != std::string::npos) {
        size_t close = line.find(')', paren);
        if (close != std::string::npos) c.base = line.substr(paren + 1, close - paren - 1);
      }
      classes.push_back(std::move(c));
      current = &classes.back();
      continue;
    }
    if (line.empty() || line[0] != ' ') {
      if (!line.empty() && line[0] != '#') current = nullptr;
      continue;
    }
    if (!current || line.size() < 3 || line[0] != ' ' || line[1] != ' ' || line[2] == ' ') continue;
    std::string body = line.substr(2);
    if (body.rfind("def ", 0) == 0) {
      size_t paren = body.find('(');
      if (paren != std::string::npos) {
        current->methods.push_back(Trim(body.substr(4, paren - 4)));
        std::string signature = DefSignature(source, line_start + 2);
        current->signatures.push_back(signature.empty() ? current->methods.back() + "(...)" : signature);
      }
    } else if (body.rfind("__parameters__", 0) == 0) {
      current->parameters = QuotedList(body);
    } else if (body.rfind("__buffers__", 0) == 0) {
      current->buffers = QuotedList(body);
    } else {
      size_t colon = body.find(" : ");
      if (colon == std::string::npos) continue;
      std::string name = Trim(body.substr(0, colon));
      if (!IsIdentifier(name)) continue;
      std::string rest = body.substr(colon + 3);
      AttributeInfo a;
      a.name = name;
      size_t eq = rest.find(" = ");
      if (eq != std::string::npos) {
        a.type = Trim(rest.substr(0, eq));
        a.value = Trim(rest.substr(eq + 3));
      } else {
        a.type = Trim(rest);
      }
      current->attributes.push_back(std::move(a));
    }
  }
  return classes;
}

}  // namespace tsctl
