// tsctl migrate: TorchScript archives to .pt2, verified. Parses flags,
// names the outputs, prints; the work is Migrate (lib).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "progress.h"
#include "run_flags.h"
#include "tsctl/atomic_file.h"
#include "tsctl/escape.h"
#include "tsctl/migrate.h"

namespace tsctl::cli {
namespace {

struct MigrateFlags {
  MigrateOptions options;
  RunFlags run;
  std::vector<std::string> archives;
  std::string out_dir;
  std::string format;
  std::string shard;   // "K/N"
  std::string report;  // --report FILE.html
  MigrateFlags() {
    run.given_flags = "--input";
    run.help = {
        {"--input", "Sample input SHAPE[:DTYPE[:channels_last]] per argument of forward (default: stored, else inferred)"},
        {"--load-inputs", "Sample inputs from FILE: torch.save of the argument tuple, or .npz"},
        {"--no-infer", "Without --input: only stored inputs, do not infer them in a child process"},
    };
  }
};

// Where one archive's program goes: -o for one archive, else DIR/STEM.pt2.
std::string OutputFor(const MigrateFlags& f, const std::string& archive) {
  if (f.out_dir.empty()) return f.options.output;
  return (std::filesystem::path(f.out_dir) / std::filesystem::path(archive).stem()).string() + ".pt2";
}

// The archives a folder holds: its regular files that start as a ZIP does
// (every TorchScript archive is one), by name; not its subfolders.
std::vector<std::string> ZipsIn(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::error_code ec;
    if (!e.is_regular_file(ec)) continue;
    char head[4] = {};
    std::ifstream in(e.path(), std::ios::binary);
    if (in.read(head, 4) && std::string_view(head, 4) == std::string_view("PK\x03\x04", 4)) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) throw Error(ErrorKind::kUsage, dir + ": no ZIP archive in this folder");
  return out;
}

// The archives given, folders expanded, then this shard's: with --shard K/N
// the K-th of every N (1-based), so N jobs over one list split it.
std::vector<std::string> ArchivesOf(const MigrateFlags& f) {
  std::vector<std::string> all;
  for (const std::string& a : f.archives) {
    std::error_code ec;
    if (std::filesystem::is_directory(a, ec)) {
      std::vector<std::string> in = ZipsIn(a);
      all.insert(all.end(), in.begin(), in.end());
    } else {
      all.push_back(a);
    }
  }
  if (f.shard.empty()) return all;
  const size_t slash = f.shard.find('/');
  const size_t k = std::stoul(f.shard.substr(0, slash)), n = std::stoul(f.shard.substr(slash + 1));
  std::vector<std::string> mine;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i % n == k - 1) mine.push_back(all[i]);
  }
  return mine;
}

// --shard K/N with 1 <= K <= N.
const CLI::Validator kShard(
    [](std::string& text) -> std::string {
      const size_t slash = text.find('/');
      const bool digits = slash != std::string::npos && slash > 0 && slash + 1 < text.size() &&
                          text.find_first_not_of("0123456789/") == std::string::npos &&
                          text.find('/', slash + 1) == std::string::npos && slash < 9 && text.size() - slash < 10;
      if (digits) {
        const unsigned long k = std::stoul(text.substr(0, slash)), n = std::stoul(text.substr(slash + 1));
        if (k >= 1 && k <= n) return {};
      }
      return "'" + text + "' is not K/N with 1 <= K <= N (e.g. 2/4)";
    },
    "K/N");

std::string Render(const std::string& format, const std::vector<MigrateResult>& results) {
  if (format == "json") return RenderMigrateJson(results) + "\n";
  if (format == "junit") return RenderMigrateJUnit(results);
  return RenderMigrateText(results);
}

// The page of the run, besides the report on stdout, when --report asks
// for it: `status`, or the code of the line saying it could not be written.
int WithPage(const MigrateFlags& f, const std::vector<MigrateResult>& results, int status, const GlobalOptions& global) {
  if (f.report.empty()) return status;
  try {
    WriteFileAtomically(f.report, RenderMigrateHtml(results));
  } catch (const Error& e) {
    return Report("migrate", f.report, e, global);
  }
  return status;
}

int RunMigrate(MigrateFlags& f, const GlobalOptions& global) {
  int listed = Guarded("migrate", "", global, [&] {
    f.archives = ArchivesOf(f);
    return kExitOk;
  });
  if (listed != kExitOk) return listed;
  if (f.archives.empty()) {  // a shard of a short list: nothing to do, and said so
    std::cerr << "tsctl: migrate: shard " << f.shard << " holds none of the archives given\n";
    std::cout << Render(f.format, {}) << std::flush;
    return WithPage(f, {}, kExitOk, global);
  }
  if (f.archives.size() > 1 && f.out_dir.empty()) {
    return Report("migrate", f.archives[0], Error(ErrorKind::kUsage, "more than one archive: give --out-dir DIR, not -o"),
                  global);
  }
  if (!f.out_dir.empty() && !f.options.output.empty()) {
    return Report("migrate", f.archives[0], Error(ErrorKind::kUsage, "give -o or --out-dir, not both"), global);
  }
  std::vector<MigrateResult> results;
  ProgressLine progress("migrate", f.archives.size() > 1 && StderrIsTerminal());
  for (const std::string& archive : f.archives) {
    progress.Show(std::to_string(results.size() + 1) + " of " + std::to_string(f.archives.size()) + ": " +
                  EscapeText(std::filesystem::path(archive).filename().string()));
    MigrateOptions o = f.options;
    o.path = archive;
    o.output = OutputFor(f, archive);
    // One archive: its error is the command's. A zoo goes on; the archive
    // counts as not migrated, with the line it got as its blocker.
    int one = Guarded("migrate", archive, global, [&]() -> int {
      ApplyRunFlags(f.run, o);
      try {
        results.push_back(Migrate(o));
      } catch (const Error& e) {
        // An unavailable converter stops them all (and writes no page).
        if (e.kind() == ErrorKind::kUnavailable) throw;
        results.push_back(MigrateRefused(archive, e));
        if (f.archives.size() == 1) throw;  // on the page; its error is the command's
        progress.Clear();
        return Report("migrate", archive, e, global);
      }
      return kExitOk;
    });
    if (one != kExitOk && f.archives.size() == 1) return results.empty() ? one : WithPage(f, results, one, global);
    if (one == kExitUnavailable) return one;
  }
  progress.Clear();
  std::cout << Render(f.format, results) << std::flush;
  int status = kExitOk;
  for (const MigrateResult& r : results) {
    if (!r.written || !r.verified) status = kExitFindings;
  }
  return WithPage(f, results, status, global);
}

}  // namespace

RunFn BindMigrate(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<MigrateFlags>();
  sub->add_option("archives", f->archives,
                  "TorchScript archives (.pt) to convert; a folder stands for the ZIP archives in it (not its subfolders)")
      ->required();
  sub->add_option("-o,--output", f->options.output, "The .pt2 to write (atomically), for one archive");
  sub->add_option("--out-dir", f->out_dir, "Folder for many archives' programs (ARCHIVE's stem + .pt2)");
  AddRunFlags(sub, f->options, f->run, kInputFlag | kLoadInputsFlag | kNoInferFlag);
  sub->add_flag("--aoti", f->options.aoti, "Also compile with AOTInductor: write an AOTInductor package (needs a C++ compiler)");
  sub->add_flag("--keep-unverified", f->options.keep_unverified,
                "Write the program even when verification fails (its extra/tsctl_migrate.json says verified: false)");
  sub->add_option("--rtol", f->options.rtol, "Relative tolerance of the comparison with the archive")->capture_default_str();
  sub->add_option("--atol", f->options.atol, "Absolute tolerance of the comparison with the archive")->capture_default_str();
  sub->add_option("--shard", f->shard,
                  "Migrate only the K-th of every N archives (1-based, in the order given, folders by name): N jobs "
                  "with 1/N ... N/N split a zoo")
      ->check(kShard);
  AddFormatOption(sub, f->format, {"text", "json", "junit"});
  sub->add_option("--report", f->report,
                  "Also write one offline HTML page for the run to FILE.html: the stages reached, the blockers ranked, "
                  "then per archive its timings, blockers, per-output errors and the file written");
  AddRunFlags(sub, f->options, f->run, kTimeoutFlag | kLoadLibraryFlag);
  return [f, &global] { return RunMigrate(*f, global); };
}

}  // namespace tsctl::cli
