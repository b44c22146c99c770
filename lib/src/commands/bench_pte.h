// bench of an ExecuTorch program on ExecuTorch's runtime (the runner child,
// pte_child.h): the executorch format's bench (tsctl/format.h).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tsctl/bench.h"
#include "tsctl/inputs.h"
#include "tsctl/pte.h"

namespace tsctl {

// Times `o.method` (forward when the program has it and -m is the default,
// else the first method) on inputs made from its metadata. Throws
// tsctl::Error: kUsage for a flag a .pte does not take yet (one line naming
// it), kUnavailable without a runtime in this build, kTorch when the program
// or method does not load or run (the runtime's reason in the line).
BenchResult BenchPte(const BenchOptions& o);

// The inputs validate and bench give a .pte: --input, or --load-inputs of
// an .npz/.npy; --arg and --data-loader not yet. Throws tsctl::Error
// (kUsage), one line, otherwise.
void RequirePteInputs(const std::vector<ArgSpec>& args, const std::string& load_inputs, const std::string& data_loader,
                      const std::vector<InputSpec>& inputs);

// The file's ExecuTorch identifier (FlatBuffers' file identifier, bytes 4-5):
// "ET" a program, "FT" a .ptd, "BP" a bundled program; "" for a shorter file.
std::string PteIdentifier(const std::string& path);

// The .ptd named as the program beside it (model.pte: model.ptd), or "":
// where validate and bench find a program's external tensors without --data.
std::string PteDataBeside(const std::string& path);
// The names of the program's tensors stored in a .ptd, sorted, each once.
std::vector<std::string> PteExternalTensors(const PteProgram& program);
// bench --profile: per operator (a kernel's "aten::add.out", a delegate
// call's "delegate XnnpackBackend"), in the order first seen, the calls and
// time of the instruction events of `dump` (ExecuTorch's ETDump of runs of
// `method`), each named from the instruction it timed in `program` (read
// with chains); `profiled_ns` gets their sum.
std::vector<OpStat> PteOperatorProfile(const PteETDump& dump, const PteFile& program, const std::string& method,
                                       uint64_t& profiled_ns);
// The names a .ptd holds: FT01's tensors and its named data keys.
std::set<std::string> PteDataKeys(const PteFile& data);

}  // namespace tsctl
