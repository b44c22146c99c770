// The LibTorch server: where every LibTorch child (torch_child.h) comes
// from. The first child a tsctl process asks for starts it:
// tsctl-torch-server, a fresh executable image (next to the plugin) with
// an environment of the thread and device settings and TSCTL_* only, no
// descriptors but its control socket, in a process group of its own, dying
// with its parent. It loads the plugin and builds LibTorch's lazily built
// tables once (TorchBackend::PrepareForFork), then forks one child per
// request. So a child is warm, as a fork of tsctl was, yet holds nothing of
// tsctl's memory: no command line, no environment (CI tokens live there),
// no other archive's bytes or report, no reference the caller read. A child
// reads its request from its own socket after the fork, so the server never
// holds one either.
//
// The control socket (SOCK_SEQPACKET) carries, parent to server, "spawn"
// with the child's descriptors (SCM_RIGHTS: its request socket, its answer
// pipe, its output pipe, the archives the request names as
// /proc/self/fd/N); server to
// parent, "ready" (what the plugin runs of .pt2) or why it could not load
// the plugin, each child's pid, and each child's wait status when it ends
// (the server reaps them; the parent kills a child's process group itself).
// A process forked from one with a server (a validate --jobs worker)
// attaches a channel of its own to it ("attach", its end attached): the
// server tells each channel of the children it asked for, and kills them
// when that channel closes. Not for use from two threads at once.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "tsctl/torch_backend.h"

namespace tsctl {

struct ChildLaunch;

// Starts this process's server if it has none. Throws tsctl::Error
// (kUnavailable) with the reason it could not load the plugin, (kIo) if no
// process could be made.
void StartTorchServer();

// What the server's plugin is (TorchBackend::StaticInfo: the LibTorch
// version, the archive format versions it reads, what it runs of .pt2).
// ServerInfo starts the server; StartedServerInfo is nullptr if this
// process has not started one (it never starts it).
const BuildInfo& ServerInfo();
const BuildInfo* StartedServerInfo();

// tsctl's ends (close-on-exec) of a child's pipes: its frames, and its
// standard output and error (one pipe, non-blocking here; child_output.h).
// Also the server's own standard output and error are a pipe that tsctl
// reads (shown with -v), never tsctl's streams.
struct ChildPipes {
  int answer = -1;
  int output = -1;
};

// Starts a child of the server that reads `launch` and does its work. The
// descriptors in launch.descriptors are passed to it under the same
// numbers. Returns its pid. Throws as StartTorchServer, or kIo.
pid_t SpawnTorchChild(const ChildLaunch& launch, ChildPipes* pipes);

// Waits (at most `seconds`) for the server's word that the child ended;
// its wait status, or -1 if no word came (the server died or was slow).
int AwaitTorchChild(pid_t pid, double seconds);

// In a child of the server: decodes the request (a ChildLaunch), does its
// work and writes its frames to `answer_fd` (torch_child.cc).
void ServeChildLaunch(const std::string& request, int answer_fd);

// This process's whole environment, as NAME=VALUE: what a child running
// the caller's own code gets (kPython, kOff).
std::vector<std::string> WholeEnvironment();

}  // namespace tsctl
