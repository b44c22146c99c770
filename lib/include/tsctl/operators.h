// The operators an archive's methods call, read without LibTorch: from the
// code records (TorchScript source as the serializer prints it) and, for
// mobile archives, from bytecode.pkl's operator tables.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tsctl/archive.h"

namespace tsctl {

struct OperatorUse {
  std::string name;    // "aten::add", or "aten::add.Tensor" when the overload is known (bytecode)
  uint64_t count = 0;  // call sites in the code, or OP instructions in the bytecode
};

struct MethodOperators {
  std::string method;  // qualified: "__torch__.Net.forward", "__torch__.torchvision.ops.boxes.nms"
  std::string source;  // "code" or "bytecode"
  std::vector<OperatorUse> operators;  // sorted by name
};

struct OperatorList {
  std::vector<MethodOperators> methods;  // code methods first, then bytecode methods
  // Over the whole archive: from bytecode.pkl when the archive has a readable
  // one (what the lite interpreter needs), else summed over the code methods.
  std::vector<OperatorUse> totals;  // sorted by name
  std::string totals_source;        // "code", "bytecode" or "" (no code at all)
  std::vector<std::string> warnings;  // records that could not be read
  size_t unscanned = 0;  // code records left out: their text is past kMaxCodeBytes

  // The totals grouped by namespace ("aten", "prim", "torchvision", ...).
  std::map<std::string, std::vector<OperatorUse>> ByNamespace() const;
  // The names in `totals`.
  std::vector<std::string> Names() const;
};

// An operator that reaches outside the tensors it is given: a file, or memory
// at indices or offsets it never checks. One list for validate's ts.hooks
// (the code's text, before loading) and torch.unsafe (the graphs LibTorch
// resolved); from a review of native_functions.yaml, LibTorch 1.13 and 2.x.
struct UnsafeOperator {
  const char* op;   // "aten::save": namespace and name, no overload
  const char* why;  // "writes a file", completing "X calls OP, which ..."
  // An argument that makes it safe when it is the constant False
  // ("unsafe" of aten::segment_reduce); nullptr: unsafe whatever its
  // arguments. Only a graph shows constants: the text scan leaves these out.
  const char* safe_when_false;
  // Only the overloads with this argument are unsafe ("storage_offset" of
  // aten::set_: set_(storage, offset, size, stride) checks none of them
  // against the storage, set_(tensor) takes a sound tensor's); nullptr:
  // every overload. The text scan, which sees no overloads, leaves these
  // out too.
  const char* only_with = nullptr;
  // Whether a call of overload `overload` ("source_Storage_storage_offset",
  // "" for none) with the schema's arguments `arguments` is one this entry
  // flags.
  bool Flags(const std::string& overload, const std::vector<std::string>& arguments) const;
  // Graph-only entries (safe_when_false or only_with): the text scan cannot judge them.
  bool GraphOnly() const { return safe_when_false || only_with; }
};
// The entry for `op` (a name without overload), or nullptr.
const UnsafeOperator* FindUnsafeOperator(const std::string& op);

// "torchvision::nms" -> "torchvision"; "" if `op` has no "::".
std::string OperatorNamespace(const std::string& op);
// "aten::add.Tensor" -> "aten::add".
std::string OperatorBaseName(const std::string& op);

// Operators called by each function and method of one code record
// ("code/__torch__/foo.py"). Counts the calls the serializer prints as
// `torch.NAME(` (aten), `ops.NS.NAME(` / `torch.ops.NS.NAME(` and the Python
// builtins it prints bare (int(), float(), bool(), str(), sorted(), len(),
// hash(), ord(), chr(), divmod(), print()); strings and comments are skipped.
// Infix operators and subscripts are not counted. Never throws.
std::vector<MethodOperators> OperatorsInCode(const std::string& record, std::string_view source);

// Operators of each method of a bytecode.pkl (format versions 3 and later),
// counted by the OP/OPN instructions that call them. Throws tsctl::Error
// (kFormat) if the pickle is not a bytecode table.
std::vector<MethodOperators> OperatorsInBytecode(std::string_view bytecode_pkl);

// Both of the above over an archive. Unreadable records become warnings.
OperatorList ListOperators(const Archive& archive);

}  // namespace tsctl
