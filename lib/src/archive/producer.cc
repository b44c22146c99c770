#include "producer.h"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

namespace tsctl {
namespace {

// The commit of the git checkout around the working directory, read from
// .git without running git (which may be absent on a CI image).
std::string GitCommit() {
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return {};
  std::string dir = cwd;
  while (true) {
    std::string git = dir + "/.git";
    std::ifstream head(git + "/HEAD");
    if (!head) {
      // A worktree or submodule: ".git" is a file "gitdir: PATH".
      std::ifstream link(git);
      std::string line;
      if (link && std::getline(link, line) && line.rfind("gitdir: ", 0) == 0) {
        git = line.substr(8);
        if (!git.empty() && git[0] != '/') git = dir + "/" + git;
        head.open(git + "/HEAD");
      }
    }
    if (head) {
      std::string line;
      std::getline(head, line);
      if (line.rfind("ref: ", 0) != 0) return line;  // detached HEAD
      std::string ref = line.substr(5);
      std::string common = git;
      std::ifstream cd(git + "/commondir");
      std::string rel;
      if (cd && std::getline(cd, rel)) common = rel[0] == '/' ? rel : git + "/" + rel;
      for (const std::string& base : {git, common}) {
        std::ifstream r(base + "/" + ref);
        std::string sha;
        if (r && std::getline(r, sha) && !sha.empty()) return sha;
      }
      std::ifstream packed(common + "/packed-refs");
      while (std::getline(packed, line)) {
        if (line.size() > 41 && line.compare(41, std::string::npos, ref) == 0) return line.substr(0, 40);
      }
      return {};  // a branch with no commit yet
    }
    size_t slash = dir.rfind('/');
    if (slash == std::string::npos || dir == "/") return {};
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
}

}  // namespace

const char* BuiltLibTorchVersion() { return TSCTL_LIBTORCH_VERSION; }

nlohmann::json AutoProducerFields() {
  nlohmann::json j;
  j["tsctl_version"] = TSCTL_VERSION;
  j["libtorch_version"] = BuiltLibTorchVersion();
  std::string user;
  if (const char* u = std::getenv("USER"); u && *u) user = u;
  if (user.empty()) {
    if (const passwd* pw = ::getpwuid(::getuid())) user = pw->pw_name;
  }
  j["user"] = user;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) j["host"] = host;
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  j["time"] = when;
  std::string commit = GitCommit();
  if (!commit.empty()) j["git_commit"] = commit;
  static const std::array<const char*, 22> kCiVars = {
      "CI",                 "GITHUB_SHA",        "GITHUB_RUN_ID",     "GITHUB_RUN_NUMBER",
      "GITHUB_REPOSITORY",  "GITHUB_WORKFLOW",   "GITHUB_REF",        "CI_PIPELINE_ID",
      "CI_JOB_ID",          "CI_COMMIT_SHA",     "CI_PROJECT_PATH",   "BUILD_NUMBER",
      "BUILD_ID",           "BUILD_URL",         "JOB_NAME",          "GIT_COMMIT",
      "BUILDKITE_BUILD_NUMBER", "BUILDKITE_COMMIT", "CIRCLE_BUILD_NUM", "CIRCLE_SHA1",
      "TRAVIS_BUILD_NUMBER", "TF_BUILD"};
  nlohmann::json ci = nlohmann::json::object();
  for (const char* var : kCiVars) {
    if (const char* v = std::getenv(var); v && *v) ci[var] = v;
  }
  if (!ci.empty()) j["ci"] = ci;
  return j;
}

}  // namespace tsctl
