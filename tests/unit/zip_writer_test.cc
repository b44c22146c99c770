// The ZIP writer, in memory: what it writes must read back through tsctl's
// reader and sit where every reader expects it.
#include <catch2/catch.hpp>

#include <string>

#include "tsctl/source.h"
#include "tsctl/zip.h"
#include "tsctl/zip_structure.h"
#include "tsctl/zip_writer.h"

using namespace tsctl;

namespace {

// A whole archive written from offset 0.
std::string Archive(ZipWriter& w, bool zip64 = false, const std::string& comment = "") {
  ZipTail t = w.WriteEndOfFile(zip64, comment);
  std::string out = t.records;
  out.append(t.central_offset - t.records_offset - t.records.size(), '\0');
  out += t.central;
  out += t.end;
  return out;
}

}  // namespace

TEST_CASE("zip writer: records read back, aligned, with their CRCs", "[zip_writer]") {
  ZipWriter w(0);
  w.WriteRecord("m/data.pkl", std::string("\x80\x02.", 3));
  w.WriteRecord("m/data/0", std::string(1000, 'x'));
  w.WriteRecord("m/extra/notes.txt", "");
  const std::string bytes = Archive(w, false, "a comment");
  auto src = MakeMemorySource(bytes, "mem");
  ZipLayout layout = ReadZipLayout(*src);
  REQUIRE(layout.entries.size() == 3);
  CHECK(layout.comment == "a comment");
  CHECK_FALSE(layout.zip64);
  for (const ZipEntry& e : layout.entries) {
    INFO(e.name);
    CHECK(e.local_header_error.empty());
    CHECK(e.data_offset % kZipAlignment == 0);
    CHECK(e.method == kZipStored);
  }
  CHECK(ReadEntry(*src, layout.entries[1]) == std::string(1000, 'x'));
  CHECK(ReadEntry(*src, layout.entries[2]).empty());
  // The end record sits right after the central directory: Python's zipfile
  // computes offsets from there.
  CHECK(layout.eocd_offset == layout.central_directory_offset + layout.central_directory_size);
}

TEST_CASE("zip writer: appending at an offset, kept records first", "[zip_writer]") {
  ZipWriter first(0);
  first.WriteRecord("a", "alpha");
  const std::string base = Archive(first);
  auto src = MakeMemorySource(base, "mem");
  ZipLayout old = ReadZipLayout(*src);

  ZipWriter w(base.size());
  w.KeepRecord(base.substr(old.entries[0].central_offset, old.entries[0].central_size));
  w.WriteRecord("b", "beta");
  w.Pad(100);
  ZipTail t = w.WriteEndOfFile(false, "");
  CHECK(t.records_offset == base.size());
  CHECK(t.central_offset == base.size() + t.records.size() + 100);
  CHECK(t.end_offset == t.central_offset + t.central.size());
  std::string bytes = base + t.records + std::string(100, '\0') + t.central + t.end;
  CHECK(bytes.size() == t.end_of_file());
  auto src2 = MakeMemorySource(bytes, "mem");
  ZipLayout layout = ReadZipLayout(*src2);
  REQUIRE(layout.entries.size() == 2);
  CHECK(layout.entries[0].name == "a");
  CHECK(layout.entries[0].local_header_offset == 0);
  CHECK(layout.entries[1].name == "b");
  CHECK(ReadEntry(*src2, layout.entries[1]) == "beta");
  CHECK(layout.entries[1].data_offset % kZipAlignment == 0);
}

TEST_CASE("zip writer: ZIP64 end records when asked or needed", "[zip_writer]") {
  ZipWriter w(0);
  w.WriteRecord("a", "alpha");
  const std::string bytes = Archive(w, true);
  auto src = MakeMemorySource(bytes, "mem");
  ZipLayout layout = ReadZipLayout(*src);
  CHECK(layout.zip64);
  CHECK(layout.trailer_offset == layout.central_directory_offset + layout.central_directory_size);
  CHECK(ReadEntry(*src, layout.entries[0]) == "alpha");
  CHECK(ZipNeedsZip64(0xFFFF, 0, 0, false));
  CHECK(ZipNeedsZip64(1, 0xFFFFFFFFull, 0, false));
  CHECK_FALSE(ZipNeedsZip64(1, 100, 100, false));
  // 56-byte ZIP64 record + 20-byte locator + 22-byte end record.
  CHECK(ZipEndRecords(1, 0, 0, true, "").size() == 98);
}

TEST_CASE("zip writer: damaged local headers are refused by RequireSoundStructure", "[zip_writer]") {
  ZipWriter w(0);
  w.WriteRecord("a", "alpha");
  w.WriteRecord("b", "beta");
  std::string bytes = Archive(w);
  CHECK_NOTHROW(RequireSoundStructure(ReadZipLayout(*MakeMemorySource(bytes, "mem"))));
  bytes[0] = 'X';  // the first local header's signature
  ZipLayout layout = ReadZipLayout(*MakeMemorySource(bytes, "mem"));
  CHECK_THROWS_WITH(RequireSoundStructure(layout), Catch::Contains("damaged ZIP structure: a: no local header signature"));
}
