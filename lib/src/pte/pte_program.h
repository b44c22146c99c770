// The program reader's pieces that see FlatBuffers types (the generated
// tsctl::pte_fb tables of program.fbs).
#pragma once

#include <string>
#include <vector>

#include "program_generated.h"
#include "pte_internal.h"

namespace tsctl::pte_internal {

// What a method's reader needs from the program around it.
struct ProgramContext {
  const pte_fb::Program& program;
  const PteProgram& read;  // the program-level parts read so far: segments, constant and mutable segments
  const std::string& name;
  Budget& budget;
};

// Reads the method `plan` (the index-th), adding the tensors whose bytes the
// file carries or names to `stored`. Fails on an index that points past what
// it indexes (a value, an operator, a delegate, a constant, a segment) or a
// tensor whose bytes run past the end of their segment.
PteMethod ReadMethod(const pte_fb::ExecutionPlan& plan, size_t index, const ProgramContext& ctx,
                     std::vector<PteStoredTensor>& stored);

// Where a method's tensor keeps its bytes; Fails as ReadMethod does.
void LocateTensor(const pte_fb::Tensor& t, const std::string& where, const ProgramContext& ctx, PteTensor& out);

}  // namespace tsctl::pte_internal
