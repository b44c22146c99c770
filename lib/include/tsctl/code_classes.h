// The classes a TorchScript code record (code/**.py) declares, read from the
// text the serializer writes, without LibTorch.
#pragma once

#include <string>
#include <vector>

namespace tsctl {

struct AttributeInfo {
  std::string name;
  std::string type;   // declared TorchScript type when the code says, else the pickled kind
  std::string value;  // short Python-like rendering
};

struct ClassInfo {
  std::string qualified_name;
  std::string record;  // code record that defines it
  std::string base;    // e.g. "Module"
  std::vector<std::string> methods;
  std::vector<std::string> signatures;  // per method: "forward(self, x: Tensor) -> Tensor"
  std::vector<std::string> parameters;
  std::vector<std::string> buffers;
  std::vector<AttributeInfo> attributes;  // declared attributes and Final constants
};

// Parses the classes defined by one code record (a TorchScript .py file).
std::vector<ClassInfo> ParseCodeClasses(const std::string& record, const std::string& source);

// The signatures of the top-level defs of a code record ("forward(self, x:
// Tensor) -> Tensor"): a legacy (model.json) module's methods.
std::vector<std::string> TopLevelSignatures(const std::string& source);

}  // namespace tsctl
