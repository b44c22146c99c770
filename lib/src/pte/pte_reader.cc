// ReadPte and ReadPteBytes: the first bytes say the kind and where the
// flatbuffer ends; only bytes [0, that end) are read (never the segments),
// into memory aligned for FlatBuffers, and handed to the kind's reader.
#include <algorithm>
#include <cstring>
#include <memory>

#include "pte_internal.h"
#include "tsctl/error.h"
#include "tsctl/source.h"

namespace tsctl {
namespace pte_internal {
namespace {

PteFile ReadFlatbuffer(const Head& head, std::string_view flatbuffer, uint64_t file_size, const std::string& name,
                       const PteReadOptions& options) {
  PteFile out;
  out.kind = head.kind;
  out.identifier = head.identifier;
  out.file_size = file_size;
  out.header = head.header;
  switch (head.kind) {
    case PteKind::kProgram: ReadProgramFile(flatbuffer, head, name, options, out); break;
    case PteKind::kFlatTensor: ReadFlatTensorFile(flatbuffer, head, name, out); break;
    case PteKind::kBundled: ReadBundledFile(flatbuffer, head, name, options, out); break;
  }
  return out;
}

// Runs `read`; an error without the file's name (the byte source's) gets it.
template <typename F>
auto ReadNamed(const std::string& name, F read) {
  try {
    return read();
  } catch (const Error& e) {
    throw Error(e.kind(), name + ": " + e.what(), e.detail());
  }
}

}  // namespace

PteFile ReadInMemory(std::string_view bytes, const std::string& name, const PteReadOptions& options) {
  const Head head = ReadHead(bytes.substr(0, kHeadBytes), bytes.size(), name);
  std::string_view flatbuffer = bytes.substr(0, static_cast<size_t>(head.flatbuffer_end));
  if (reinterpret_cast<uintptr_t>(flatbuffer.data()) % 8 == 0) {
    return ReadFlatbuffer(head, flatbuffer, bytes.size(), name, options);
  }
  AlignedBytes copy(flatbuffer.size());
  if (!flatbuffer.empty()) std::memcpy(copy.data(), flatbuffer.data(), flatbuffer.size());
  return ReadFlatbuffer(head, copy.view(), bytes.size(), name, options);
}

}  // namespace pte_internal

PteFile ReadPte(const std::string& path, const PteReadOptions& options) {
  std::unique_ptr<ByteSource> src = pte_internal::ReadNamed(path, [&] { return OpenFileSource(path); });
  return ReadPteSource(*src, options);
}

PteFile ReadPteSource(const ByteSource& src, const PteReadOptions& options) {
  using namespace pte_internal;
  const std::string& path = src.Name();
  const uint64_t size = src.Size();
  const std::string head = ReadNamed(path, [&] { return src.ReadString(0, static_cast<size_t>(std::min<uint64_t>(size, kHeadBytes))); });
  const Head h = ReadHead(head, size, path);
  AlignedBytes flatbuffer(h.flatbuffer_end);
  ReadNamed(path, [&] {
    src.Read(0, flatbuffer.data(), static_cast<size_t>(h.flatbuffer_end));
    return 0;
  });
  return ReadFlatbuffer(h, flatbuffer.view(), size, path, options);
}

PteFile ReadPteBytes(std::string_view bytes, const std::string& name, const PteReadOptions& options) {
  return pte_internal::ReadInMemory(bytes, name, options);
}

}  // namespace tsctl
