// One view of an archive, LibTorch's: the root folder, name lookup and end
// record as PyTorchStreamReader over miniz resolves them, and the places where
// other readers could see something else (Archive::Ambiguities). The expected
// picks among names equal but for case come from miniz's algorithm, checked
// against torch.jit.load (tests/zip/reader_differential_test.py).
#include <catch2/catch.hpp>

#include <algorithm>
#include <dirent.h>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"
#include "tsctl/archive.h"
#include "tsctl/error.h"
#include "tsctl/zip.h"
#include "tsctl/zip_writer.h"

using namespace tsctl;

namespace {

using Records = std::vector<std::pair<std::string, std::string>>;

std::string Zip(const Records& records, const std::string& comment = "") {
  ZipWriter w(0);
  for (const auto& [name, data] : records) w.WriteRecord(name, data);
  ZipTail t = w.WriteEndOfFile(false, comment);
  std::string bytes = t.records;
  bytes.append(t.central_offset - t.records_offset - t.records.size(), '\0');
  return bytes + t.central + t.end;
}

const std::string kPickle("\x80\x02.", 3);

Records Model(const std::string& root, const std::string& code) {
  return {{root + "/data.pkl", kPickle}, {root + "/code/__torch__.py", code}, {root + "/constants.pkl", kPickle},
          {root + "/version", "3\n"}};
}

bool Mentions(const Archive& a, const std::string& what) {
  for (const std::string& s : a.Ambiguities()) {
    if (s.find(what) != std::string::npos) return true;
  }
  return false;
}

std::string HostileFile(const std::string& name) {
  return test::Slurp(test::TestData("../tests/fuzz/regression/hostile/" + name));
}

}  // namespace

TEST_CASE("reader view: an archive as PyTorch writes it is unambiguous", "[view]") {
  Archive a = Archive::Open(MakeMemorySource(Zip(Model("m", "benign"))));
  CHECK(a.root() == "m");
  CHECK(a.Ambiguities().empty());
}

TEST_CASE("reader view: every generated test archive is unambiguous", "[view]") {
  DIR* dir = ::opendir(TSCTL_TESTDATA);
  REQUIRE(dir != nullptr);
  size_t n = 0;
  while (dirent* d = ::readdir(dir)) {
    std::string name = d->d_name;
    if (name.size() < 4 || name.compare(name.size() - 3, 3, ".pt") != 0) continue;
    try {
      Archive a = Archive::OpenAny(OpenFileSource(test::TestData(name)));
      INFO(name);
      CHECK(a.Ambiguities().empty());
      ++n;
    } catch (const Error&) {
      // not a ZIP archive: nothing to be ambiguous about
    }
  }
  ::closedir(dir);
  CHECK(n >= 5);
}

TEST_CASE("reader view: the root is the first entry's folder, as PyTorchStreamReader takes it", "[view]") {
  Records r = Model("evil", "evil");
  for (const auto& [name, data] : Model("a", "benign")) r.emplace_back(name, data);
  Archive a = Archive::Open(MakeMemorySource(Zip(r)));
  CHECK(a.root() == "evil");
  CHECK(a.Read("code/__torch__.py") == "evil");
  CHECK(Mentions(a, "4 entries outside the root folder 'evil/'"));
  CHECK(Mentions(a, "'a/data.pkl'"));
}

TEST_CASE("reader view: a first entry in no folder is named", "[view]") {
  Archive a = Archive::OpenAny(MakeMemorySource(Zip({{"data.pkl", kPickle}, {"m/version", "3"}})));
  CHECK(a.root().empty());
  CHECK(Mentions(a, "is in no folder: LibTorch refuses the archive"));
}

TEST_CASE("reader view: names are looked up without case, as miniz does", "[view]") {
  SECTION("two copies: miniz's heap sort and binary search reach the second, in either order") {
    for (bool upper_first : {false, true}) {
      Records r = {{"m/code/__torch__.py", "lower"}, {"m/CODE/__TORCH__.PY", "upper"}};
      if (upper_first) std::swap(r[0], r[1]);
      r.insert(r.begin(), {"m/data.pkl", kPickle});
      Archive a = Archive::Open(MakeMemorySource(Zip(r)));
      CHECK(a.Read("code/__torch__.py") == (upper_first ? "lower" : "upper"));
      CHECK(a.Read("CODE/__torch__.py") == a.Read("code/__torch__.py"));
      CHECK(Mentions(a, "names equal but for case: "));
      CHECK(Mentions(a, "LibTorch reads copy 2 of 2"));
      // Listed once, under the name of the copy LibTorch reads.
      CHECK(a.RecordsUnder("code/").size() == 1);
    }
  }
  SECTION("seven names: the picks miniz makes") {
    Records r = {{"m/a", "0"}, {"m/A", "1"}, {"m/b", "2"}, {"m/a", "3"}, {"m/Data.pkl", "4"}, {"m/data.pkl", "5"},
                 {"M/data.PKL", "6"}};
    Archive a = Archive::OpenAny(MakeMemorySource(Zip(r)));
    CHECK(a.Find("data.pkl") == &a.layout().entries[6]);
    CHECK(a.Find("a") == &a.layout().entries[1]);
    CHECK(a.Find("B") == &a.layout().entries[2]);
    CHECK(a.Find("c") == nullptr);
    CHECK(Mentions(a, "3 entries named 'm/a'") == false);  // 'm/A' differs in case
    CHECK(Mentions(a, "'m/a', 'm/A', 'm/a'"));
  }
  SECTION("exact duplicates are named as such") {
    Archive a = Archive::Open(MakeMemorySource(Zip({{"m/data.pkl", kPickle}, {"m/code/x.py", "1"}, {"m/code/x.py", "2"}})));
    CHECK(Mentions(a, "2 entries named 'm/code/x.py'"));
  }
}

TEST_CASE("reader view: the end record is the last one, as miniz takes it", "[view]") {
  const std::string first = Zip(Model("m", "benign"));
  SECTION("a comment that runs past the end of the file") {
    std::string bytes = first;
    bytes[bytes.size() - 2] = 1;  // declares a 1-byte comment that is not there
    ZipLayout layout = ReadZipLayout(*MakeMemorySource(bytes));
    CHECK(layout.comment_truncated);
    Archive a = Archive::Open(MakeMemorySource(bytes));
    CHECK(Mentions(a, "declares a comment that runs past the end of the file"));
  }
  SECTION("another well-formed end record before the last") {
    // [first archive][a second one whose offsets are absolute]: miniz reads
    // the second; libzip can pick the first.
    ZipWriter w(first.size());
    for (const auto& [name, data] : Model("m", "evil")) w.WriteRecord(name, data);
    ZipTail t = w.WriteEndOfFile(false, "");
    std::string bytes = first + t.records;
    bytes.append(t.central_offset - t.records_offset - t.records.size(), '\0');
    bytes += t.central + t.end;
    Archive a = Archive::Open(MakeMemorySource(bytes));
    CHECK(a.Read("code/__torch__.py") == "evil");
    CHECK(Mentions(a, "another end record at offset " + std::to_string(first.size() - 22)));
  }
  SECTION("a ZIP stored as a record near the end is not another end record") {
    // torch.save's reference in extra/ (stamped by --record-reference): its
    // end record lies in the last 64 KiB, its offsets are its own and point
    // into the large record before it, where no central header is.
    Records r = Model("m", "benign");
    r.emplace_back("m/extra/big.bin", std::string(70000, 'x'));
    r.emplace_back("m/extra/tsctl_reference.pt", Zip(Model("ref", "inner")));
    const std::string bytes = Zip(r);
    CHECK(ReadZipLayout(*MakeMemorySource(bytes)).other_end_records.empty());
    CHECK(Archive::Open(MakeMemorySource(bytes)).Ambiguities().empty());
  }
  SECTION("bytes after the end record") {
    Archive a = Archive::Open(MakeMemorySource(first + "tail"));
    CHECK(Mentions(a, "4 bytes after the end record"));
  }
  SECTION("bytes between the central directory and the end record (zipfile shifts offsets, miniz does not)") {
    std::string bytes = first;
    bytes.insert(bytes.size() - 22, std::string(64, 'x'));
    ZipLayout layout = ReadZipLayout(*MakeMemorySource(bytes));
    CHECK(layout.trailer_offset == layout.central_directory_offset + layout.central_directory_size + 64);
    Archive a = Archive::OpenAny(MakeMemorySource(bytes));
    CHECK(Mentions(a, "Python's zipfile shifts every offset"));
  }
}

TEST_CASE("reader view: a local header that disagrees with the central directory", "[view]") {
  std::string bytes = Zip(Model("m", "benign"));
  ZipLayout layout = ReadZipLayout(*MakeMemorySource(bytes));
  const ZipEntry& e = layout.entries[1];
  bytes[e.local_header_offset + 14] ^= 0x55;  // the local CRC-32
  Archive a = Archive::Open(MakeMemorySource(bytes));
  CHECK(Mentions(a, "local headers disagree with the central directory"));
  CHECK(Mentions(a, "m/code/__torch__.py: local header declares another CRC-32"));
}

TEST_CASE("reader view: the hostile differentials of round two", "[view][hostile]") {
  for (const char* name : {"root_diff.pt", "case_diff.pt", "eocd_diff.pt", "hidden_oob.pt", "hidden_oob_case.pt"}) {
    INFO(name);
    Archive a = Archive::Open(MakeMemorySource(HostileFile(std::string("15_reader_differential/") + name)));
    CHECK_FALSE(a.Ambiguities().empty());
  }
  for (const char* name : {"benign.pt", "evil.pt"}) {
    Archive a = Archive::Open(MakeMemorySource(HostileFile(std::string("15_reader_differential/") + name)));
    CHECK(a.Ambiguities().empty());
  }
  // What LibTorch loads (torch.jit.load, see whatloads.py): the evil model.
  Archive eocd = Archive::Open(MakeMemorySource(HostileFile("15_reader_differential/eocd_diff.pt")));
  CHECK(eocd.Read("code/__torch__.py").find("torch.sin") != std::string::npos);
  Archive upper = Archive::Open(MakeMemorySource(HostileFile("15_reader_differential/case_diff.pt")));
  CHECK(upper.Read("code/__torch__.py").find("torch.sin") != std::string::npos);
  Archive root = Archive::Open(MakeMemorySource(HostileFile("15_reader_differential/root_diff.pt")));
  CHECK(root.Read("code/__torch__.py").find("torch.sin") != std::string::npos);
}

TEST_CASE("reader view: a name of 512 bytes or more is ambiguous (LibTorch's record list cuts it)", "[view]") {
  Records r = Model("m", "benign");
  r.push_back({"m/extra/" + std::string(600, 'a'), "x"});
  Archive a = Archive::Open(MakeMemorySource(Zip(r)));
  CHECK(Mentions(a, "cuts to 511"));
  Records fine = Model("m", "benign");
  fine.push_back({"m/extra/" + std::string(400, 'a'), "x"});
  CHECK(Archive::Open(MakeMemorySource(Zip(fine))).Ambiguities().empty());
}

TEST_CASE("reader view: an AOTInductor package without a top folder has its records at the top", "[view]") {
  Records r = {{"data/aotinductor/model/model.wrapper.so", "x"}, {"data/aotinductor/model/model_metadata.json", "{}"}};
  Archive a = Archive::OpenModel(MakeMemorySource(Zip(r)));
  CHECK(a.root().empty());
  CHECK(a.kind() == ArchiveKind::kPt2Aoti);
  CHECK(a.Has("data/aotinductor/model/model_metadata.json"));
  CHECK(a.Ambiguities().empty());
  // An archive whose root folder is called "data" keeps it.
  Records d = Model("data", "benign");
  CHECK(Archive::Open(MakeMemorySource(Zip(d))).root() == "data");
}
