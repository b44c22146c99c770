#include "tsctl/record_reader.h"

#include <zlib.h>

#include <algorithm>
#include <string>

#include "tsctl/error.h"

namespace tsctl {
namespace {

Error Malformed(const std::string& message) { return Error(ErrorKind::kFormat, message); }

}  // namespace

struct RecordReader::Inflater {
  z_stream zs{};
  std::string in;
  uint64_t consumed = 0;
  bool done = false;
  ~Inflater() { inflateEnd(&zs); }
};

RecordReader::RecordReader(const ByteSource& src, const ZipEntry& entry) : src_(src), entry_(entry) {
  if (!entry.local_header_error.empty()) throw Malformed(entry.name + ": " + entry.local_header_error);
  if (entry.encrypted()) throw Malformed(entry.name + ": record is encrypted");
  if (entry.method == kZipStored) return;
  if (entry.method != kZipDeflated) {
    throw Malformed(entry.name + ": unsupported compression method " + std::to_string(entry.method));
  }
  inflater_ = std::make_unique<Inflater>();
  if (inflateInit2(&inflater_->zs, -MAX_WBITS) != Z_OK) {
    inflater_.reset();
    throw Error(ErrorKind::kIo, "zlib: inflateInit2 failed");
  }
}

RecordReader::~RecordReader() = default;

size_t RecordReader::Read(char* buf, size_t n) {
  if (n == 0) return 0;
  if (!inflater_) {
    uint64_t left = entry_.compressed_size - produced_;
    size_t take = static_cast<size_t>(std::min<uint64_t>(n, left));
    if (take == 0) return 0;
    src_.Read(entry_.data_offset + produced_, buf, take);
    produced_ += take;
    return take;
  }
  Inflater& f = *inflater_;
  if (f.done) return 0;
  constexpr size_t kChunk = 1 << 20;
  f.zs.next_out = reinterpret_cast<Bytef*>(buf);
  f.zs.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
  while (f.zs.avail_out > 0 && !f.done) {
    if (f.zs.avail_in == 0 && f.consumed < entry_.compressed_size) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(kChunk, entry_.compressed_size - f.consumed));
      f.in.resize(take);
      src_.Read(entry_.data_offset + f.consumed, f.in.data(), take);
      f.consumed += take;
      f.zs.next_in = reinterpret_cast<Bytef*>(f.in.data());
      f.zs.avail_in = static_cast<uInt>(take);
    }
    int rc = inflate(&f.zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      f.done = true;
    } else if (rc != Z_OK) {
      if (rc == Z_BUF_ERROR && f.zs.avail_in == 0 && f.consumed >= entry_.compressed_size) {
        throw Malformed(entry_.name + ": compressed data ends early");
      }
      throw Malformed(entry_.name + ": deflate data is corrupt" + (f.zs.msg ? std::string(" (") + f.zs.msg + ")" : ""));
    }
  }
  size_t have = static_cast<size_t>(reinterpret_cast<char*>(f.zs.next_out) - buf);
  produced_ += have;
  if (produced_ > entry_.uncompressed_size) {
    throw Malformed(entry_.name + ": record inflates past its declared size of " +
              std::to_string(entry_.uncompressed_size) + " bytes");
  }
  return have;
}

void RecordReader::ReadExactly(char* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    size_t got = Read(buf + done, n - done);
    if (got == 0) throw Malformed(entry_.name + ": record ends after " + std::to_string(produced_) + " bytes");
    done += got;
  }
}

void RecordReader::Skip(uint64_t n) {
  if (!inflater_) {
    if (n > entry_.compressed_size - produced_) {
      throw Malformed(entry_.name + ": record ends after " + std::to_string(entry_.compressed_size) + " bytes");
    }
    produced_ += n;
    return;
  }
  std::string scratch(static_cast<size_t>(std::min<uint64_t>(n, 1 << 16)), '\0');
  while (n > 0) {
    size_t take = static_cast<size_t>(std::min<uint64_t>(n, scratch.size()));
    ReadExactly(scratch.data(), take);
    n -= take;
  }
}

}  // namespace tsctl
