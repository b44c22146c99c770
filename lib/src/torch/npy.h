// NumPy's .npy arrays and .npz archives (a ZIP of .npy records), read into
// tensors and written from them, as numpy.save and numpy.savez write them.
// Private to py_values.cc.
#pragma once

#include <torch/script.h>

#include <string>
#include <utility>
#include <vector>

#include "tsctl/archive.h"
#include "tsctl/text_util.h"

namespace tsctl {

// The largest record of a value file read into memory.
constexpr uint64_t kMaxValueRecord = uint64_t{64} << 30;

// `what` is not a readable value file: throws tsctl::Error (kFormat),
// "WHAT: WHY".
[[noreturn]] void BadValueFile(const std::string& what, const std::string& why);

// One .npy array (format version 1, 2 or 3; C or Fortran order). Throws
// BadValueFile's error naming `what`.
at::Tensor ReadNpy(const std::string& bytes, const std::string& what);

// The .npy records of an .npz archive, named without ".npy", in file order.
std::vector<std::pair<std::string, c10::IValue>> NpzArrays(const Archive& archive, const std::string& path);

// `value` in NumPy's format: for a `path` ending .npz an .npz file of its
// tensors and numbers flattened in order (tuples, lists, dicts' values; a
// number a 0-d array), arr_0, arr_1, ... as numpy.savez names them; else
// one tensor as an .npy file (version 1.0). Throws tsctl::Error (kUsage,
// naming `path`) for what NumPy cannot hold.
std::string NpyBytes(const c10::IValue& value, const std::string& path);

}  // namespace tsctl
