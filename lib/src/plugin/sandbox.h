// The confinement of a LibTorch child (torch_child.cc): what a model's code
// can reach while tsctl loads and runs it. Layers, each on its own (a kernel
// without one still gets the others; ProbeSandbox() says which are there):
//   - limits: no new privileges, an address-space cap that counts every
//     mapping (shared and file ones too, which RLIMIT_DATA does not), CPU
//     time, the size of a file it writes (0 for a TorchScript archive), no
//     core files;
//   - what it sees: a TMPDIR of its own, an environment emptied (and its
//     memory, and the command line's, overwritten: CI tokens live there), no
//     descriptors but its pipe, stdio (stdout and stderr: a pipe tsctl reads,
//     child_output.h) and the archive's;
//   - Landlock (kernel 5.13+): reading only below the system's library
//     folders, the library files already loaded (LibTorch, the plugins,
//     operator libraries: each file, never its folder), the shared objects
//     of LibTorch's own folder (each file) and the files the request names; writing
//     nowhere, or only in its own folder for an AOTInductor package, which
//     LibTorch extracts before loading it;
//   - seccomp-bpf (libseccomp): no programs run, no processes started, no
//     network sockets (a local one is refused), no tracing or reading other
//     processes, no mounts, namespaces, kernel modules, BPF, keys or
//     io_uring; for a TorchScript archive no file opened for writing,
//     created, renamed or removed once its work starts. Such a call stops the child at once and the parent gets one
//     line naming it ("the model tried to open /etc/x for writing").
// The lists are here, once; docs/manual/sandbox.md says why each is there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tsctl {

struct SandboxPolicy {
  enum class Profile {
    kOff,       // --no-sandbox: the limits of ChildLimits only
    kArchive,   // loads and runs an archive: the whole sandbox
    kPackage,   // an AOTInductor package or exported program: writes in its own folder
    kPython,    // the caller's own Python (export, data loaders): limits, no kernel surface
  } profile = Profile::kArchive;
  std::vector<std::string> read_files;  // what the request reads besides the system's libraries
  std::vector<int> keep_fds;            // descriptors the child keeps (the archive's)
  // Its TMPDIR, and a package's only writable place; "" for none. (The
  // working directory stays the caller's, for the relative paths the
  // request names; Landlock gives no access there beyond them.)
  std::string private_dir;
  uint64_t address_space_bytes = 0;     // growth allowed past what it has now; 0: no cap
  double cpu_seconds = 0;               // CPU time (all threads); 0: none
  bool cuda = false;                    // a CUDA device: no Landlock, no address-space cap
};

// What the kernel offers, probed once (no side effect).
struct SandboxSupport {
  int landlock_abi = 0;  // 0: no Landlock
  bool seccomp = false;
  // The layers TSCTL_SANDBOX_WITHOUT ("landlock", "seccomp" or both) leaves
  // out on a kernel that has them, to test what a kernel without them
  // does: "Landlock", "seccomp,Landlock"; "" for none.
  std::string left_out;
  // "seccomp, Landlock ABI 3" or what is missing, for -v and reports.
  std::string Describe() const;
};
const SandboxSupport& ProbeSandbox();

// In the child, before the request's archive is opened: applies every layer
// of `policy` but the write lock. A blocked call writes one frame of type
// `frame_type` with the line to `report_fd` and ends the child with
// kSandboxExit. Throws nothing: a layer the kernel lacks is skipped (and
// says so in ProbeSandbox()).
void EnterSandbox(const SandboxPolicy& policy, int report_fd, char frame_type);

// In the child, once nothing but the model's code will open files: no file
// is opened for writing, created, renamed, linked or removed after this
// (kArchive).
void LockFileWrites();

// The environment a sandboxed child (and the LibTorch server) gets of this
// process's, as NAME=VALUE: the thread and device settings, TSCTL_*.
std::vector<std::string> SandboxEnvironment();
// This process's environment becomes exactly `environment` (NAME=VALUE
// entries; others are ignored).
void ReplaceEnvironment(const std::vector<std::string>& environment);

// The exit status of a child that the sandbox stopped.
constexpr int kSandboxExit = 159;

// Every file the child writes (outputs, references, archives, traces) goes
// through here: in a sandboxed child as bytes to the parent, which writes
// the paths the request named; elsewhere written atomically on the spot.
void WriteChildFile(const std::string& path, const std::string& bytes);
// In the child: WriteChildFile sends ('W' frames) on `fd` from now on.
void SendChildFilesTo(int fd, char frame_type);

// In the child (every profile, --no-sandbox too): StopChild's line goes to
// `fd` as one frame of `frame_type`.
void SendStopsTo(int fd, char frame_type);
// In the child: a guard found what the model must not do (torch/view_guard.h):
// sends `line` to the parent and ends the child at once with kSandboxExit,
// before the operator runs. Without SendStopsTo, the line goes to stderr.
[[noreturn]] void StopChild(const std::string& line);

}  // namespace tsctl
