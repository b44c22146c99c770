// validate's ts.mobile check: archives for PyTorch Mobile's lite interpreter
// (bytecode.pkl, what _save_for_lite_interpreter writes), read without
// LibTorch. Whether the lite interpreter loads it is torch.mobile, in the child.
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/pickle.h"
#include "validate_internal.h"

namespace tsctl {

bool LooksMobile(const Archive& archive, const std::string& path) {
  return archive.Has("bytecode.pkl") || (path.size() > 4 && path.compare(path.size() - 4, 4, ".ptl") == 0);
}

void CheckMobile(const Archive& archive, const std::string& path, std::vector<CheckResult>& out) {
  (void)path;
  if (!archive.Has("bytecode.pkl")) {
    out.push_back({"ts.mobile", CheckStatus::kWarn,
                   "named .ptl but has no bytecode.pkl: a full-JIT archive that the lite interpreter (LiteModuleLoader, "
                   "_load_for_mobile) cannot load; save it with _save_for_lite_interpreter"});
    return;
  }
  try {
    PyRef bc = ParsePickle(archive.Read("bytecode.pkl"));
    int64_t version = -1;
    std::string methods;
    if (bc->kind == PyKind::kTuple) {
      for (const PyRef& item : bc->items) {
        if (item->kind == PyKind::kInt && version < 0) version = item->integer;
        if (item->kind == PyKind::kTuple && !item->items.empty() && item->items[0]->kind == PyKind::kString) {
          methods += (methods.empty() ? "" : ", ") + EscapeText(item->items[0]->str);
        }
      }
    }
    if (version < 0) {
      out.push_back({"ts.mobile", CheckStatus::kFail, "bytecode.pkl holds no bytecode version"});
      return;
    }
    out.push_back({"ts.mobile", CheckStatus::kPass,
                   "mobile bytecode version " + std::to_string(version) + (methods.empty() ? "" : "; methods: " + methods)});
  } catch (const Error& e) {
    out.push_back({"ts.mobile", CheckStatus::kFail, std::string("bytecode.pkl is unreadable: ") + e.what()});
  }
}

}  // namespace tsctl
