// The TorchScript source stored in an archive's code records.
#pragma once

#include <string>

#include "tsctl/archive.h"

namespace tsctl {

struct CodeQuery {
  std::string module;      // "__torch__.torch.nn.modules.linear": that record only
  std::string class_name;  // qualified ("__torch__.Net") or plain ("Net")
};

// With an empty query: every code record, each after a "# <record>" header
// line. Throws tsctl::Error (kUsage) if the module or class is not in the
// archive, naming the ones that are.
std::string StoredCode(const Archive& archive, const CodeQuery& query);

}  // namespace tsctl
