// The private interfaces between libtsctl and its plugins (libtsctl_torch.so,
// libtsctl_python.so). Not installed: users link against lib/include/tsctl/.
//
// A plugin exports two C symbols: `tsctl_<name>_plugin_abi` returning the ABI
// version it was built with, and `tsctl_<name>_plugin` returning its one
// backend object. The loader refuses a plugin whose ABI version differs from
// its own, in one line. Bump an ABI version whenever a class below, or a
// struct passed through it, changes.
#pragma once

#include <string>

#include "tsctl/bench.h"
#include "tsctl/migrate.h"
#include "tsctl/torch_backend.h"
#include "model_check.h"

namespace tsctl {

inline constexpr int kTorchPluginAbi = 18;
inline constexpr int kPythonPluginAbi = 10;

// tsctl trace --python / tsctl script --python / tsctl export (the
// embedded-Python plugin).
// The run (RunSpec): its example inputs and the operator libraries loaded first.
// MakeSpec's output: trace/script: written atomically with its bytes;
// export: the path torch.export.save or AOTInductor writes (a temporary
// file named as the output, whose base name becomes the archive's top
// folder).
struct PythonRequest : MakeSpec {
  std::string file;  // model.py
  std::string name;  // class or factory in it
  std::string mode;  // "trace", "script", "export" or "migrate" (file: the TorchScript archive)
  bool aoti = false;
  bool dynamic_batch = false;
  bool strict = false;
  bool keep_unverified = false;  // migrate: write it even when not verified
  int bench_iters = 0;           // migrate --bench: timed calls of each form (0: no bench)
  bool compare_intermediates = false;  // migrate: name the first node whose value differs
};

class TorchBackend {
 public:
  virtual ~TorchBackend() = default;
  virtual BuildInfo Info() const = 0;
  // Builds, in this process, the tables LibTorch otherwise builds lazily in
  // every process on its first load (the JIT's operator registry, the
  // operator upgraders' graphs), so that children forked afterwards inherit
  // them. Starts no threads and runs no operators; never throws (a table it
  // could not build is built by the child as before).
  virtual void PrepareForFork() const = 0;
  // Sets LibTorch's intra-op threads of this process (at::set_num_threads),
  // for children that run side by side; called in the child before its work.
  virtual void LimitThreads(int intra_op_threads) const = 0;
  // Loads what an AOTInductor package's compiled wrapper needs from this
  // process (libtorch_cpu in global scope, libtorch.so from beside it), once:
  // called in the child before its sandbox, whose Landlock rules would hide
  // libtorch.so's dependencies; the package loader calls it again (a no-op
  // then, the only call with --no-sandbox). A no-op in a 1.13 build.
  virtual void PrepareForPackages() const = 0;
  // Info() without what a device says (cuda_available, cuda_devices):
  // cheap, and safe in the LibTorch server (torch_server.h) before it forks:
  // it loads nothing and touches no device (Info() asks CUDA).
  virtual BuildInfo StaticInfo() const = 0;
  // What this LibTorch registers, in tsctl compat's data format: its
  // operators with overloads, custom classes, upgraders (where its headers
  // declare them) and the file-format and bytecode versions it reads.
  virtual std::string Registry() const = 0;
  // See Graph() in tsctl/torch_backend.h; runs in the calling process.
  virtual std::string Graph(const GraphOptions& options) const = 0;
  virtual std::string CompiledCode(const std::string& path, const std::string& method) const = 0;
  // Loads, finds the method, lists operators, runs and compares, as
  // `tsctl validate` needs. Failures of the model are data in the result;
  // throws tsctl::Error (kUsage) for arguments that do not fit the method.
  virtual ModelCheckResult CheckModel(const ModelCheckOptions& options) const = 0;
  // Throws tsctl::Error: kTorch if loading or running fails, kUnavailable for
  // a device this build or machine lacks, kUsage for bad options.
  virtual BenchResult Bench(const BenchOptions& options) const = 0;
  virtual MakeResult Trace(const TraceOptions& options) const = 0;
  virtual MakeResult ScriptSource(const ScriptOptions& options) const = 0;
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
  // For mode "export" it writes request.output as torch writes it (the
  // caller stamps it and moves it into place), and throws kUnavailable where
  // the embedded Python's torch has no torch.export.
  virtual MakeResult Make(const PythonRequest& request) const = 0;
  // Runs a data loader (--data-loader-script FILE:NAME) and returns its
  // first set of arguments as a file's suffix and bytes: ".pt" and
  // torch.save of the argument tuple, or ".npz" of arrays by argument name.
  // Throws tsctl::Error: kUsage (the script's errors, said plainly), kIo
  // (no such file), kUnavailable (Python's torch is another LibTorch build).
  virtual std::pair<std::string, std::string> LoadData(const std::string& file, const std::string& name) const = 0;
  // tsctl migrate: converts request.file (a TorchScript archive) with the
  // converter the embedded torch ships, verifies it against the archive and
  // writes request.output as torch writes it (the caller stamps it and moves
  // it into place). The model's failures are data in the result; throws
  // kUnavailable where the torch has no converter, kUsage for unreadable inputs.
  virtual MigrateResult Migrate(const PythonRequest& request) const = 0;
};

// Loads the LibTorch plugin on first call (in this process). Throws
// tsctl::Error (kUnavailable) naming the library and the loader's message if
// it cannot be loaded or its ABI version differs.
const TorchBackend& LoadTorchPlugin();

// The plugin if this process has already loaded it, else nullptr; never loads
// it (for facts that should not cost LibTorch's start-up).
const TorchBackend* LoadedTorchBackend();

// The LibTorch server's executable (tsctl-torch-server next to libtsctl;
// TSCTL_TORCH_SERVER names another).
std::string TorchServerPath();

// Throws what LoadTorchPlugin would throw before it tries to load anything:
// a command declared to need no LibTorch (ForbidLibTorch), a build without
// LibTorch (kUnavailable).
void RequireLibTorchAllowed();

// Same for the Python plugin; kUnavailable if this tsctl was built without it.
const PythonBackend& LoadPythonPlugin();

// True if the Python plugin file exists next to libtsctl.
bool PythonPluginBuilt();

}  // namespace tsctl

// Symbols the plugins define.
#define TSCTL_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
