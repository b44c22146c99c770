#pragma once

#include <ftw.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tsctl/zip.h"

namespace tsctl::test {

inline std::string TestData(const std::string& name) { return std::string(TSCTL_TESTDATA) + "/" + name; }

// Removes a folder and what is in it (nftw), for tests linked against
// LibTorch: torch 2.11's libtorch.so (PyPI) exports its own
// std::filesystem::remove_all, which interposes on the test's and calls a
// null pointer (seen on an H200 host, tsctl_torch_unit's [cuda] case).
inline void RemoveTree(const std::string& dir) {
  ::nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

// How many times `what` occurs in `s` (overlapping ones too).
inline size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A minimal ZIP writer for hostile archives: stored or deflated records with
// exactly the headers asked for (declared sizes may lie).
struct RawRecord {
  std::string name;
  std::string data;       // what is stored (already compressed for method 8)
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t declared = 0;  // uncompressed size written in the headers
};

inline void P16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
inline void P32(std::string& s, uint32_t v) {
  P16(s, v & 0xffff);
  P16(s, v >> 16);
}

inline std::string MakeZip(const std::vector<RawRecord>& recs) {
  std::string out, cd;
  for (const auto& r : recs) {
    uint32_t off = static_cast<uint32_t>(out.size());
    P32(out, 0x04034b50); P16(out, 20); P16(out, 0); P16(out, r.method); P16(out, 0); P16(out, 0);
    P32(out, r.crc); P32(out, static_cast<uint32_t>(r.data.size())); P32(out, static_cast<uint32_t>(r.declared));
    P16(out, static_cast<uint32_t>(r.name.size())); P16(out, 0);
    out += r.name + r.data;
    P32(cd, 0x02014b50); P16(cd, 20); P16(cd, 20); P16(cd, 0); P16(cd, r.method); P16(cd, 0); P16(cd, 0);
    P32(cd, r.crc); P32(cd, static_cast<uint32_t>(r.data.size())); P32(cd, static_cast<uint32_t>(r.declared));
    P16(cd, static_cast<uint32_t>(r.name.size())); P16(cd, 0); P16(cd, 0); P16(cd, 0); P16(cd, 0); P32(cd, 0); P32(cd, off);
    cd += r.name;
  }
  uint32_t cd_off = static_cast<uint32_t>(out.size());
  out += cd;
  P32(out, 0x06054b50); P16(out, 0); P16(out, 0); P16(out, static_cast<uint32_t>(recs.size()));
  P16(out, static_cast<uint32_t>(recs.size()));
  P32(out, static_cast<uint32_t>(cd.size())); P32(out, cd_off); P16(out, 0);
  return out;
}

inline RawRecord Stored(const std::string& name, const std::string& data) {
  return {name, data, 0, Crc32(data.data(), data.size()), data.size()};
}

}  // namespace tsctl::test
