// The seccomp layer of the sandbox (sandbox.h), private to sandbox.cc and
// sandbox_seccomp.cc. LockFileWrites is declared in sandbox.h.
#pragma once

namespace tsctl {

// Whether this kernel filters system calls (seccomp-bpf).
bool SeccompAvailable();
// A stopped call writes one frame (`frame_type`, the line) to `report_fd`
// and ends the process with kSandboxExit.
void CatchSigsys(int report_fd, char frame_type);
// The calls no child needs (sandbox.h): stopped from now on, in this thread
// and every thread it starts. False if the filter could not be loaded.
bool ApplySeccomp();

}  // namespace tsctl
