// Private to archive/: what a TorchScript code record's path says.
#pragma once

#include <algorithm>
#include <string>

namespace tsctl {

// The Python module a code record (code/ or libs/) defines:
// "code/__torch__/torch/nn/modules/linear.py" -> "__torch__.torch.nn.modules.linear".
inline std::string ModuleOfRecord(const std::string& record) {
  std::string m = record;
  if (m.rfind("code/", 0) == 0 || m.rfind("libs/", 0) == 0) m = m.substr(5);
  if (m.size() > 3 && m.compare(m.size() - 3, 3, ".py") == 0) m.resize(m.size() - 3);
  std::replace(m.begin(), m.end(), '/', '.');
  return m;
}

}  // namespace tsctl
