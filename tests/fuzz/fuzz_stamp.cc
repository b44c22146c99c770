// libFuzzer target: stamp's planning (`tsctl stamp --dry-run`) through its
// public entry point. Stamp takes a path, so the bytes go into an anonymous
// in-memory file (memfd) that is opened as /proc/self/fd/N: no file on disk
// is read or written, and dry runs never write.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../../lib/src/render/render_json.h"
#include "tsctl/error.h"
#include "tsctl/stamp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = ::memfd_create("tsctl-fuzz", 0);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  tsctl::StampOptions options;
  options.dry_run = true;
  options.auto_fields = false;
  options.set = {{"producer.name", "fuzz"}, {"nested.value", "[1, 2]"}};
  options.files = {{"notes.txt", "hello"}};
  options.remove = {"blob.bin"};
  try {
    tsctl::StampResult r = tsctl::Stamp("/proc/self/fd/" + std::to_string(fd), options);
    (void)tsctl::ToJson(r).dump();
  } catch (const tsctl::Error&) {
  }
  ::close(fd);
  return 0;
}
