#include "sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "process.h"
#include "sandbox_seccomp.h"
#include "tsctl/atomic_file.h"

extern char** environ;

namespace tsctl {
namespace {

// Landlock's filesystem rights by ABI (the kernel's landlock.h; written out
// so that older headers build too).
constexpr uint64_t kFsExecute = 1ULL << 0, kFsWriteFile = 1ULL << 1, kFsReadFile = 1ULL << 2,
                   kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsAbi1 = (1ULL << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr uint64_t kFsRefer = 1ULL << 13;       // ABI 2
constexpr uint64_t kFsTruncate = 1ULL << 14;    // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;    // ABI 5

uint64_t HandledFs(int abi) {
  uint64_t fs = kFsAbi1;
  if (abi >= 2) fs |= kFsRefer;
  if (abi >= 3) fs |= kFsTruncate;
  if (abi >= 5) fs |= kFsIoctlDev;
  return fs;
}

int LandlockAbi() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

// Folders every LibTorch child reads below: the dynamic loader's cache and
// the system's libraries (lazily loaded kernels, locales, time zones), the
// devices a run reads, and the CPU topology OpenMP and cpuinfo consult.
// Measured with `strace -f -e trace=open,openat` over testdata/ and the
// corpus (docs/manual/sandbox.md). Of /proc only cpuinfo (the machine's,
// which cpuinfo_initialize reads when a child sets its thread count): a
// model reads nothing of this process (its command line, its executable).
const char* const kReadRoots[] = {
    "/usr/lib", "/usr/lib64", "/usr/local/lib", "/lib", "/lib64", "/usr/share/zoneinfo", "/usr/share/locale",
    "/etc/ld.so.cache", "/etc/localtime", "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
    "/sys/devices/system/cpu", "/sys/fs/cgroup", "/proc/cpuinfo",
};

// True if `path` is one of kReadRoots or below one.
bool BelowReadRoot(const std::string& path) {
  for (const char* root : kReadRoots) {
    const size_t n = std::strlen(root);
    if (path.compare(0, n, root) == 0 && (path.size() == n || path[n] == '/')) return true;
  }
  return false;
}

// Every regular file this process has mapped (LibTorch, the plugins, the
// operator libraries, what they link), by file, but its executable: a model
// reads no file of tsctl's own but the libraries it runs on, and nothing
// else of the folders they are in (an operator library built in a checkout
// would otherwise open the checkout, .git/config and its token included).
// The loader maps a library's DT_NEEDED closure when it loads the library,
// so every library already loaded brings its whole closure into this list;
// what is opened later by dlopen comes from kReadRoots or LibTorch's folder
// (LibTorchSharedObjects).
std::vector<std::string> MappedFiles() {
  std::vector<std::string> out;
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  const std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "";
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> seen;
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find(" /");
    if (slash == std::string::npos) continue;
    std::string file = line.substr(slash + 1);
    if (file == self || (file.size() > 10 && file.compare(file.size() - 10, 10, " (deleted)") == 0)) continue;
    if (file.rfind("/dev/", 0) == 0 || file.rfind("/proc/", 0) == 0 || BelowReadRoot(file)) continue;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (seen.insert(file).second) out.push_back(file);
  }
  return out;
}

// LibTorch loads some of its own libraries only when first asked (libtorch.so
// for an AOTInductor package, its CUDA libraries, an OpenMP runtime): where
// LibTorch is not in a system folder (a 2.x wheel in a virtual environment,
// inside a checkout), the regular files of its folder whose names hold
// ".so", each by file. Never the folder itself, nor any other file in it.
std::vector<std::string> LibTorchSharedObjects(const std::vector<std::string>& mapped) {
  std::string folder;
  for (const std::string& file : mapped) {
    const size_t slash = file.rfind('/');
    if (file.compare(slash + 1, 15, "libtorch_cpu.so") == 0) folder = file.substr(0, slash);
  }
  std::vector<std::string> out;
  DIR* d = folder.empty() ? nullptr : ::opendir(folder.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string path = folder + "/" + e->d_name;
    struct stat st {};
    if (std::strstr(e->d_name, ".so") && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(path);
  }
  ::closedir(d);
  return out;
}

void AddRule(int ruleset, const std::string& path, uint64_t access) {
  const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return;  // absent here: nothing to allow
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;
  landlock_path_beneath_attr rule{};
  rule.allowed_access = access;
  rule.parent_fd = fd;
  ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  ::close(fd);
}

bool ApplyLandlock(const SandboxPolicy& p, int abi) {
  const uint64_t handled = HandledFs(abi);
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled;
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return false;
  const uint64_t read = (kFsReadFile | kFsReadDir | kFsExecute) & handled;
  for (const char* root : kReadRoots) AddRule(ruleset, root, read);
  const std::vector<std::string> mapped = MappedFiles();
  for (const std::string& file : mapped) AddRule(ruleset, file, read);
  for (const std::string& file : LibTorchSharedObjects(mapped)) AddRule(ruleset, file, read);
  for (const std::string& file : p.read_files) AddRule(ruleset, file, read);
  if (p.profile == SandboxPolicy::Profile::kPackage && !p.private_dir.empty()) AddRule(ruleset, p.private_dir, handled);
  const bool ok = ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  ::close(ruleset);
  return ok;
}

// Overwrites [begin, end) of this process's memory, for the command line
// and environment blocks /proc/self/stat names (fields 48-51).
void ScrubArgsAndEnvironment() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream fields(text.substr(close + 2));
  std::vector<unsigned long long> f;
  std::string field;
  while (fields >> field) f.push_back(std::strtoull(field.c_str(), nullptr, 10));
  // After "pid (comm)", field 3 is f[0]: arg_start is field 48, f[45].
  if (f.size() < 49) return;
  for (int k : {45, 47}) {
    auto* begin = reinterpret_cast<char*>(f[k]);
    auto* end = reinterpret_cast<char*>(f[k + 1]);
    if (begin && end > begin) std::memset(begin, 0, static_cast<size_t>(end - begin));
  }
}

// The environment a model sees: the settings that shape how LibTorch runs
// (threads, the CUDA devices) and tsctl's own, nothing else (CI tokens
// live there).
void EmptyEnvironment(const std::string& tmpdir) {
  const std::vector<std::string> kept = SandboxEnvironment();
  for (char** e = environ; e && *e; ++e) std::memset(*e, 0, std::strlen(*e));
  ScrubArgsAndEnvironment();
  ReplaceEnvironment(kept);
  if (!tmpdir.empty()) ::setenv("TMPDIR", tmpdir.c_str(), 1);
}

void CloseOtherDescriptors(const std::vector<int>& keep) {
  std::vector<int> fds;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') fds.push_back(std::atoi(e->d_name));
    }
    ::closedir(d);
  }
  for (int fd : fds) {
    if (fd > 2 && std::find(keep.begin(), keep.end(), fd) == keep.end()) ::close(fd);
  }
  if (int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC); null >= 0) {
    ::dup2(null, STDIN_FILENO);
    if (null != STDIN_FILENO) ::close(null);
  }
}

void Limit(int resource, rlim_t soft, rlim_t hard) {
  rlimit now{};
  if (::getrlimit(resource, &now) != 0) return;
  if (now.rlim_max != RLIM_INFINITY) {
    soft = std::min(soft, now.rlim_max);
    hard = std::min(hard, now.rlim_max);
  }
  rlimit want{soft, hard};
  ::setrlimit(resource, &want);
}

// The largest regular file a child may write (RLIMIT_FSIZE; pipes, such as
// its standard output and error, do not count). A package's child extracts
// the package, and the caller's own Python writes its archive and a
// compiler's files: as much as its memory. A TorchScript archive's child
// writes no file at all (what it sends back travels as frames; the write
// lock stops any open for writing): 0. A CUDA child gets no write lock or
// Landlock (the driver writes its caches): as much as its memory too.
rlim_t FileSizeLimit(const SandboxPolicy& p) {
  using Profile = SandboxPolicy::Profile;
  const auto memory = static_cast<rlim_t>(p.address_space_bytes > 0 ? p.address_space_bytes : uint64_t{8} << 30);
  return p.profile == Profile::kArchive && !p.cuda ? 0 : memory;
}

void ApplyLimits(const SandboxPolicy& p) {
  Limit(RLIMIT_CORE, 0, 0);
  if (p.cpu_seconds > 0) {
    const auto soft = static_cast<rlim_t>(p.cpu_seconds + 1);
    Limit(RLIMIT_CPU, soft, soft + 5);  // SIGXCPU, then SIGKILL
  }
  // Not for the caller's own Python (export): the interpreter, torch and a
  // compiler's address space are its, as before (RLIMIT_DATA still holds).
  if (p.address_space_bytes > 0 && !p.cuda && p.profile != SandboxPolicy::Profile::kPython) {
    // Every mapping counts here, shared and file-backed ones too. The
    // allowance covers what LibTorch reserves without using: a stack per
    // thread and malloc's 64 MiB arena per thread.
    const uint64_t threads = static_cast<uint64_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))) + 4;
    const uint64_t allowance = (uint64_t{256} << 20) + threads * (uint64_t{72} << 20);
    const auto cap = static_cast<rlim_t>(ReadProcessMemory().size + p.address_space_bytes + allowance);
    Limit(RLIMIT_AS, cap, cap);
  }
  ::signal(SIGXFSZ, SIG_IGN);  // past the limit a write fails (EFBIG) rather than killing the child
  Limit(RLIMIT_FSIZE, FileSizeLimit(p), FileSizeLimit(p));
}

int g_files_fd = -1;
char g_files_frame = 'W';
int g_stop_fd = -1;
char g_stop_frame = 'U';

}  // namespace

void ReplaceEnvironment(const std::vector<std::string>& environment) {
  ::clearenv();
  for (const std::string& kv : environment) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) ::setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
}

std::vector<std::string> SandboxEnvironment() {
  static const char* const kKept[] = {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                      "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "CUDA_VISIBLE_DEVICES",
                                      "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH"};
  std::vector<std::string> kept;
  for (const char* name : kKept) {
    if (const char* v = std::getenv(name)) kept.push_back(std::string(name) + "=" + v);
  }
  // tsctl's own settings (TSCTL_VERBOSE, the test hooks' TSCTL_FAULT_*).
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "TSCTL_", 6) == 0 && std::strchr(*e, '=')) kept.push_back(*e);
  }
  return kept;
}

std::string SandboxSupport::Describe() const {
  auto lacks = [this](const char* layer) {
    return std::string("no ") + layer + (left_out.find(layer) != std::string::npos ? " (TSCTL_SANDBOX_WITHOUT)" : " (this kernel lacks it)");
  };
  std::string s = seccomp ? "seccomp" : lacks("seccomp");
  s += ", " + (landlock_abi > 0 ? "Landlock ABI " + std::to_string(landlock_abi) : lacks("Landlock"));
  return s;
}

const SandboxSupport& ProbeSandbox() {
  static const SandboxSupport support = [] {
    SandboxSupport s;
    // What a kernel without a layer does, on one with it (the tests'
    // sandbox_hostile_*): "landlock", "seccomp" or both.
    const char* without = std::getenv("TSCTL_SANDBOX_WITHOUT");
    const bool no_seccomp = without && std::strstr(without, "seccomp");
    const bool no_landlock = without && std::strstr(without, "landlock");
    s.left_out = std::string(no_seccomp ? "seccomp" : "") + (no_seccomp && no_landlock ? "," : "") +
                 (no_landlock ? "Landlock" : "");
    s.landlock_abi = no_landlock ? 0 : LandlockAbi();
    s.seccomp = !no_seccomp && SeccompAvailable();
    return s;
  }();
  return support;
}

void EnterSandbox(const SandboxPolicy& p, int report_fd, char frame_type) {
  if (p.profile == SandboxPolicy::Profile::kOff) return;
  const SandboxSupport& support = ProbeSandbox();
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // no other process of this user reads its memory
  ApplyLimits(p);
  if (p.profile == SandboxPolicy::Profile::kPython) return;
  std::vector<int> keep = p.keep_fds;
  keep.push_back(report_fd);
  CloseOtherDescriptors(keep);
  EmptyEnvironment(p.private_dir);
  if (support.landlock_abi > 0 && !p.cuda) ApplyLandlock(p, support.landlock_abi);
  CatchSigsys(report_fd, frame_type);
  if (support.seccomp) ApplySeccomp(p.cuda);
}

void SendChildFilesTo(int fd, char frame_type) {
  g_files_fd = fd;
  g_files_frame = frame_type;
}

void SendStopsTo(int fd, char frame_type) {
  g_stop_fd = fd;
  g_stop_frame = frame_type;
}

void StopChild(const std::string& line) {
  if (g_stop_fd >= 0) {
    WriteFrame(g_stop_fd, g_stop_frame, line);
  } else {
    const std::string text = "tsctl: " + line + "\n";
    (void)!::write(STDERR_FILENO, text.data(), text.size());
  }
  ::_exit(kSandboxExit);
}

void WriteChildFile(const std::string& path, const std::string& bytes) {
  if (g_files_fd < 0) {
    WriteFileAtomically(path, bytes);
    return;
  }
  std::string payload(4, '\0');
  PutLength(payload.data(), static_cast<uint32_t>(path.size()));
  payload += path;
  payload += bytes;
  WriteFrame(g_files_fd, g_files_frame, payload);
}

}  // namespace tsctl
