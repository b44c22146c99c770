// validate's ts.mobile check: archives for PyTorch Mobile's lite interpreter
// (bytecode.pkl, what _save_for_lite_interpreter writes), read without
// LibTorch. Whether the lite interpreter loads it is torch.mobile, in the child.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/escape.h"
#include "tsctl/operators.h"
#include "tsctl/pickle.h"
#include "check_context.h"
#include "validate_internal.h"

namespace tsctl {

bool LooksMobile(const Archive& archive, const std::string& path) {
  return archive.Has("bytecode.pkl") || (path.size() > 4 && path.compare(path.size() - 4, 4, ".ptl") == 0);
}

void CheckTsMobile(CheckContext& c) {
  const Archive& archive = *c.archive;
  if (!LooksMobile(archive, c.path)) return;
  std::vector<CheckResult>& out = c.report.checks;
  if (!archive.Has("bytecode.pkl")) {
    out.push_back(
        {check::kTsMobile, CheckStatus::kFail,
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
      out.push_back({check::kTsMobile, CheckStatus::kFail, "bytecode.pkl holds no bytecode version"});
      return;
    }
    out.push_back(
        {check::kTsMobile, CheckStatus::kPass,
         "mobile bytecode version " + std::to_string(version) + (methods.empty() ? "" : "; methods: " + methods)});
  } catch (const Error& e) {
    out.push_back({check::kTsMobile, CheckStatus::kFail, std::string("bytecode.pkl is unreadable: ") + e.what()});
  }
}

void CheckBytecode(const Archive& archive, const std::vector<std::string>& graph_ops, std::vector<std::string>& ops,
                   std::vector<CheckResult>& out) {
  std::set<std::string> bytecode;
  try {
    for (const MethodOperators& m : OperatorsInBytecode(archive.Read("bytecode.pkl"))) {
      for (const OperatorUse& use : m.operators) bytecode.insert(use.name);
    }
  } catch (const Error& e) {
    out.push_back({check::kTsBytecode, CheckStatus::kFail, std::string("bytecode.pkl is unreadable: ") + e.what()});
    return;
  }
  const std::set<std::string> code(graph_ops.begin(), graph_ops.end());
  std::vector<std::string> unsafe, extra;
  for (const std::string& op : bytecode) {
    // Its arguments are registers here, not constants: a flagged operator
    // is refused whatever its flag.
    const std::string base = OperatorBaseName(op);
    const UnsafeOperator* u = FindUnsafeOperator(base);
    if (u && u->Flags(op.size() > base.size() ? op.substr(base.size() + 1) : "", {})) {
      unsafe.push_back(EscapeText(op) + ", which " + u->why);
    }
    if (!code.count(op)) extra.push_back(EscapeText(op));
  }
  ops.insert(ops.end(), bytecode.begin(), bytecode.end());
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  constexpr size_t kNamed = 8;
  auto named = [&](const std::vector<std::string>& v, const char* sep) { return JoinSome(v, kNamed, sep); };
  if (!unsafe.empty()) {
    out.push_back({check::kTsBytecode, CheckStatus::kFail, "bytecode.pkl calls " + named(unsafe, "; ") + " (not run)"});
  } else if (!extra.empty()) {
    out.push_back({check::kTsBytecode, CheckStatus::kFail,
                   "bytecode.pkl calls " + std::to_string(extra.size()) + " operator" + (extra.size() == 1 ? "" : "s") +
                       " that the code does not (" + named(extra, ", ") +
                       "): the lite interpreter would run other code than the archive shows (not run)"});
  } else {
    out.push_back(
        {check::kTsBytecode, CheckStatus::kPass,
         "bytecode.pkl calls " + std::to_string(bytecode.size()) + " operators, each one the code calls too"});
  }
}

}  // namespace tsctl
