// Values from files Python wrote: torch.save files read with tsctl's own
// pickle reader (LibTorch 1.13's unpickler lacks APPEND and friends), .npy
// and .npz; and re-typing of untyped values by a schema.
#pragma once

#include <torch/script.h>

#include <string>

namespace tsctl {

// Reads a torch.save file (ZIP format), an .npy array or an .npz archive
// (a tuple of its arrays in file order). Lists come back as List[Any] until
// Retype gives them a type. Throws tsctl::Error: kIo if the file cannot be
// read, kFormat if it is none of these or holds something that is not data
// (objects other than tensors, OrderedDict, complex numbers).
c10::IValue LoadValueFile(const std::string& path);

// `value` with lists, tuples and dicts rebuilt with the element types of
// `type` (so [1, 2] is a List[int], not a List[Any]), ints widened to float
// where the type says float. Returns the value unchanged where the type
// does not apply; the method's own type check then reports a misfit.
c10::IValue Retype(const c10::TypePtr& type, const c10::IValue& value);

// The arguments of a method from a loaded value: a tuple or list is the
// argument list, anything else a single argument.
std::vector<c10::IValue> ArgumentList(const c10::IValue& value);

// Writes `value` in torch.save's format (torch.load reads it). Throws
// tsctl::Error (kIo).
void SaveValueFile(const c10::IValue& value, const std::string& path);

}  // namespace tsctl
