// The pickle reader's machine, shared by pickle.cc (the run and the final
// walk over the result) and pickle_opcodes.cc (what each opcode does); not a
// public interface.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tsctl/pickle.h"

namespace tsctl::pickle_internal {

class Parser {
 public:
  Parser(std::string_view bytes, const PickleLimits& limits, PickleFacts* facts)
      : in_(bytes), limits_(limits), facts_(facts) {}

  // Parses, then walks the result to bound its depth and expanded size and to
  // refuse cycles. On failure, breaks every cycle the pickle built, so that
  // nothing leaks.
  PyRef Parse();

 private:
  // pickle.cc: the run, the final walk, and failure.
  static void Clear(PyValue& v);
  // The i-th child of `v` in a fixed order (items, dict keys and values,
  // callable, state); null for an absent one.
  static size_t ChildCount(const PyValue& v) { return v.items.size() + 2 * v.entries.size() + 2; }
  static PyValue* Child(const PyValue& v, size_t i);
  // Iterative depth-first walk over the value graph (memo references make it
  // a DAG): each value is visited once.
  void Walk(const PyRef& root);
  PyRef Run();
  [[noreturn]] void Fail(const std::string& what) const;

  // pickle_opcodes.cc: one step of the machine, by opcode family. Each
  // family returns false for an opcode that is not its own.
  void Step(uint8_t op);
  bool StackOp(uint8_t op);
  bool ScalarOp(uint8_t op);
  bool StringOp(uint8_t op);
  bool ContainerOp(uint8_t op);
  bool MemoOp(uint8_t op);
  bool ObjectOp(uint8_t op);

  // pickle_opcodes.cc: reading arguments, and the stack, the memo and the
  // values the opcodes build.
  void Mutated(const PyRef& v);
  void Global(const std::string& module, const std::string& name);
  std::string_view Take(size_t n);
  uint64_t LE(size_t n);
  std::string Line();
  PyRef New(PyKind kind);
  void Push(PyRef v);
  PyRef Pop();
  PyRef& Top();
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<PyRef> PopMark();
  PyRef Int(int64_t v);
  PyRef Str(PyKind kind, std::string_view s);
  PyRef Long(std::string_view bytes);
  void Memo(uint64_t idx);
  PyRef Recall(uint64_t idx);
  PyRef MakeObject(PyRef callable, std::vector<PyRef> args);
  void AddToDict(PyRef& dict, std::vector<PyRef>& kv);
  void Insert(PyRef& dict, PyRef key, PyRef value);
  void Append(PyRef& list, std::vector<PyRef> items);
  PyRef Tuple(std::vector<PyRef> items);

  std::string_view in_;
  const PickleLimits& limits_;
  PickleFacts* facts_;
  std::unordered_set<std::string> globals_seen_;
  std::vector<PyRef> mutated_;  // containers changed after creation: where cycles can form
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  size_t created_ = 0;
  std::vector<PyRef> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PyRef> memo_;
};

}  // namespace tsctl::pickle_internal
