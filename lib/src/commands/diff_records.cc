// The records section of `tsctl diff`: every ZIP entry of the two archives,
// matched by name and compared by size, CRC-32, compression and alignment;
// and Side, the index of an archive's records that every section reads.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "diff_internal.h"
#include "tsctl/error.h"
#include "tsctl/record_reader.h"

namespace tsctl::diff_internal {
namespace {

// Which section compares a record's contents ("" for none).
std::string CoveredBy(const std::string& name) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  auto ends = [&](const char* s) {
    size_t n = std::char_traits<char>::length(s);
    return name.size() >= n && name.compare(name.size() - n, n, s) == 0;
  };
  if (name == "data.pkl" || name == "model.json" || name == "attributes.pkl") return "modules";
  if (name == "constants.pkl" || starts("constants/")) return "constants";
  // .pt2: sample inputs and AOTInductor code are compared by no section.
  if (starts("data/sample_inputs/") || starts("data/aotinductor/")) return "";
  if (starts("data/") || starts("tensors/")) return "parameters";
  if (starts("extra/")) return "extra";
  if ((starts("code/") || starts("libs/")) && (ends(".py") || ends(".debug_pkl"))) return "code";
  if (name == "bytecode.pkl" || ends(".debug_pkl")) return "code";
  if (name == "version" || name == ".data/version" || name == "byteorder") return "format";
  // .pt2: the program JSON (its graph and signature), archive_format/version.
  if (starts("models/") || name == "serialized_exported_program.json") return "code";
  if (name == "archive_format" || name == "archive_version") return "format";
  if (name == ".data/serialization_id") return "none (a random id per save)";
  return "";
}

std::string CompressionName(uint16_t m) {
  return m == kZipStored ? "stored" : m == kZipDeflated ? "deflate" : "method " + std::to_string(m);
}

bool Aligned(const ZipEntry& e) { return e.local_header_error.empty() && e.data_offset % 64 == 0; }

}  // namespace

std::string Crc32Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

void DiffRecords(const Side& a, const Side& b, const DiffOptions& options, DiffResult& r) {
  auto names = [](const Side& s) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const std::string& n : s.archive.AllRecords()) {
      if (seen.insert(n).second) out.push_back(n);
    }
    return out;
  };
  for (const std::string& n : names(a)) {
    const ZipEntry* x = a.Find(n);
    const ZipEntry* y = b.Find(n);
    RecordChange c{n, ChangeKind::kChanged, {}, CoveredBy(n), true};
    if (!y) {
      c.kind = ChangeKind::kRemoved;
      c.counts = c.covered_by.empty();
      r.records.push_back(std::move(c));
      continue;
    }
    bool content = false, layout = false;
    if (x->uncompressed_size != y->uncompressed_size) {
      c.fields.push_back({"size", std::to_string(x->uncompressed_size), std::to_string(y->uncompressed_size)});
      content = true;
    }
    if (x->crc32 != y->crc32) {
      c.fields.push_back({"crc32", Crc32Hex(x->crc32), Crc32Hex(y->crc32)});
      content = true;
    }
    if (!content && options.exact) {
      try {
        if (!RecordsEqual(a, *x, b, *y)) {
          c.fields.push_back({"bytes", "", "differ (same size and CRC-32)"});
          content = true;
        }
      } catch (const Error& e) {
        r.warnings.push_back("record " + n + ": " + e.what());
      }
    }
    if (x->method != y->method) {
      c.fields.push_back({"compression", CompressionName(x->method), CompressionName(y->method)});
      layout = true;
    }
    if (Aligned(*x) != Aligned(*y)) {
      c.fields.push_back({"aligned", Aligned(*x) ? "yes" : "no", Aligned(*y) ? "yes" : "no"});
      layout = true;
    }
    if (!content && !layout) continue;
    c.counts = layout || c.covered_by.empty();
    r.records.push_back(std::move(c));
  }
  for (const std::string& n : names(b)) {
    if (a.Find(n)) continue;
    std::string covered = CoveredBy(n);
    r.records.push_back({n, ChangeKind::kAdded, {}, covered, covered.empty()});
  }
}

Side::Side(const Archive& a) : archive(a) {
  const std::vector<std::string>& names = a.AllRecords();  // names[i] names entries[i]
  for (size_t i = 0; i < names.size(); ++i) records[names[i]] = &a.layout().entries[i];
}

const ZipEntry* Side::Find(const std::string& record) const {
  // What LibTorch reads under that name (names equal but for case included);
  // the index only for entries LibTorch never reaches (outside the root).
  if (const ZipEntry* e = archive.Find(record)) return e;
  auto it = records.find(record);
  return it == records.end() ? nullptr : it->second;
}

bool RecordsEqual(const Side& a, const ZipEntry& x, const Side& b, const ZipEntry& y) {
  if (x.uncompressed_size != y.uncompressed_size) return false;
  RecordReader ra(a.archive.source(), x), rb(b.archive.source(), y);
  std::string ba(1 << 20, '\0'), bb(1 << 20, '\0');
  for (uint64_t done = 0; done < x.uncompressed_size;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(ba.size(), x.uncompressed_size - done));
    ra.ReadExactly(ba.data(), n);
    rb.ReadExactly(bb.data(), n);
    if (std::memcmp(ba.data(), bb.data(), n) != 0) return false;
    done += n;
  }
  return true;
}

}  // namespace tsctl::diff_internal
