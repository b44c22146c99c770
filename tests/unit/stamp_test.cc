#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../../lib/src/render/render_json.h"
#include "../../lib/src/text/json_util.h"
#include "test_util.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/stamp.h"

using namespace tsctl;
namespace fs = std::filesystem;

namespace {

// A scratch copy of a testdata archive, removed at the end of the test.
struct Scratch {
  fs::path dir;
  fs::path file;
  explicit Scratch(const std::string& name) {
    char tmpl[] = "/tmp/tsctl-stamp-XXXXXX";
    dir = ::mkdtemp(tmpl);
    file = dir / fs::path(name).filename();
    fs::copy_file(test::TestData(name), file);
  }
  ~Scratch() { fs::remove_all(dir); }
};

// Raw bytes of each record (local header through data) keyed by name.
std::map<std::string, std::pair<uint64_t, std::string>> RawRecords(const std::string& path) {
  Archive a = Archive::Open(OpenFileSource(path));
  std::map<std::string, std::pair<uint64_t, std::string>> out;
  for (const ZipEntry& e : a.layout().entries) {
    out[a.RecordName(e)] = {e.local_header_offset,
                            a.source().ReadString(e.local_header_offset, e.data_end() - e.local_header_offset)};
  }
  return out;
}

// Opens with libzip's consistency checks and reads every record; returns
// name -> content. An independent reader of what tsctl wrote.
std::map<std::string, std::string> ReadWithLibzip(const std::string& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err);
  REQUIRE(z != nullptr);
  std::map<std::string, std::string> out;
  zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    REQUIRE(zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) == 0);
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    REQUIRE(f != nullptr);
    std::string data(st.size, '\0');
    CHECK(zip_fread(f, data.data(), st.size) == static_cast<zip_int64_t>(st.size));
    char extra;
    CHECK(zip_fread(f, &extra, 1) == 0);  // end reached: libzip has checked the CRC
    zip_fclose(f);
    out[st.name] = data;
  }
  zip_close(z);
  return out;
}

std::string FileBytes(const fs::path& p) { return test::Slurp(p.string()); }

}  // namespace

TEST_CASE("stamp: other records keep their bytes and offsets", "[stamp]") {
  Scratch s("traced_cnn.pt");
  auto before = RawRecords(s.file);
  StampOptions o;
  o.set = {{"model.epochs", "10"}, {"owner", "alice"}};
  o.files = {{"notes/readme.txt", "hello"}};
  StampResult r = Stamp(s.file, o);
  CHECK(r.actions.size() == 2);
  auto after = RawRecords(s.file);
  for (const auto& [name, rec] : before) {
    INFO(name);
    REQUIRE(after.count(name));
    CHECK(after[name].first == rec.first);
    CHECK(after[name].second == rec.second);
  }
  Archive a = Archive::Open(OpenFileSource(s.file));
  for (const ZipEntry& e : a.layout().entries) {
    INFO(e.name);
    CHECK(e.data_offset % 64 == 0);
    CHECK_NOTHROW(ReadEntry(a.source(), e));
  }
  auto producer = nlohmann::json::parse(a.Read("extra/producer_info.json"));
  CHECK(producer["model"]["epochs"] == 10);
  CHECK(producer["owner"] == "alice");
  CHECK(producer.contains("tsctl_version"));
  CHECK(producer.contains("time"));
  CHECK(a.Read("extra/notes/readme.txt") == "hello");
  auto libzip = ReadWithLibzip(s.file);
  CHECK(libzip.at("traced_cnn/extra/notes/readme.txt") == "hello");
}

TEST_CASE("stamp: merge, replace, remove, repeat", "[stamp]") {
  Scratch s("with_extra.pt");
  StampOptions o;
  o.auto_fields = false;
  o.set = {{"stage", "\"train\""}};
  Stamp(s.file, o);
  Archive a = Archive::Open(OpenFileSource(s.file));
  auto merged = nlohmann::json::parse(a.Read("extra/producer_info.json"));
  CHECK(merged["stage"] == "train");
  CHECK(merged.size() > 1);  // the fields that were there before survive
  StampOptions r;
  r.auto_fields = false;
  r.replace = true;
  r.set = {{"only", "1"}};
  r.remove = {"blob.bin"};
  Stamp(s.file, r);
  r.remove.clear();
  for (int i = 0; i < 5; ++i) Stamp(s.file, r);
  Archive b = Archive::Open(OpenFileSource(s.file));
  CHECK(nlohmann::json::parse(b.Read("extra/producer_info.json")) == nlohmann::json{{"only", 1}});
  CHECK_FALSE(b.Has("extra/blob.bin"));
  CHECK(b.Read("extra/notes.txt").size() > 0);
  ReadWithLibzip(s.file);
}

TEST_CASE("stamp: --output leaves the original alone and keeps its mode", "[stamp]") {
  Scratch s("with_extra.pt");
  ::chmod(s.file.c_str(), 0640);
  std::string original = FileBytes(s.file);
  StampOptions o;
  o.output = (s.dir / "out.pt").string();
  Stamp(s.file, o);
  CHECK(FileBytes(s.file) == original);
  struct stat st {};
  REQUIRE(::stat(o.output.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  ReadWithLibzip(o.output);
  CHECK(fs::directory_iterator(s.dir) != fs::directory_iterator());
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(s.dir)) files += e.is_regular_file();
  CHECK(files == 2);  // no temporary left beside it
}

TEST_CASE("stamp: in place keeps the file mode", "[stamp]") {
  Scratch s("with_extra.pt");
  ::chmod(s.file.c_str(), 0604);
  Stamp(s.file, StampOptions{});
  struct stat st {};
  REQUIRE(::stat(s.file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0604);
}

TEST_CASE("stamp: --output over an existing file keeps that file's mode", "[stamp]") {
  Scratch s("with_extra.pt");
  StampOptions o;
  o.output = (s.dir / "out.pt").string();
  { std::ofstream(o.output) << "old"; }
  ::chmod(o.output.c_str(), 0600);  // a private file stays private
  Stamp(s.file, o);
  struct stat st {};
  REQUIRE(::stat(o.output.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  ReadWithLibzip(o.output);
}

TEST_CASE("stamp: bad input leaves the archive untouched", "[stamp]") {
  Scratch s("with_extra.pt");
  const std::string original = FileBytes(s.file);
  auto expect = [&](StampOptions o, ErrorKind kind) {
    try {
      Stamp(s.file, o);
      FAIL("stamp succeeded");
    } catch (const Error& e) {
      CHECK(e.kind() == kind);
    }
    CHECK(FileBytes(s.file) == original);
  };
  for (const char* name : {"../x", "/etc/passwd", "a/../../x", "a\\b", "", "a//b", "./x"}) {
    INFO(name);
    StampOptions o;
    o.files = {{name, "x"}};
    expect(o, ErrorKind::kUsage);
  }
  StampOptions bad_meta;
  bad_meta.has_meta = true;
  bad_meta.meta_json = "{not json";
  expect(bad_meta, ErrorKind::kUsage);
  StampOptions missing;
  missing.remove = {"nope.txt"};
  expect(missing, ErrorKind::kUsage);
  ::chmod(s.file.c_str(), 0444);
  expect(StampOptions{}, ErrorKind::kIo);
}

TEST_CASE("stamp: non-archives and missing files are refused", "[stamp]") {
  Scratch s("bad/checkpoint.pth");
  const std::string original = FileBytes(s.file);
  CHECK_THROWS_AS(Stamp(s.file, StampOptions{}), Error);
  CHECK(FileBytes(s.file) == original);
  try {
    Stamp((s.dir / "missing.pt").string(), StampOptions{});
    FAIL("stamped a missing file");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kIo);
  }
}

TEST_CASE("stamp: dry run writes nothing", "[stamp]") {
  Scratch s("traced_cnn.pt");
  const std::string original = FileBytes(s.file);
  StampOptions o;
  o.dry_run = true;
  o.set = {{"a", "b"}};
  StampResult r = Stamp(s.file, o);
  CHECK(r.actions.size() == 1);
  CHECK(r.actions[0].action == "add");
  CHECK(FileBytes(s.file) == original);
}

TEST_CASE("stamp: a damaged local header is refused and nothing is written", "[stamp]") {
  Scratch s("bad/damaged_local_header.pt");
  const std::string original = FileBytes(s.file);
  for (bool dry_run : {false, true}) {
    StampOptions o;
    o.dry_run = dry_run;
    o.set = {{"a", "1"}};
    try {
      Stamp(s.file, o);
      FAIL("stamped an archive with a damaged local header");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kFormat);
      CHECK_THAT(e.what(), Catch::Contains("damaged ZIP structure"));
    }
    o.output = (s.dir / "out.pt").string();
    CHECK_THROWS_AS(Stamp(s.file, o), Error);
    CHECK_FALSE(fs::exists(s.dir / "out.pt"));
  }
  CHECK(FileBytes(s.file) == original);
}

TEST_CASE("stamp: no end record of the old version stays valid", "[stamp]") {
  // libzip tries every end record near the end of the file and keeps the one
  // whose records span the most bytes: after a removal the old end record
  // would win if it were left valid.
  Scratch s("with_extra.pt");
  StampOptions o;
  o.auto_fields = false;
  o.remove = {"notes.txt"};
  Stamp(s.file, o);
  int err = 0;
  zip_t* z = zip_open(s.file.c_str(), ZIP_RDONLY, &err);
  REQUIRE(z != nullptr);
  CHECK(zip_name_locate(z, "with_extra/extra/notes.txt", 0) < 0);
  CHECK(zip_name_locate(z, "with_extra/extra/blob.bin", 0) >= 0);
  zip_close(z);
  // Python's rule: the last end records (ZIP64 ones first, as PyTorch
  // writes) sit right after the central directory they declare.
  Archive a = Archive::Open(OpenFileSource(s.file));
  CHECK(a.layout().trailer_offset == a.layout().central_directory_offset + a.layout().central_directory_size);
  CHECK(a.layout().eocd_offset == a.layout().trailer_offset + (a.layout().zip64 ? 76 : 0));
  CHECK_FALSE(a.Has("extra/notes.txt"));
}

TEST_CASE("stamp: repair on an archive that needs none changes nothing", "[stamp]") {
  Scratch s("with_extra.pt");
  const std::string original = FileBytes(s.file);
  StampOptions o;
  o.repair = true;
  StampResult r = Stamp(s.file, o);
  CHECK_FALSE(r.repaired);
  CHECK(r.actions.empty());
  CHECK(FileBytes(s.file) == original);
}

TEST_CASE("stamp: the renderers of a result", "[stamp]") {
  StampResult r;
  r.path = r.output = "m.pt";
  r.dry_run = true;
  r.actions = {{"extra/a.json", "replace", 2048, 3072}, {"extra/b.txt", "add", 0, 12}, {"extra/c", "remove", 5, 0}};
  Json(r.producer) = {{"owner", "alice"}};
  std::ostringstream text;
  RenderText(r, text);
  CHECK(text.str() ==
        "would stamp m.pt\n"
        "  replace extra/a.json (2.00 KiB -> 3.00 KiB)\n"
        "  add extra/b.txt (12 B)\n"
        "  remove extra/c\n"
        "    | {\n"
        "    |   \"owner\": \"alice\"\n"
        "    | }\n");
  std::ostringstream repair;
  RenderText(r, repair, /*repair_only=*/true);
  CHECK(repair.str() == "m.pt: no interrupted stamp to undo\n");
  nlohmann::json j = ToJson(r);
  CHECK(j["schema_version"] == kStampSchemaVersion);
  CHECK(j["actions"].size() == 3);
  CHECK(j["actions"][0]["old_size"] == 2048);
  CHECK(j["producer"]["owner"] == "alice");
}
