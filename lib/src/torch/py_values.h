// Values from files Python wrote: torch.save files read with tsctl's own
// pickle reader (LibTorch 1.13's unpickler lacks APPEND and friends), .npy
// and .npz; and re-typing of untyped values by a schema.
#pragma once

#include <torch/script.h>

#include <string>
#include <utility>
#include <vector>

namespace tsctl {

// Reads a torch.save file (ZIP format), an .npy array or an .npz archive
// (a tuple of its arrays in file order). Lists come back as List[Any] until
// Retype gives them a type. Throws tsctl::Error: kIo if the file cannot be
// read, kFormat if it is none of these or holds something that is not data
// (objects other than tensors, OrderedDict, complex numbers).
c10::IValue LoadValueFile(const std::string& path);
// The same from bytes in memory (`name` in messages, ".npy"/".npz" by its
// ending): a record of the archive, read inside the sandbox, where no
// temporary file may be written.
c10::IValue LoadValueBytes(std::string bytes, const std::string& name);

// The arrays of an .npz archive with their names ("x" for x.npy), in file
// order. Throws as LoadValueFile.
std::vector<std::pair<std::string, c10::IValue>> LoadNpzArrays(const std::string& path);

// The arguments of `schema` (self excluded) from named arrays: bound by name
// where every name is an argument's (arguments left out take their defaults),
// by position where no name is (numpy's arr_0, arr_1, ...). Throws
// tsctl::Error (kUsage) for a mix, or a required argument without an array,
// naming `path`.
std::vector<c10::IValue> BindNamedArrays(const c10::FunctionSchema& schema,
                                         const std::vector<std::pair<std::string, c10::IValue>>& arrays,
                                         const std::string& path);

// `value` with lists, tuples and dicts rebuilt with the element types of
// `type` (so [1, 2] is a List[int], not a List[Any]), ints widened to float
// where the type says float. Returns the value unchanged where the type
// does not apply; the method's own type check then reports a misfit.
c10::IValue Retype(const c10::TypePtr& type, const c10::IValue& value);

// The arguments of a method from a loaded value: a tuple or list is the
// argument list, anything else a single argument.
std::vector<c10::IValue> ArgumentList(const c10::IValue& value);

// A validate --record-reference record ({"inputs": (...), "outputs": ...}),
// whose "inputs" are a run's arguments.
bool IsReferenceRecord(const c10::IValue& loaded);

// --load-inputs: the arguments of `schema` from a file. An .npz binds its
// arrays by name (BindNamedArrays); a torch.save file holds the argument
// tuple (or list, or one value), or a reference ({"inputs": (...),
// "outputs": ...}, what --save-reference writes), whose inputs are taken.
// Throws as LoadValueFile, and tsctl::Error (kUsage, naming `path`) for more
// arguments than the method takes or fewer than it needs. `label`, if
// given, names the file in those errors instead of `path` (a temporary file
// that --data-loader-script wrote).
std::vector<c10::IValue> LoadArguments(const c10::FunctionSchema& schema, const std::string& path,
                                       const std::string& label = "");

// Writes `value` in torch.save's format (torch.load reads it). Throws
// tsctl::Error (kIo).
void SaveValueFile(const c10::IValue& value, const std::string& path);

}  // namespace tsctl
