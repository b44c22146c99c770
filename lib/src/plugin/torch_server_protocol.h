// The LibTorch server's control protocol (torch_server.h), shared by tsctl's
// side (torch_server.cc) and the server's (torch_server_main.cc). Private.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "process.h"

namespace tsctl {

// The protocol's version, the first 4 bytes of kReady's payload: a server
// of another version (TSCTL_TORCH_SERVER naming an older build) is refused.
// 2: a spawn carries the child's output pipe (its descriptors 1 and 2).
inline constexpr uint32_t kServerProtocol = 2;

// The control socket's messages: the first byte says which.
// kSpawn's descriptors: the child's request socket, its answer pipe, its
// output pipe (its standard output and error), then one per named number.
inline constexpr char kSpawn = 'F';   // parent: start a child (descriptors attached; 4 bytes per named number)
inline constexpr char kReady = 'R';   // server: the plugin loaded (kServerProtocol, then its StaticInfo, encoded)
inline constexpr char kFailed = 'X';  // server: it could not (the line why), or could not fork
inline constexpr char kChild = 'C';   // server: the child's pid
inline constexpr char kEnded = 'E';   // server: a child's pid and wait status
inline constexpr char kAttach = 'A';  // a process forked from tsctl: a channel of its own (its end attached)
// The descriptor the server's first channel has in the server.
inline constexpr int kServerControlFd = 3;

// `type` and each number as 4 bytes (PutLength).
inline std::string WithNumbers(char type, std::initializer_list<uint32_t> numbers) {
  std::string s(1, type);
  for (uint32_t n : numbers) {
    char b[4];
    PutLength(b, n);
    s.append(b, 4);
  }
  return s;
}

}  // namespace tsctl
