// The sandbox of LibTorch children (lib/src/plugin/sandbox.h), layer by
// layer, in forked children of this test: what is stopped and told, what
// still works. A layer this kernel lacks is said (WARN) and its cases are
// left out; the others still run.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <zlib.h>

#include "child_output.h"
#include "process.h"
#include "sandbox.h"
#include "torch_child_sandbox.h"

namespace {

using tsctl::SandboxPolicy;

struct Ended {
  int exit_code = -1;     // -1: killed by a signal
  std::string sandboxed;  // the 'S' frame's line, if one came
  std::string other;      // any other frames' payloads
};

// Forks; the child enters the sandbox (and the write lock when asked),
// runs `body` and exits with what it returns.
Ended RunSandboxed(const SandboxPolicy& policy, bool lock, const std::function<int()>& body) {
  int read_fd = -1;
  const pid_t pid = tsctl::ForkChild(&read_fd, [&](int fd) {
    tsctl::EnterSandbox(policy, fd, 'S');
    if (lock) tsctl::LockFileWrites();
    ::_exit(body());
  });
  std::string buffer;
  char chunk[4096];
  ssize_t n;
  while ((n = ::read(read_fd, chunk, sizeof chunk)) > 0) buffer.append(chunk, static_cast<size_t>(n));
  ::close(read_fd);
  Ended out;
  tsctl::TakeFrames(buffer, [&](char type, std::string payload) { (type == 'S' ? out.sandboxed : out.other) = payload; });
  const int status = tsctl::Reap(pid);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/tsctl-sandbox-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

SandboxPolicy ArchivePolicy(const std::string& dir) {
  SandboxPolicy p;
  p.profile = SandboxPolicy::Profile::kArchive;
  p.private_dir = dir;
  p.address_space_bytes = uint64_t{256} << 20;
  p.cpu_seconds = 60;
  return p;
}

}  // namespace

TEST_CASE("sandbox: seccomp stops what a model never needs, with one line naming it", "[sandbox]") {
  if (!tsctl::ProbeSandbox().seccomp) {
    WARN("no seccomp on this kernel: its cases are left out (" << tsctl::ProbeSandbox().Describe() << ")");
    return;
  }
  Scratch s;
  const SandboxPolicy p = ArchivePolicy(s.dir);
  const std::string file = s.dir + "/PWNED";

  SECTION("a file opened for writing, under the write lock") {
    Ended e = RunSandboxed(p, true, [&] { return ::open(file.c_str(), O_WRONLY | O_CREAT, 0644) >= 0 ? 0 : 1; });
    CHECK(e.exit_code == tsctl::kSandboxExit);
    CHECK(e.sandboxed == "the model tried to open " + file + " for writing");
    CHECK_FALSE(std::filesystem::exists(file));
  }
  SECTION("a file removed, under the write lock") {
    Ended e = RunSandboxed(p, true, [&] { return ::unlink(file.c_str()) == 0 ? 0 : 1; });
    CHECK(e.exit_code == tsctl::kSandboxExit);
    CHECK(e.sandboxed == "the model tried to remove a file " + file + " (unlink)");
  }
  SECTION("a program run") {
    Ended e = RunSandboxed(p, false, [] {
      char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
      ::execv("/bin/true", argv);
      return 1;
    });
    CHECK(e.exit_code == tsctl::kSandboxExit);
    CHECK(e.sandboxed == "the model tried to run a program /bin/true (execve)");
  }
  SECTION("a process started") {
    Ended e = RunSandboxed(p, false, [] {
      const pid_t child = ::fork();
      if (child == 0) ::_exit(0);
      return 1;
    });
    CHECK(e.exit_code == tsctl::kSandboxExit);
    CHECK(e.sandboxed == "the model tried to start a process (clone)");
  }
  SECTION("a network socket") {
    Ended e = RunSandboxed(p, false, [] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; });
    CHECK(e.exit_code == tsctl::kSandboxExit);
    CHECK(e.sandboxed == "the model tried to open a network socket (socket)");
  }
  SECTION("a signal to another process") {
    Ended e = RunSandboxed(p, false, [] { return ::kill(1, 0) == 0 ? 0 : 1; });
    CHECK(e.exit_code == tsctl::kSandboxExit);
    CHECK(e.sandboxed == "the model tried to signal another process (kill)");
  }
  SECTION("naming another thread of its own fails quietly; its memory file is still a write") {
    Ended e = RunSandboxed(p, true, [] {
      int named = -1;
      std::thread t([&named] {
        std::thread inner([] {});
        named = ::pthread_setname_np(inner.native_handle(), "worker");  // opens /proc/self/task/TID/comm
        inner.join();
      });
      t.join();
      if (named == 0) return 1;  // it cannot have written the name
      return 0;
    });
    CHECK(e.exit_code == 0);
    CHECK(e.sandboxed.empty());
    Ended mem = RunSandboxed(p, true, [] {
      const std::string path = "/proc/self/task/" + std::to_string(::gettid()) + "/mem";
      return ::open(path.c_str(), O_RDWR) >= 0 ? 0 : 1;
    });
    CHECK(mem.exit_code == tsctl::kSandboxExit);
    CHECK(mem.sandboxed.find("/mem for writing") != std::string::npos);
  }
  SECTION("a CUDA child's local socket: created, bound and listening, never connected") {
    SandboxPolicy cuda = p;
    cuda.cuda = true;
    const std::string path = s.dir + "/cuda.sock";
    Ended e = RunSandboxed(cuda, false, [&path] {
      // What the CUDA driver's cuInit does (tests/cuda/seccomp_probe.c).
      const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      if (fd < 0) return 1;
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      addr.sun_path[0] = '\0';  // an abstract name, as the driver's
      std::strcpy(addr.sun_path + 1, "tsctl-test");
      if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0) return 2;
      const int out = ::socket(AF_UNIX, SOCK_STREAM, 0);
      if (::connect(out, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 || errno != EACCES) return 3;
      return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 4 : 5;  // a network socket is still stopped
    });
    CHECK(e.exit_code == tsctl::kSandboxExit);
    CHECK(e.sandboxed == "the model tried to open a network socket (socket)");
    Ended plain = RunSandboxed(p, false, [] { return ::socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EACCES ? 0 : 1; });
    CHECK(plain.exit_code == 0);  // other children get no local socket at all
  }
  SECTION("threads, reading, and signals to itself still work") {
    Ended e = RunSandboxed(p, true, [] {
      int value = 0;
      std::thread t([&value] { value = 42; });
      t.join();
      const int fd = ::open("/dev/null", O_RDONLY);
      if (fd < 0 || value != 42) return 1;
      ::close(fd);
      return ::kill(::getpid(), 0) == 0 ? 0 : 2;
    });
    CHECK(e.exit_code == 0);
    CHECK(e.sandboxed.empty());
  }
}

TEST_CASE("sandbox: Landlock reads only the system's libraries and the files named", "[sandbox]") {
  if (tsctl::ProbeSandbox().landlock_abi == 0) {
    WARN("no Landlock on this kernel: its cases are left out (" << tsctl::ProbeSandbox().Describe() << ")");
    return;
  }
  Scratch s;
  const std::string named = s.dir + "/model.pt", other = s.dir + "/secret.txt";
  for (const std::string& f : {named, other}) {
    const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  SandboxPolicy p = ArchivePolicy(s.dir);
  p.read_files = {named};
  Ended e = RunSandboxed(p, false, [&] {
    const int ok = ::open(named.c_str(), O_RDONLY);
    if (ok < 0) return 1;
    ::close(ok);
    errno = 0;
    if (::open(other.c_str(), O_RDONLY) >= 0 || errno != EACCES) return 2;
    if (::open("/etc/passwd", O_RDONLY) >= 0) return 3;
    if (::open("/proc/self/exe", O_RDONLY) >= 0) return 4;
    // Written nowhere, its own folder included (a TorchScript archive).
    if (::open((s.dir + "/new").c_str(), O_WRONLY | O_CREAT, 0600) >= 0) return 5;
    return ::open("/usr/lib", O_RDONLY | O_DIRECTORY) >= 0 ? 0 : 6;
  });
  CHECK(e.exit_code == 0);

  SECTION("an AOTInductor package's child writes in its own folder only") {
    p.profile = SandboxPolicy::Profile::kPackage;
    Ended pkg = RunSandboxed(p, false, [&] {
      const int own = ::open((s.dir + "/extracted.so").c_str(), O_WRONLY | O_CREAT, 0600);
      if (own < 0) return 1;
      ::close(own);
      return ::open("/tmp/tsctl-sandbox-escape", O_WRONLY | O_CREAT, 0600) >= 0 ? 2 : 0;
    });
    CHECK(pkg.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists("/tmp/tsctl-sandbox-escape"));
  }
}

TEST_CASE("sandbox: Landlock grants a loaded library's file, never its folder", "[sandbox]") {
  if (tsctl::ProbeSandbox().landlock_abi == 0) {
    WARN("no Landlock on this kernel: its cases are left out (" << tsctl::ProbeSandbox().Describe() << ")");
    return;
  }
  // A library loaded from a folder of its own, as --load-library ./libops.so
  // from a checkout: a copy of zlib (this test links it), beside a secret.
  Scratch s;
  Dl_info zlib{};
  REQUIRE(::dladdr(reinterpret_cast<void*>(&zlibVersion), &zlib) != 0);
  const std::string lib = s.dir + "/libops.so", secret = s.dir + "/config";
  std::filesystem::copy_file(zlib.dli_fname, lib);
  const int fd = ::open(secret.c_str(), O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  ::close(fd);
  void* handle = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  Ended e = RunSandboxed(ArchivePolicy(s.dir), false, [&] {
    const int ok = ::open(lib.c_str(), O_RDONLY);
    if (ok < 0) return 1;
    ::close(ok);
    errno = 0;
    if (::open(secret.c_str(), O_RDONLY) >= 0 || errno != EACCES) return 2;
    return ::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY) >= 0 ? 3 : 0;
  });
  ::dlclose(handle);
  CHECK(e.exit_code == 0);
}

TEST_CASE("sandbox: a TorchScript archive's child writes no byte to a file (RLIMIT_FSIZE 0)", "[sandbox]") {
  Scratch s;
  const std::string file = s.dir + "/log";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);  // opened before the sandbox
  REQUIRE(fd >= 0);
  SandboxPolicy p = ArchivePolicy(s.dir);
  p.keep_fds = {fd};
  Ended e = RunSandboxed(p, false, [&] {
    errno = 0;
    return ::write(fd, "x", 1) < 0 && errno == EFBIG ? 0 : 1;
  });
  ::close(fd);
  CHECK(e.exit_code == 0);
  CHECK(std::filesystem::file_size(file) == 0);
}

TEST_CASE("child output: the first 64 KiB kept, the rest counted, each line escaped", "[sandbox]") {
  tsctl::ChildOutput out;
  const std::string forged = "\x1b[2K\r  PASS  torch.sandbox\n  result: PASSED\n\x1b[8m";
  out.Append(forged.data(), forged.size());
  const std::string shown = out.Shown("tsctl: child output: ");
  CHECK(shown ==
        "tsctl: child output: \\x1b[2K\\r  PASS  torch.sandbox\n"
        "tsctl: child output:   result: PASSED\n"
        "tsctl: child output: \\x1b[8m\n");
  const std::string flood(tsctl::kChildOutputCap * 3, 'a');
  out.Append(flood.data(), flood.size());
  CHECK(out.kept().size() == tsctl::kChildOutputCap);
  CHECK(out.dropped() == forged.size() + flood.size() - tsctl::kChildOutputCap);
  CHECK(out.Shown("> ").find("more bytes dropped") != std::string::npos);

  int fds[2];
  REQUIRE(::pipe2(fds, O_NONBLOCK) == 0);
  tsctl::ChildOutput piped;
  CHECK(piped.Drain(fds[0]) == tsctl::ChildOutput::Pipe::kEmpty);
  REQUIRE(::write(fds[1], "hello\n", 6) == 6);
  ::close(fds[1]);
  CHECK(piped.Drain(fds[0]) == tsctl::ChildOutput::Pipe::kEnded);
  CHECK(piped.kept() == "hello\n");
  ::close(fds[0]);
}

TEST_CASE("sandbox: the environment is emptied, tsctl's own settings kept", "[sandbox]") {
  Scratch s;
  ::setenv("TSCTL_TEST_SANDBOX_TOKEN", "kept", 1);
  ::setenv("CI_JOB_TOKEN_FOR_TEST", "secret", 1);
  Ended e = RunSandboxed(ArchivePolicy(s.dir), false, [&] {
    if (std::getenv("CI_JOB_TOKEN_FOR_TEST")) return 1;
    const char* kept = std::getenv("TSCTL_TEST_SANDBOX_TOKEN");
    if (!kept || std::string(kept) != "kept") return 2;
    const char* tmp = std::getenv("TMPDIR");
    return tmp && std::string(tmp) == s.dir ? 0 : 3;
  });
  ::unsetenv("CI_JOB_TOKEN_FOR_TEST");
  ::unsetenv("TSCTL_TEST_SANDBOX_TOKEN");
  CHECK(e.exit_code == 0);
}

TEST_CASE("sandbox: the address-space cap counts shared mappings", "[sandbox]") {
  Scratch s;
  SandboxPolicy p = ArchivePolicy(s.dir);
  p.address_space_bytes = uint64_t{64} << 20;
  Ended e = RunSandboxed(p, false, [] {
    // 16 GiB shared: past any allowance; RLIMIT_DATA would not count it.
    void* m = ::mmap(nullptr, uint64_t{16} << 30, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? 0 : 1;
  });
  CHECK(e.exit_code == 0);
}

TEST_CASE("sandbox: a request's child reads and writes the files the request names, and its libraries", "[sandbox]") {
  using Profile = SandboxPolicy::Profile;
  tsctl::ModelCheckOptions o;
  o.path = "m.pt2";
  o.load_path = "/proc/self/fd/7";
  o.reference_path = "ref.pt";
  o.save_outputs_path = "out.npz";
  o.load_libraries = {"ops.so"};
  o.device = "cuda:1";
  o.pt2.kind = tsctl::Pt2RunSpec::Kind::kAoti;
  tsctl::RequestFiles f = tsctl::FilesOf(tsctl::CheckRequest{.options = o});
  // Names left empty are no files; the libraries are read too.
  CHECK(f.reads == std::vector<std::string>{"m.pt2", "/proc/self/fd/7", "ref.pt", "ops.so"});
  CHECK(f.writes == std::vector<std::string>{"out.npz"});
  CHECK(f.profile == Profile::kPackage);
  CHECK(f.cuda);
  CHECK(tsctl::NamedDescriptors(f.reads) == std::vector<int>{7});

  tsctl::GraphOptions g;
  g.path = "m.pt";
  f = tsctl::FilesOf(tsctl::GraphRequest{.options = g});
  CHECK(f.reads == std::vector<std::string>{"m.pt"});
  CHECK(f.profile == Profile::kArchive);
  CHECK_FALSE(f.cuda);
  CHECK(tsctl::FilesOf(tsctl::DataLoaderRequest{.file = "load.py", .name = "load_data"}).profile == Profile::kPython);
  CHECK(tsctl::FilesOf(tsctl::BuildInfoRequest{}).cuda);  // it asks the driver for devices

  // --no-sandbox: every request unconfined.
  tsctl::SetSandbox(false);
  CHECK(tsctl::FilesOf(tsctl::GraphRequest{.options = g}).profile == Profile::kOff);
  tsctl::SetSandbox(true);
}
