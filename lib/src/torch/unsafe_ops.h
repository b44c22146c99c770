// Operators that read or write outside the tensors a model was given, found
// in the graphs LibTorch resolved (every function of the loaded module's
// compilation unit: every method of every submodule and every function they
// call), not in the code's text: a spelling the text scan does not know
// (`torch.autograd.save`, `torch.save (x, p)`, a callee passed to fork) still
// resolves to the same operator here. Private to the LibTorch plugin.
#pragma once

#include <torch/script.h>

#include <string>
#include <vector>

namespace tsctl {

// One line per call, "forward calls aten::save, which writes a file";
// empty when there is none.
std::vector<std::string> UnsafeCalls(const torch::jit::Module& module);

}  // namespace tsctl
