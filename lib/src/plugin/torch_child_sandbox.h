// The sandbox as the LibTorch door (torch_child.cc) applies it: what each
// request reads and writes, the policy its child gets, the child's own
// folder (the files it sends back: frame_stream.h).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sandbox.h"
#include "torch_child.h"

namespace tsctl {

// Whether LibTorch children are confined: false after SetSandbox(false)
// (tsctl/torch_backend.h, --no-sandbox).
bool SandboxOn();

// What a request reads and writes (its Files, the libraries among the
// reads), and how it is confined: kOff for every request after
// SetSandbox(false).
RequestFiles FilesOf(const ChildRequest& request);

// The descriptors named as /proc/self/fd/N among `paths` (the archive the
// parent opened and checked): the child keeps them.
std::vector<int> NamedDescriptors(const std::vector<std::string>& paths);

// The child's policy: its files, a memory cap of `memory` bytes, CPU time
// from the limits' timeout, `dir` its own folder.
SandboxPolicy PolicyOf(const RequestFiles& files, const ChildLimits& limits, uint64_t memory, const std::string& dir);

// A folder of the child's own (its TMPDIR; where an AOTInductor package is
// extracted), removed with everything in it when the child is done; `path`
// is "" if none could be made.
struct PrivateDir {
  std::string path;
  PrivateDir();
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
};

}  // namespace tsctl
