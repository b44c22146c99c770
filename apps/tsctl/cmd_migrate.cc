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
  OutputFormat format = OutputFormat::kText;
  std::string shard;   // "K/N"
  std::string report;  // --report FILE.html
  int jobs = 1;        // --jobs N
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

// --out-dir DIR made when missing, as mkdir -p makes it. Throws
// tsctl::Error (kIo) when it cannot be, or names something else.
void MakeOutDir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return;
  if (std::filesystem::exists(dir, ec)) throw Error(ErrorKind::kIo, "--out-dir names a file, not a folder");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kIo, "cannot create the --out-dir folder: " + ec.message());
}

// Each archive's options: the flags (parsed once: a bad one is the
// command's usage error) and its own path and output.
std::vector<MigrateOptions> OptionsFor(MigrateFlags& f) {
  MigrateOptions base = f.options;
  ApplyRunFlags(f.run, base);
  std::vector<MigrateOptions> out;
  for (const std::string& archive : f.archives) {
    MigrateOptions& o = out.emplace_back(base);
    o.path = archive;
    o.output = OutputFor(f, archive);
  }
  return out;
}

int RunMigrate(MigrateFlags& f, const GlobalOptions& global) {
  int listed = Guarded("migrate", "", global, [&] {
    f.archives = ArchivesOf(f);
    return kExitOk;
  });
  if (listed != kExitOk) return listed;
  if (f.archives.empty()) {  // a shard of a short list: nothing to do, and said so
    std::cerr << "tsctl: migrate: shard " << f.shard << " holds none of the archives given\n";
    std::cout << Render(std::vector<MigrateResult>{}, f.format) << std::flush;
    return WithPage(f, {}, kExitOk, global);
  }
  if (f.archives.size() > 1 && f.out_dir.empty()) {
    return Report("migrate", f.archives[0], Error(ErrorKind::kUsage, "more than one archive: give --out-dir DIR, not -o"),
                  global);
  }
  if (!f.out_dir.empty() && !f.options.output.empty()) {
    return Report("migrate", f.archives[0], Error(ErrorKind::kUsage, "give -o or --out-dir, not both"), global);
  }
  std::vector<MigrateOptions> todo;
  if (int bad = Guarded("migrate", f.archives[0], global, [&] {
        todo = OptionsFor(f);
        return kExitOk;
      });
      bad != kExitOk) {
    return bad;
  }
  if (!f.out_dir.empty()) {
    if (int bad = Guarded("migrate", f.out_dir, global, [&] {
          MakeOutDir(f.out_dir);
          return kExitOk;
        });
        bad != kExitOk) {
      return bad;
    }
  }
  const size_t n = f.archives.size();
  ProgressLine progress("migrate", n > 1 && StderrIsTerminal());
  size_t finished = 0;
  MigrateBatchOptions batch;
  batch.jobs = f.jobs;
  batch.started = [&](size_t i) {
    const std::string name = EscapeText(std::filesystem::path(f.archives[i]).filename().string());
    progress.Show(f.jobs > 1 ? std::to_string(i + 1) + " of " + std::to_string(n) + " started, " +
                                   std::to_string(finished) + " done: " + name
                             : std::to_string(i + 1) + " of " + std::to_string(n) + ": " + name);
  };
  // A zoo goes on past an archive refused before conversion: its line on
  // stderr as it finishes; it counts as not migrated, that line its blocker.
  batch.finished = [&](size_t i, const MigrateEntry& e, size_t done, size_t) {
    finished = done;
    if (e.migrated || n == 1 || e.error_kind == ErrorKind::kUnavailable) return;
    progress.Clear();
    Report("migrate", f.archives[i], Error(e.error_kind, e.error, e.error_detail), global);
  };
  std::vector<MigrateEntry> entries;
  if (int stopped = Guarded("migrate", n == 1 ? f.archives[0] : "", global, [&] {
        entries = MigrateBatch(todo, batch);
        return kExitOk;
      });
      stopped != kExitOk) {
    return stopped;
  }
  progress.Clear();
  std::vector<MigrateResult> results;
  for (size_t i = 0; i < n; ++i) {
    const MigrateEntry& e = entries[i];
    if (e.migrated) {
      results.push_back(e.result);
      continue;
    }
    const Error error(e.error_kind, e.error, e.error_detail);
    // An unavailable converter stops them all (and writes no page).
    if (e.error_kind == ErrorKind::kUnavailable) return Report("migrate", f.archives[i], error, global);
    if (e.error.empty()) continue;  // not started
    results.push_back(MigrateRefused(f.archives[i], error));
    // One archive: its error is the command's (and on the page).
    if (n == 1) return WithPage(f, results, Report("migrate", f.archives[i], error, global), global);
  }
  std::cout << Render(results, f.format) << std::flush;
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
  sub->add_option("--out-dir", f->out_dir,
                  "Folder for many archives' programs (ARCHIVE's stem + .pt2), made (as mkdir -p) when missing");
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
  sub->add_option("-j,--jobs", f->jobs,
                  "Archives converted at once, each in its own worker process (default 1: one after another); reports "
                  "are the same and in the same order whatever N is")
      ->check(NumberIn(1, 1024, true, "a whole number from 1 to 1024"));
  sub->add_flag("--bench", f->options.bench,
                "Time each verified model as the TorchScript archive, the .pt2 program and (with --aoti) the "
                "AOTInductor package on the sample inputs, in turns: median per form and its ratio to TorchScript's");
  sub->add_option("--bench-iters", f->options.bench_iters, "Timed calls of each form with --bench (after 3 warm-up calls)")
      ->capture_default_str()
      ->check(NumberIn(1, 1000000, true, "a whole number of at least 1"));
  sub->add_flag("--compare-intermediates", f->options.compare_intermediates,
                "Where the outputs differ, run both graphs again keeping every intermediate tensor, match their nodes "
                "(the same operator on the same shapes, in order) and name the first whose value differs, with its "
                "source line");
  AddFormatOption(sub, f->format, {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kJUnit});
  sub->add_option("--report", f->report,
                  "Also write one offline HTML page for the run to FILE.html: the stages reached, the blockers ranked, "
                  "then per archive its timings, blockers, per-output errors and the file written");
  AddRunFlags(sub, f->options, f->run, kTimeoutFlag | kLoadLibraryFlag);
  AddAllowLoadHooksFlag(sub, f->options.allow_load_hooks);
  return [f, &global] { return RunMigrate(*f, global); };
}

}  // namespace tsctl::cli
