// State that survives a call (validate's torch.stateful): the writes to a
// module's own state that a method's graph makes, found before it runs, and
// the module's attributes, buffers and parameters compared before and after
// calls. Private to the LibTorch plugin.
#pragma once

#include <torch/script.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model_check.h"

namespace tsctl {

// Each module's training flag as the archive saved it (taken before eval()),
// by object: a write under `if self.training` is live when the module was
// saved in training mode.
using TrainingFlags = std::map<const c10::ivalue::Object*, bool>;
TrainingFlags SavedTrainingFlags(const torch::jit::Module& module);

// The writes to the module's state that `method` makes, in its graph with
// every method and function it calls inlined (interface calls and fork's
// bodies followed too): prim::SetAttr on the module or a submodule, and any
// operator whose schema marks an argument written ("Tensor(a!) self") when
// that argument is, or is a view or element of, a module attribute (a
// buffer, a parameter, a list, a dict, an object) or a tensor constant of
// the graph; batch_norm and instance_norm, whose 1.13 schemas hide that they
// update their running statistics, when not told `training=False`. Branches
// on `self.training` follow `training`. Each write once, in graph order.
// Throws what LibTorch throws on a graph it cannot inline.
std::vector<StateWrite> StateWrites(const torch::jit::Module& module, const std::string& method,
                                    const TrainingFlags& training);

// One attribute, buffer or parameter of a module tree, as a snapshot keeps
// it: what it is, described, and a fingerprint of its value (tensors: their
// dtype, shape, strides and every byte of their storage; containers and
// objects: everything in them).
struct StateEntry {
  std::string kind;  // "attribute", "buffer", "parameter"
  std::string desc;  // "int 3", "list of 2", "Float[3]"
  uint64_t fingerprint = 0;
  std::string owner_type;  // the qualified type of the module that holds it
};

// Every attribute of the module and of its submodules, by dotted path ("n",
// "bn.running_mean"); submodules themselves are walked, not entries. Bounded
// work: past a few million elements in all, containers count by size only.
using StateSnapshot = std::map<std::string, StateEntry>;
StateSnapshot SnapshotState(const torch::jit::Module& module);

// The entries of `after` that differ from `before` (or are new, or gone),
// appended to `out` with `after_call`, skipping attributes `out` already has.
void AddStateChanges(const StateSnapshot& before, const StateSnapshot& after, int after_call,
                     std::vector<StateChange>& out);

// "a BatchNorm's running statistics, ..." when `attribute` of a module of
// type `owner_type` is one (state kept by design in training mode); else "".
std::string KnownStateNote(const std::string& attribute, const std::string& owner_type);

}  // namespace tsctl
