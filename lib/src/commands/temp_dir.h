// A private temporary directory for what torch writes before tsctl stamps
// it and moves it into place (export, migrate). Private to lib/src/commands.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "tsctl/error.h"

namespace tsctl {

// A private directory in $TMPDIR (else /tmp), removed with what it holds.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix = "tsctl-export") {
    const char* tmp = std::getenv("TMPDIR");
    const std::string base = tmp && *tmp ? tmp : "/tmp";
    std::string name = base + "/" + prefix + "-XXXXXX";
    if (::mkdtemp(name.data()) == nullptr) {
      throw Error(ErrorKind::kIo, "cannot create a temporary directory in " + base + ": " + std::strerror(errno));
    }
    path = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace tsctl
