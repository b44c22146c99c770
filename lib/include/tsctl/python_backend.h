// tsctl trace --python / tsctl script --python: Python models through an
// embedded CPython, in a plugin (libtsctl_python.so) built only where Python
// development files were present.
#pragma once

#include <string>
#include <vector>

#include "tsctl/inputs.h"
#include "tsctl/torch_backend.h"

namespace tsctl {

struct PythonRequest {
  std::string file;  // model.py
  std::string name;  // class or factory in it
  std::string mode;  // "trace" or "script"
  std::vector<InputSpec> inputs;
  std::vector<std::vector<InputSpec>> check_inputs;
  bool freeze = false;
  double rtol = 1e-5;
  double atol = 1e-6;
  std::string output;
};

class PythonBackend {
 public:
  virtual ~PythonBackend() = default;
  // "Python 3.11.2 (/usr/bin/python3), torch from /usr/lib/python3/dist-packages/torch".
  virtual std::string Describe() const = 0;
  // Imports the file, builds the model, traces or scripts it, checks it and
  // writes the archive atomically. Throws tsctl::Error: kUsage (import,
  // name, scripting errors, said plainly), kUnavailable (Python's torch is
  // another LibTorch build than tsctl's), kTorch.
  virtual MakeResult Make(const PythonRequest& request) const = 0;
};

// Loads the plugin on first call. Throws tsctl::Error (kUnavailable) if this
// tsctl was built without it.
const PythonBackend& GetPythonBackend();

// True if the plugin file exists next to libtsctl (for --version).
bool PythonBackendBuilt();

}  // namespace tsctl
