// tsctl compat (tsctl/compat.h): the data format and --target files, target
// specs, each rule of the judge on synthetic needs, and the ELF readers.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "../../lib/src/commands/compat_internal.h"
#include "test_util.h"
#include "tsctl/compat.h"
#include "tsctl/error.h"

using namespace tsctl;

namespace {

CompatTarget Runtime(const std::string& text) {
  CompatTarget t;
  t.label = "test";
  t.runtime = ParseCompatRuntime(text, "test");
  return t;
}

const char kTorch[] =
    "runtime torch 9.1.0\nfile_format 1 10\npt2_schema 8 3\nclass xnnpack.LinearOpContext\n"
    "upgrader aten::div.Tensor 4 div_Tensor_0_3\naten::div.Tensor\naten::linear\naten::add.Tensor\nprim::NumToTensor\n";

CompatTargetResult Judge(const CompatNeeds& n, const std::string& text = kTorch) {
  return JudgeCompat(n, Runtime(text), CompatHost{});
}

bool Says(const CompatTargetResult& r, const std::string& part) {
  for (const std::string& reason : r.reasons) {
    if (reason.find(part) != std::string::npos) return true;
  }
  return false;
}

CompatNeeds TorchScript(std::vector<std::string> ops, uint64_t version = 3) {
  CompatNeeds n;
  n.format = "TorchScript archive";
  n.runtime = "torch";
  n.file_format = version;
  n.operators = std::move(ops);
  return n;
}

}  // namespace

TEST_CASE("compat data: the format, a list of operators, and lines that are neither") {
  const CompatRuntime r = ParseCompatRuntime(kTorch, "t");
  CHECK(r.kind == "torch");
  CHECK(r.version == "9.1.0");
  CHECK(r.file_format == std::pair<uint64_t, uint64_t>{1, 10});
  CHECK(r.operators.count("aten::add.Tensor"));
  CHECK(r.base_names.count("aten::add"));
  CHECK(r.classes.count("xnnpack.LinearOpContext"));
  CHECK(r.upgraders.at("aten::div.Tensor")[0].first == 4);
  const CompatRuntime list = ParseCompatRuntime("# ARCHIVE a.pt\naten::add.Tensor\n\nprim::Print\n", "ops.txt");
  CHECK(list.kind.empty());
  CHECK(list.operators.size() == 2);
  CHECK_THROWS_AS(ParseCompatRuntime("aten::add.Tensor\nhello world\n", "x"), Error);
  CHECK_THROWS_AS(ParseCompatRuntime("# nothing\n", "x"), Error);
  CHECK_THROWS_AS(ParseCompatRuntime("file_format ten\n", "x"), Error);
}

TEST_CASE("compat targets: versions with and without data, host, malformed specs") {
  CHECK(ResolveCompatTarget("host").host);
  for (const std::string& name : CompatDataNames()) {
    const std::string kind = name.substr(0, name.find('-')), version = name.substr(name.find('-') + 1);
    const CompatTarget exact = ResolveCompatTarget(kind + "==" + version);
    REQUIRE(exact.runtime);
    CHECK(exact.runtime->version == version);
    CHECK(exact.label == kind + "==" + version);
    CHECK(ResolveCompatTarget(kind + "==" + version.substr(0, version.rfind('.'))).runtime);
  }
  const CompatTarget none = ResolveCompatTarget("torch==0.1");
  CHECK_FALSE(none.runtime);
  CHECK(none.missing.find("no data for torch==0.1") != std::string::npos);
  for (const char* bad : {"torch=1.13", "torch==abc", "pytorch==2.1", "", "torch==", "/no/such/file"}) {
    try {
      ResolveCompatTarget(bad);
      FAIL("accepted " << bad);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kUsage);
      CHECK(std::string(e.what()).find("torch==X.Y[.Z]") != std::string::npos);
    }
  }
}

TEST_CASE("compat judge: TorchScript against a torch release") {
  CHECK(Judge(TorchScript({"aten::add", "aten::linear"})).verdict == CompatVerdict::kCompatible);
  // A newer file format than the release reads.
  auto r = Judge(TorchScript({"aten::add"}, 11));
  CHECK(r.verdict == CompatVerdict::kIncompatible);
  CHECK(Says(r, "file format version 11"));
  // An operator the release lacks; a custom namespace names --load-library.
  r = Judge(TorchScript({"aten::add", "aten::new_thing"}));
  CHECK(r.verdict == CompatVerdict::kIncompatible);
  CHECK(Says(r, "aten::new_thing"));
  r = Judge(TorchScript({"torchvision::nms"}));
  CHECK(r.verdict == CompatVerdict::kIncompatible);
  CHECK(Says(r, "--load-library"));
  // The upgrader LibTorch applies to an archive older than the change.
  r = Judge(TorchScript({"aten::div"}, 3));
  CHECK(r.verdict == CompatVerdict::kCompatible);
  CHECK(Says(r, "upgrader div_Tensor_0_3"));
  CHECK_FALSE(Says(Judge(TorchScript({"aten::div"}, 5)), "upgrader"));
  // A custom class its pickles create.
  CompatNeeds n = TorchScript({"aten::add"});
  n.classes = {"xnnpack.LinearOpContext"};
  CHECK(Judge(n).verdict == CompatVerdict::kCompatible);
  n.classes = {"xnnpack.Conv2dOpContext"};
  CHECK(Judge(n).verdict == CompatVerdict::kIncompatible);
  // The model.json layout: only where the data says the legacy importer is built in.
  CompatNeeds legacy = TorchScript({"aten::add"}, 1);
  legacy.legacy = true;
  CHECK(Judge(legacy).verdict == CompatVerdict::kUnknown);
  CHECK(Judge(legacy, std::string(kTorch) + "legacy_import no\n").verdict == CompatVerdict::kIncompatible);
  CHECK(Judge(legacy, std::string(kTorch) + "legacy_import yes\n").verdict == CompatVerdict::kCompatible);
  // A record every reader refuses: incompatible on any release.
  CompatNeeds damaged = TorchScript({"aten::add"});
  damaged.damage = {"zip.crc: CRC-32 mismatch"};
  CHECK(Judge(damaged).verdict == CompatVerdict::kIncompatible);
  CHECK(Says(Judge(damaged), "no runtime's reader loads"));
  // What could not be read never makes a verdict compatible.
  n = TorchScript({"aten::add"});
  n.notes = {"a record could not be read"};
  CHECK(Judge(n).verdict == CompatVerdict::kUnknown);
}

TEST_CASE("compat judge: .pt2 schema versions, overloads, and formats on the wrong runtime") {
  CompatNeeds n;
  n.format = ".pt2 exported program";
  n.runtime = "torch";
  n.overloads_known = true;
  n.pt2_schema = {8, 2};
  n.operators = {"aten::linear", "aten::add.Tensor"};
  CHECK(Judge(n).verdict == CompatVerdict::kCompatible);
  n.operators = {"aten::add.Scalar"};  // the name is there, this overload is not
  CHECK(Judge(n).verdict == CompatVerdict::kIncompatible);
  n.operators = {};
  n.pt2_schema = {7, 0};
  CHECK(Judge(n).verdict == CompatVerdict::kIncompatible);
  n.pt2_schema = {8, 9};
  CHECK(Judge(n).verdict == CompatVerdict::kUnknown);
  // The early layout: its version record must be MAJOR.MINOR of the release's major.
  n.pt2_schema = {8, 1};
  n.pt2_early_version = "2";
  CHECK(Says(Judge(n), "incorrect length"));
  n.pt2_early_version = "7.1";
  CHECK(Judge(n).verdict == CompatVerdict::kIncompatible);
  n.pt2_early_version = "8.1";
  CHECK(Judge(n).verdict == CompatVerdict::kCompatible);
  n.pt2_early_version.reset();
  CHECK(Judge(n, "runtime torch 1.0.0\nfile_format 1 2\naten::add.Tensor\n").verdict == CompatVerdict::kIncompatible);
  n.runtime = "executorch";
  n.pt2_schema.reset();
  n.format = "ExecuTorch program";
  CHECK(Judge(n).verdict == CompatVerdict::kIncompatible);
}

TEST_CASE("compat judge: ExecuTorch kernels and backends; a bare list of operators") {
  const char kEt[] = "runtime executorch 9.0.0\nbackend XnnpackBackend\nkernel aten::add.out v1/6;0\n";
  CompatNeeds n;
  n.format = "ExecuTorch program";
  n.runtime = "executorch";
  n.overloads_known = true;
  n.operators = {"aten::add.out"};
  n.backends = {"XnnpackBackend"};
  CHECK(Judge(n, kEt).verdict == CompatVerdict::kCompatible);
  n.operators = {"aten::mul.out"};
  auto r = Judge(n, kEt);
  CHECK(r.verdict == CompatVerdict::kIncompatible);
  CHECK(Says(r, "Missing operator"));
  n.operators = {"aten::add.out"};
  n.backends = {"QnnBackend"};
  CHECK(Says(Judge(n, kEt), "QnnBackend"));
  // Constants in the inline constant_buffer: only where the runtime was built with that path.
  n.backends = {};
  n.pte_constant_buffer = true;
  CHECK(Judge(n, kEt).verdict == CompatVerdict::kUnknown);
  CHECK(Judge(n, std::string(kEt) + "constant_buffer no\n").verdict == CompatVerdict::kIncompatible);
  CHECK(Judge(n, std::string(kEt) + "constant_buffer yes\n").verdict == CompatVerdict::kCompatible);
  CHECK(Judge(TorchScript({"aten::add"}), "aten::add.Tensor\n").verdict == CompatVerdict::kCompatible);
  CHECK(Judge(TorchScript({"aten::mul"}), "aten::add.Tensor\n").verdict == CompatVerdict::kIncompatible);
}

TEST_CASE("compat judge: the host") {
  CompatNeeds n = TorchScript({});
  n.devices = {"cuda:0"};
  CompatHost none;
  none.cuda_note = "no NVIDIA driver";
  CompatTarget host;
  host.host = true;
  host.label = "host";
  CHECK(JudgeCompat(n, host, none).verdict == CompatVerdict::kIncompatible);
  CompatHost gpu;
  gpu.cuda_devices = {"sm_90"};
  CHECK(JudgeCompat(n, host, gpu).verdict == CompatVerdict::kCompatible);
  n.devices = {};
  n.aoti = true;
  n.aoti_device = "cuda";
  n.cuda_archs = {"sm_80"};
  CHECK(JudgeCompat(n, host, gpu).verdict == CompatVerdict::kIncompatible);
  n.cuda_archs = {"sm_90"};
  n.symbol_versions = {"GLIBC_2.99", "GLIBCXX_3.4.30"};
  gpu.symbol_versions = {"GLIBC_2.34", "GLIBCXX_3.4.30"};
  auto r = JudgeCompat(n, host, gpu);
  CHECK(r.verdict == CompatVerdict::kIncompatible);
  CHECK(Says(r, "GLIBC_2.99"));
  CHECK_FALSE(Says(r, "GLIBCXX_3.4.30"));
}

TEST_CASE("compat ELF: symbol versions of this system's libc, a CUDA ELF's architecture, and garbage") {
  const CompatHost host = ProbeHost();
  CHECK(host.symbol_versions.count("GLIBC_2.2.5"));
  CHECK_FALSE(host.glibc.empty());
  std::ifstream self("/proc/self/exe", std::ios::binary);
  const std::string exe((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
  const auto needed = ElfNeededVersions(exe);
  CHECK(std::find(needed.begin(), needed.end(), "GLIBC_2.2.5") != needed.end());
  CHECK(ElfNeededVersions("not an elf").empty());
  CHECK(ElfNeededVersions(exe.substr(0, 100)).empty());
  CHECK(CubinArch(exe).empty());
  // A CUDA ELF header: ABI version 8 keeps the SM in e_flags' second byte.
  std::string cubin(64, '\0');
  cubin.replace(0, 4, "\x7f" "ELF");
  cubin[4] = 2, cubin[5] = 1, cubin[8] = 8;
  cubin[0x12] = static_cast<char>(190);
  cubin[0x30] = 0x04, cubin[0x31] = 0x5a;
  CHECK(CubinArch(cubin) == "sm_90");
  cubin[8] = 7, cubin[0x30] = 0x50;
  CHECK(CubinArch(cubin) == "sm_80");
}

TEST_CASE("compat load notes: LibTorch's words for what it lacks, answered from the data") {
  const std::string cls = CompatLoadNote("Unknown type name '__torch__.torch.classes.xnnpack.Conv2dOpContext':", "2.15.0");
  CHECK(cls.find("custom class xnnpack.Conv2dOpContext is not in this LibTorch 2.15.0; it is in torch 1.13.1") !=
        std::string::npos);
  const std::string op = CompatLoadNote("Unknown builtin op: torchvision::nms.\nHere are some suggestions", "1.13");
  CHECK(op.find("no torch release tsctl has data for registers it") != std::string::npos);
  CHECK(CompatLoadNote("some other error", "2.15.0").empty());
  CHECK(CompatLoadNote("LibTorch cannot load it: operators not registered in this LibTorch: prepacked::conv2d_clamp_run, "
                       "prepacked::linear_clamp_run (XNNPACK's operators...)",
                       "2.15.0")
            .find("operators prepacked::conv2d_clamp_run, prepacked::linear_clamp_run are not in this LibTorch 2.15.0; "
                  "they are in torch 1.13.1") !=
        std::string::npos);
}
