// A pickle reader that builds a value tree and never imports, resolves or runs
// anything: GLOBAL opcodes become `kGlobal` placeholders and REDUCE/NEWOBJ/BUILD
// become `kObject` nodes, the way torch.utils.show_pickle uses placeholder
// classes. Covers the protocols 0 to 5 opcodes that PyTorch's pickler and
// Python's `pickle` emit for TorchScript archives and torch.save files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tsctl {

struct PyValue;
using PyRef = std::shared_ptr<PyValue>;

enum class PyKind {
  kNone,
  kBool,
  kInt,     // fits int64; bigger LONG values keep their decimal text in `str`
  kFloat,
  kString,
  kBytes,
  kList,
  kTuple,
  kDict,
  kSet,
  kGlobal,        // module in `str`, name in `name`
  kObject,        // `callable` applied to `items` (REDUCE/NEWOBJ), then `state` (BUILD)
  kPersistentId,  // the persistent id (usually a tuple) in `items[0]`
};

struct PyValue {
  PyKind kind = PyKind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string str;   // string, bytes, big int text, or a global's module
  std::string name;  // a global's name
  std::vector<PyRef> items;  // list/tuple/set items, object args, persistent id
  std::vector<std::pair<PyRef, PyRef>> entries;  // dict
  PyRef callable;            // object: what was called (usually a kGlobal)
  PyRef state;               // object: BUILD state, may be null

  // "module.name" for a kGlobal, and for a kObject whose callable is one.
  std::string QualifiedName() const;
  bool IsGlobal(std::string_view module, std::string_view global_name) const;
  // Dict lookup by string key; null if absent or not a dict.
  PyRef Get(std::string_view key) const;
};

struct PickleLimits {
  size_t max_values = 10'000'000;  // opcodes that create values
  size_t max_depth = 1000;         // nesting of the value tree when printing
};

// Parses one pickle. Throws tsctl::Error (kFormat) naming the opcode and
// offset if the bytes are not a well-formed pickle.
PyRef ParsePickle(std::string_view bytes, const PickleLimits& limits = {});

// A short Python-like rendering, cut at about `max_chars` with "...".
std::string Repr(const PyRef& value, size_t max_chars = 200);

}  // namespace tsctl
