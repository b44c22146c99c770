// ts.hooks: code that acts while LibTorch loads an archive, or that reaches
// outside the model, found before anything is loaded (no LibTorch). The rules
// are Elastic ml-cpp's for untrusted TorchScript (CModelGraphValidator):
// torch::jit::load runs a class's __setstate__ while it unpickles data.pkl,
// before any check after loading can run, and a few operators read or write
// files or reinterpret memory without a bounds check.
#include <string>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/operators.h"
#include "tsctl/text_util.h"
#include "check_context.h"
#include "validate_internal.h"

namespace tsctl {

StaticOperators::StaticOperators(CheckContext& c) : list(ListOperators(*c.archive)) {}

void CheckTsHooks(CheckContext& c) {
  const ValidateOptions& options = c.options;
  std::vector<CheckResult>& out = c.report.checks;
  const OperatorList& ops = c.Facts<StaticOperators>().list;
  std::vector<std::string> found;
  size_t torch_hooks = 0;
  for (const MethodOperators& m : ops.methods) {
    if (EndsWith(m.method, ".__setstate__")) {
      // torch's own classes (packed quantized parameters) restore their
      // state this way; their operators are still checked below. Any other
      // class's hook is code the archive runs at load time.
      if (m.method.rfind("__torch__.torch.", 0) == 0) {
        ++torch_hooks;
      } else {
        found.push_back(m.method + " (" + m.source + "): a state hook LibTorch runs while it loads the archive");
      }
    }
    for (const OperatorUse& use : m.operators) {
      // The text shows no constants: an operator that is safe with a
      // constant argument is left to torch.unsafe, which sees the graph.
      const UnsafeOperator* u = FindUnsafeOperator(OperatorBaseName(use.name));
      if (u && !u->GraphOnly()) found.push_back(m.method + " calls " + u->op + ", which " + u->why);
    }
  }
  if (ops.unscanned > 0) {
    // A verdict never rests on a scan that was cut short.
    found.push_back(std::to_string(ops.unscanned) + " code record" + (ops.unscanned == 1 ? " was" : "s were") +
                    " not scanned: the code holds more than " + std::to_string(kMaxCodeBytes >> 20) + " MiB of text");
  }
  if (found.empty()) {
    out.push_back({check::kTsHooks, CheckStatus::kPass,
                   torch_hooks == 0 ? "no state hooks run at load, no operator reads files or unchecked memory"
                                    : "no state hooks but torch's own (" + std::to_string(torch_hooks) +
                                          "), no operator reads files or unchecked memory"});
    return;
  }
  const std::string msg = JoinSome(found, 5, "; ");
  if (options.allow_load_hooks) {
    out.push_back({check::kTsHooks, CheckStatus::kWarn, msg + " (loaded anyway: --allow-load-hooks)"});
    return;
  }
  out.push_back({check::kTsHooks, CheckStatus::kFail, msg + " (not loaded; --allow-load-hooks loads it anyway)"});
}

}  // namespace tsctl
