#include "tsctl/zip_writer.h"

#include "tsctl/zip.h"
#include "zip_format.h"

namespace tsctl {
namespace {

using namespace zip_format;  // record signatures
constexpr uint64_t kMax32 = 0xFFFFFFFFu;

void Put16(std::string& s, uint64_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>((v >> 8) & 0xff));
}
void Put32(std::string& s, uint64_t v) {
  Put16(s, v & 0xffff);
  Put16(s, (v >> 16) & 0xffff);
}
void Put64(std::string& s, uint64_t v) {
  Put32(s, v & kMax32);
  Put32(s, v >> 32);
}

}  // namespace

bool ZipNeedsZip64(uint64_t count, uint64_t cd_offset, uint64_t cd_size, bool zip64) {
  return zip64 || count >= 0xFFFF || cd_offset >= kMax32 || cd_size >= kMax32;
}

std::string ZipEndRecords(uint64_t count, uint64_t cd_offset, uint64_t cd_size, bool zip64,
                          const std::string& comment) {
  std::string t;
  zip64 = ZipNeedsZip64(count, cd_offset, cd_size, zip64);
  if (zip64) {
    const uint64_t z64_offset = cd_offset + cd_size;
    Put32(t, kZip64EocdSig);
    Put64(t, 44);  // size of the record after this field
    Put16(t, 45);
    Put16(t, 45);
    Put32(t, 0);
    Put32(t, 0);
    Put64(t, count);
    Put64(t, count);
    Put64(t, cd_size);
    Put64(t, cd_offset);
    Put32(t, kZip64LocatorSig);
    Put32(t, 0);
    Put64(t, z64_offset);
    Put32(t, 1);
  }
  Put32(t, kEocdSig);
  Put16(t, 0);
  Put16(t, 0);
  Put16(t, zip64 ? 0xFFFF : count);
  Put16(t, zip64 ? 0xFFFF : count);
  Put32(t, zip64 ? kMax32 : cd_size);
  Put32(t, zip64 ? kMax32 : cd_offset);
  Put16(t, comment.size());
  t += comment;
  return t;
}

void ZipWriter::WriteRecord(const std::string& name, const std::string& data) {
  const uint64_t offset = base_ + records_.size();
  const uint32_t crc = Crc32(data.data(), data.size());
  const bool big_size = data.size() >= kMax32;
  const bool big_offset = offset >= kMax32;

  // Local header: sizes in a ZIP64 field when they do not fit, then "FB"
  // padding up to the alignment boundary.
  std::string extra;
  if (big_size) {
    Put16(extra, 0x0001);
    Put16(extra, 16);
    Put64(extra, data.size());
    Put64(extra, data.size());
  }
  const uint64_t unpadded = offset + 30 + name.size() + extra.size() + 4;
  const uint64_t pad = (kZipAlignment - unpadded % kZipAlignment) % kZipAlignment;
  Put16(extra, 0x4246);  // "FB"
  Put16(extra, pad);
  extra.append(pad, 'Z');
  Put32(records_, kLocalSig);
  Put16(records_, big_size ? 45 : 20);
  Put16(records_, 0x0800);  // UTF-8 names
  Put16(records_, kZipStored);
  Put16(records_, 0);  // time and date as PyTorch writes them
  Put16(records_, 0);
  Put32(records_, crc);
  Put32(records_, big_size ? kMax32 : data.size());
  Put32(records_, big_size ? kMax32 : data.size());
  Put16(records_, name.size());
  Put16(records_, extra.size());
  records_ += name;
  records_ += extra;
  records_ += data;

  std::string cextra;
  if (big_size || big_offset) {
    Put16(cextra, 0x0001);
    Put16(cextra, (big_size ? 16 : 0) + (big_offset ? 8 : 0));
    if (big_size) {
      Put64(cextra, data.size());
      Put64(cextra, data.size());
    }
    if (big_offset) Put64(cextra, offset);
  }
  const bool z64 = big_size || big_offset;
  std::string c;
  Put32(c, kCentralSig);
  Put16(c, z64 ? 45 : 20);  // made by
  Put16(c, z64 ? 45 : 20);  // needed
  Put16(c, 0x0800);
  Put16(c, kZipStored);
  Put16(c, 0);
  Put16(c, 0);
  Put32(c, crc);
  Put32(c, big_size ? kMax32 : data.size());
  Put32(c, big_size ? kMax32 : data.size());
  Put16(c, name.size());
  Put16(c, cextra.size());
  Put16(c, 0);  // comment
  Put16(c, 0);  // disk
  Put16(c, 0);  // internal attributes
  Put32(c, 0);  // external attributes
  Put32(c, big_offset ? kMax32 : offset);
  c += name;
  c += cextra;
  new_central_.push_back(std::move(c));
}

void ZipWriter::KeepRecord(const std::string& central_record) {
  kept_central_ += central_record;
  ++kept_count_;
}

ZipTail ZipWriter::WriteEndOfFile(bool zip64, const std::string& comment) const {
  ZipTail t;
  t.records_offset = base_;
  t.records = records_;
  t.central_offset = base_ + records_.size() + pad_;
  t.central = kept_central_;
  for (const std::string& c : new_central_) t.central += c;
  t.end_offset = t.central_offset + t.central.size();
  t.end = ZipEndRecords(record_count(), t.central_offset, t.central.size(), zip64, comment);
  return t;
}

}  // namespace tsctl
