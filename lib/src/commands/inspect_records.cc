// inspect's record table (every ZIP entry, CRCs checked) and the format facts
// read from the small records: version, byteorder, serialization id,
// bytecode.pkl.
#include <algorithm>
#include <set>
#include <string>

#include "inspect_internal.h"
#include "tsctl/error.h"
#include "tsctl/pickle.h"

namespace tsctl::inspect_internal {

void ReadRecords(const Archive& a, const InspectOptions& options, ArchiveInfo& info) {
  const ByteSource& src = a.source();
  // Records, with CRCs checked for everything except tensor data. One row
  // per ZIP entry with its offsets (every copy of a duplicated name, entries
  // outside the root folder too): the raw entries, not Archive's queries.
  std::set<std::string> seen;
  for (const ZipEntry& e : a.layout().entries) {
    RecordInfo r;
    r.name = a.RecordName(e);
    r.header_offset = e.local_header_offset;
    r.data_offset = e.data_offset;
    r.size = e.uncompressed_size;
    r.compressed_size = e.compressed_size;
    r.method = e.method;
    r.crc32 = e.crc32;
    r.aligned = e.local_header_error.empty() && e.data_offset % 64 == 0;
    r.error = e.local_header_error;
    if (!seen.insert(r.name).second) info.warnings.push_back("duplicate record name: " + r.name);
    if (!e.name.empty() && (e.name[0] == '/' || e.name.find("..") != std::string::npos || e.name.find('\\') != std::string::npos)) {
      info.warnings.push_back("record name escapes the archive: " + e.name);
    }
    bool tensor_data = r.name.rfind("data/", 0) == 0 || r.name.rfind("tensors/", 0) == 0 ||
                       r.name.rfind("constants/", 0) == 0;
    // A duplicated name reads as its last copy; the others are not inflated
    // (thousands of copies of one deflate bomb would take minutes).
    const ZipEntry* last = a.Find(r.name);
    bool shadowed = last != nullptr && last != &e;
    if (shadowed) {
      r.crc_status = "skipped";
    } else if (r.error.empty() && (options.verify_crc || !tensor_data)) {
      try {
        StreamResult s = StreamEntry(src, e, std::max<uint64_t>(e.uncompressed_size, 1));
        r.crc_status = (s.crc32 == e.crc32 && s.produced == e.uncompressed_size) ? "ok" : "mismatch";
        if (r.crc_status == "mismatch") info.warnings.push_back("CRC-32 mismatch in record " + r.name);
      } catch (const Error& err) {
        r.crc_status = "error";
        r.error = err.what();
      }
    } else if (!r.error.empty()) {
      r.crc_status = "error";
      info.warnings.push_back("record " + r.name + ": " + r.error);
    }
    if (r.name.rfind("traced_inputs/", 0) == 0) info.format.traced_inputs = true;
    if (tensor_data) info.storage_bytes += r.size;
    info.records.push_back(std::move(r));
  }
}

void ReadFormat(const Archive& a, ArchiveInfo& info) {
  FormatInfo& f = info.format;
  for (const char* rec : {".data/version", "version"}) {
    if (!a.Has(rec)) continue;
    f.version_record = rec;
    try {
      std::string s = a.Read(rec, 64);
      f.version = std::stoll(s);
    } catch (const std::exception& e) {
      info.warnings.push_back(std::string("cannot read the ") + rec + " record: " + e.what());
    }
    break;
  }
  if (a.Has("byteorder")) {
    try { f.byteorder = a.Read("byteorder", 64); } catch (const std::exception& e) { info.warnings.push_back(std::string("byteorder: ") + e.what()); }
  }
  if (a.Has(".data/serialization_id")) {
    try { f.serialization_id = a.Read(".data/serialization_id", 256); } catch (const std::exception& e) { info.warnings.push_back(std::string("serialization_id: ") + e.what()); }
  }
  f.has_constants_pkl = a.Has("constants.pkl");
  f.has_bytecode = a.Has("bytecode.pkl");
  f.legacy = a.kind() == ArchiveKind::kTorchScriptLegacy;
  if (f.has_bytecode) {
    try {
      PyRef bc = ParsePickle(a.Read("bytecode.pkl"));
      if (bc->kind == PyKind::kTuple) {
        for (const PyRef& item : bc->items) {
          if (item->kind == PyKind::kInt && !f.bytecode_version) f.bytecode_version = item->integer;
          if (item->kind == PyKind::kTuple && !item->items.empty() && item->items[0]->kind == PyKind::kString) {
            f.bytecode_methods.push_back(item->items[0]->str);
          }
        }
      }
    } catch (const std::exception& e) {
      info.warnings.push_back(std::string("bytecode.pkl: ") + e.what());
    }
  }
}

}  // namespace tsctl::inspect_internal
