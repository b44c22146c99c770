// What each LibTorch child request reads and writes, how it is confined
// (sandbox.h), and the files its child sends back (torch_child_sandbox.h).
#include "torch_child_sandbox.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "tsctl/atomic_file.h"
#include "tsctl/error.h"
#include "process.h"

namespace tsctl {
namespace {

bool g_sandbox = true;

}  // namespace

void SetSandbox(bool on) { g_sandbox = on; }
bool SandboxOn() { return g_sandbox; }
std::string SandboxDescription() {
  return g_sandbox ? "on (" + ProbeSandbox().Describe() + ")" : "off (--no-sandbox)";
}

RequestFiles FilesOf(const ChildRequest& request) {
  using Profile = SandboxPolicy::Profile;
  RequestFiles f = std::visit([](const auto& r) { return r.Files(); }, request);
  auto drop_empty = [](std::vector<std::string>& v) { v.erase(std::remove(v.begin(), v.end(), ""), v.end()); };
  drop_empty(f.reads);
  drop_empty(f.writes);
  f.reads.insert(f.reads.end(), f.libraries.begin(), f.libraries.end());
  if (!g_sandbox) f.profile = Profile::kOff;
  return f;
}

// The descriptors named as /proc/self/fd/N among `paths` (the archive the
// parent opened and checked): the child keeps them.
std::vector<int> NamedDescriptors(const std::vector<std::string>& paths) {
  std::vector<int> out;
  const std::string prefix = "/proc/self/fd/";
  for (const std::string& p : paths) {
    if (p.rfind(prefix, 0) == 0 && p.size() > prefix.size() && p.size() < prefix.size() + 9 &&
        p.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
      out.push_back(std::stoi(p.substr(prefix.size())));
    }
  }
  return out;
}

SandboxPolicy PolicyOf(const RequestFiles& files, const ChildLimits& limits, uint64_t memory, const std::string& dir) {
  SandboxPolicy policy;
  policy.profile = files.profile;
  policy.read_files = files.reads;
  policy.keep_fds = NamedDescriptors(files.reads);
  policy.private_dir = dir;
  policy.address_space_bytes = memory;
  // CPU time as well as the wall clock: every core busy for the whole time.
  const double cores = static_cast<double>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  policy.cpu_seconds = limits.timeout_seconds > 0 ? limits.timeout_seconds * cores : 0;
  policy.cuda = files.cuda;
  return policy;
}

PrivateDir::PrivateDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/tsctl-sandbox-XXXXXX";
  std::vector<char> tmpl(name.begin(), name.end());
  tmpl.push_back('\0');
  if (::mkdtemp(tmpl.data())) path = tmpl.data();
}

PrivateDir::~PrivateDir() {
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace tsctl
