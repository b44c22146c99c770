// NumPy's files read for inputs and references of every format: an .npy
// array or an .npz archive of them (zip/npz.h reads an array's header).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../zip/npz.h"

namespace tsctl {

// Named arrays, each with the bytes of the .npy file it is read from.
using NumpyArrays = std::vector<std::pair<std::string, std::pair<NpyArray, std::string>>>;

// The arrays of an .npy file (one, named "arr_0") or an .npz file (every
// NAME.npy record, in the file's order, named NAME), each with its file's
// bytes. Throws tsctl::Error (kIo, kFormat) naming `path`.
NumpyArrays ReadNumpyFile(const std::string& path);

}  // namespace tsctl
