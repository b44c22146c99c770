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

// Every operator the module's code calls, as LibTorch resolved it: each
// node of every function of its compilation unit (methods, the free
// functions they call, fork's and closures' bodies), named as the mobile
// bytecode names it ("aten::add.Tensor": schema name and overload; the
// node's kind where it has no schema, "prim::RaiseException"). Sorted,
// each once. What a mobile archive's bytecode.pkl may call (ts.bytecode).
std::vector<std::string> GraphOperators(const torch::jit::Module& module);

}  // namespace tsctl
