#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "test_util.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/zip.h"
#include "tsctl/zip_writer.h"

using namespace tsctl;

TEST_CASE("zip: layout of a PyTorch archive", "[zip]") {
  auto src = MakeMemorySource(test::Slurp(test::TestData("traced_cnn.pt")));
  ZipLayout layout = ReadZipLayout(*src);
  REQUIRE(!layout.entries.empty());
  for (const ZipEntry& e : layout.entries) {
    INFO(e.name);
    CHECK(e.local_header_error.empty());
    CHECK(e.data_offset % 64 == 0);  // PyTorch pads every record to 64 bytes
    CHECK(e.data_end() <= layout.central_directory_offset);
    std::string content = ReadEntry(*src, e);  // checks the CRC
    CHECK(content.size() == e.uncompressed_size);
  }
}

TEST_CASE("zip: truncation at any offset is a format error, never a crash", "[zip]") {
  const std::string bytes = test::Slurp(test::TestData("with_extra.pt"));
  for (size_t n = 0; n < bytes.size(); n += 7) {
    auto src = MakeMemorySource(bytes.substr(0, n));
    try {
      ZipLayout layout = ReadZipLayout(*src);
      for (const ZipEntry& e : layout.entries) {
        try {
          ReadEntry(*src, e);
        } catch (const Error& err) {
          CHECK(err.kind() == ErrorKind::kFormat);
        }
      }
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::kFormat);
    }
  }
}

TEST_CASE("zip: a flipped byte in a record fails its CRC", "[zip]") {
  auto src = MakeMemorySource(test::Slurp(test::TestData("bad/crc_mismatch.pt")));
  ZipLayout layout = ReadZipLayout(*src);
  int failures = 0;
  for (const ZipEntry& e : layout.entries) {
    try {
      ReadEntry(*src, e);
    } catch (const Error& err) {
      CHECK(std::string(err.what()).find("CRC") != std::string::npos);
      ++failures;
    }
  }
  CHECK(failures == 1);
}

TEST_CASE("zip: the declared size limit guards against bombs", "[zip]") {
  auto src = MakeMemorySource(test::Slurp(test::TestData("traced_cnn.pt")));
  ZipLayout layout = ReadZipLayout(*src);
  for (const ZipEntry& e : layout.entries) {
    if (e.method == kZipDeflated && e.uncompressed_size > 100) {
      CHECK_THROWS_AS(StreamEntry(*src, e, 10), Error);
      return;
    }
  }
  FAIL("no deflated record in traced_cnn.pt");
}

TEST_CASE("archive: non-archives are named for what they are", "[archive]") {
  struct Case {
    const char* file;
    const char* says;
  };
  const Case cases[] = {
      {"bad/empty.pt", "empty file"},
      {"bad/not_zip.pt", "a text file"},
      {"../README.md", "a text file"},  // Markdown, with Python in ``` blocks
      {"bad/python_source.ptl", "Python source"},
      {"bad/checkpoint.pth", "torch.save checkpoint"},
      {"bad/truncated.pt", "truncated"},
      {"bad/missing_data_pkl.pt", "data.pkl record is missing"},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    try {
      Archive::Open(OpenFileSource(test::TestData(c.file)));
      FAIL("opened");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kFormat);
      CHECK(std::string(e.what()).find(c.says) != std::string::npos);
    }
  }
}

TEST_CASE("archive: a missing file is an I/O error", "[archive]") {
  try {
    OpenFileSource(test::TestData("does-not-exist.pt"));
    FAIL("opened");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kIo);
  }
}

TEST_CASE("archive: root folder differs from the file name", "[archive]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("renamed_root.pt")));
  CHECK(a.root() == "original_name");
  CHECK(a.Has("data.pkl"));
}

TEST_CASE("archive: record queries, with a duplicated name and a record outside the root", "[archive]") {
  ZipWriter w(0);
  w.WriteRecord("m/data.pkl", std::string("\x80\x02.", 3));
  w.WriteRecord("m/code/a.py", "first");
  w.WriteRecord("m/extra/b.txt", "b");
  w.WriteRecord("m/code/a.py", "second");
  w.WriteRecord("code/out.py", "outside");
  ZipTail t = w.WriteEndOfFile(false, "");
  std::string bytes = t.records;
  bytes.append(t.central_offset - t.records_offset - t.records.size(), '\0');
  bytes += t.central + t.end;
  Archive a = Archive::Open(MakeMemorySource(bytes));
  REQUIRE(a.root() == "m");
  // Every entry, as getAllRecords: both copies, the outsider under its full name.
  CHECK(a.AllRecords() == std::vector<std::string>{"data.pkl", "code/a.py", "extra/b.txt", "code/a.py", "code/out.py"});
  // What Find reaches: a.py once, where its last copy is; not the outsider.
  CHECK(a.Records() == std::vector<std::string>{"data.pkl", "extra/b.txt", "code/a.py"});
  CHECK(a.RecordsUnder("code/") == std::vector<std::string>{"code/a.py"});
  CHECK(a.RecordsUnder("extra/") == std::vector<std::string>{"extra/b.txt"});
  CHECK(a.RecordsUnder("libs/").empty());
  CHECK(a.Find("code/a.py") == &a.layout().entries[3]);
  CHECK(a.Read("code/a.py") == "second");
  CHECK(!a.Has("code/out.py"));
  CHECK(a.HasRecordsUnder("code/"));
  CHECK(!a.HasRecordsUnder("libs/"));
}

TEST_CASE("archive: records outside the root keep their names", "[archive]") {
  Archive a = Archive::Open(OpenFileSource(test::TestData("bad/path_traversal.pt")));
  CHECK(a.kind() == ArchiveKind::kTorchScript);
  const std::vector<std::string>& names = a.AllRecords();
  CHECK(std::find(names.begin(), names.end(), "../evil.txt") != names.end());
}
