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
  PyValue() = default;
  PyValue(const PyValue&) = default;
  PyValue& operator=(const PyValue&) = default;
  // Releases nested values iteratively, so a tree nested a million levels
  // deep does not overflow the stack when it goes away.
  ~PyValue();

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

  // Set by the parser's final walk: nesting below this value, and its size
  // with shared sub-objects counted each time (saturating).
  uint32_t depth = 0;
  uint64_t expanded = 0;
  uint8_t walk = 0;  // 0 unseen, 1 on the walk's path, 2 done

  // "module.name" for a kGlobal, and for a kObject whose callable is one.
  std::string QualifiedName() const;
  bool IsGlobal(std::string_view module, std::string_view global_name) const;
  // Dict lookup by string key; null if absent or not a dict.
  PyRef Get(std::string_view key) const;
};

struct PickleLimits {
  // Values created, and also the most entries the stack, the marks and the
  // memo may hold.
  size_t max_values = 10'000'000;
  // Nesting of the value tree. Consumers walk the tree recursively, so this
  // bounds their stack use.
  size_t max_depth = 1000;
  // Values in the tree when each memo-shared sub-object is counted every
  // time it is referenced: what a consumer that walks the tree as a tree
  // visits. A pickle whose shared references expand exponentially is refused.
  uint64_t max_expanded = 10'000'000;
};

// What a parse saw besides the value tree.
struct PickleFacts {
  // Every global the pickle names (GLOBAL, STACK_GLOBAL, INST), as
  // "module.name", once each, in first-seen order: also those that end up
  // unreachable from the result, since Python's unpickler imports them all.
  std::vector<std::string> globals;
};

// Parses one pickle. Throws tsctl::Error (kFormat) naming the opcode and
// offset if the bytes are not a well-formed pickle, and naming the limit if
// the pickle exceeds one of `limits` or refers to itself (a cycle).
PyRef ParsePickle(std::string_view bytes, const PickleLimits& limits = {}, PickleFacts* facts = nullptr);

// True if `module`.`name` is a global that torch.jit.save writes into
// data.pkl or constants.pkl: __torch__ classes, tensor and storage
// rebuilders, torch.jit._pickle helpers, collections.OrderedDict, devices
// and quantization schemes. Anything else in a TorchScript pickle would make
// Python's pickle import and call it.
bool IsTorchScriptGlobal(std::string_view module, std::string_view name);

// A short Python-like rendering, cut at about `max_chars` with "...".
std::string Repr(const PyRef& value, size_t max_chars = 200);

}  // namespace tsctl
