// The program reader's pieces that see FlatBuffers types (the generated
// tsctl::pte_fb tables of program.fbs).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "program_generated.h"
#include "pte_internal.h"

namespace tsctl::pte_internal {

// The elements of a vector of 8-byte scalars, copied. FlatBuffers' verifier
// checks a vector's length field for 4-byte alignment only, so in a hostile
// file such elements may sit 4 bytes off their alignment: loading them in
// place (the generated accessors do) would be undefined behaviour.
template <typename T>
std::vector<T> Wide(const flatbuffers::Vector<T>* v, Budget& budget) {
  static_assert(sizeof(T) == 8, "for 8-byte scalars");
  std::vector<T> out;
  if (!v || v->size() == 0) return out;
  budget.Spend(v->size());
  out.resize(v->size());
  std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  for (T& x : out) x = flatbuffers::EndianScalar(x);
  return out;
}

// What a method's reader needs from the program around it.
struct ProgramContext {
  const pte_fb::Program& program;
  const PteProgram& read;  // the program-level parts read so far: segments, constant and mutable segments
  const std::string& name;
  Budget& budget;
  bool chains = false;  // also read each method's values and instructions (PteReadOptions::chains)
  const uint8_t* base = nullptr;  // the flatbuffer's first byte: the program's offset 0
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
