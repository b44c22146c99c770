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
// `cuda`: a child that starts the CUDA driver, whose cuInit creates a local
// (AF_UNIX) socket, binds and listens on it and tries to connect one, and
// fails with cudaErrorOperatingSystem (304) when any of that is refused but
// the connect: there socket, bind and listen are allowed, and connecting,
// accepting and sending to an address answer EACCES (measured on an H100
// and an H200 with driver 580, tests/cuda/seccomp_probe.c).
bool ApplySeccomp(bool cuda);

}  // namespace tsctl
