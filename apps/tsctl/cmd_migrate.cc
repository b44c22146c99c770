// tsctl migrate: TorchScript archives to .pt2, verified. Parses flags,
// names the outputs, prints; the work is Migrate (lib).
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "run_flags.h"
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

int RunMigrate(MigrateFlags& f, const GlobalOptions& global) {
  if (f.archives.size() > 1 && f.out_dir.empty()) {
    return Report("migrate", f.archives[0], Error(ErrorKind::kUsage, "more than one archive: give --out-dir DIR, not -o"),
                  global);
  }
  if (!f.out_dir.empty() && !f.options.output.empty()) {
    return Report("migrate", f.archives[0], Error(ErrorKind::kUsage, "give -o or --out-dir, not both"), global);
  }
  std::vector<MigrateResult> results;
  for (const std::string& archive : f.archives) {
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
        // An unavailable converter stops them all.
        if (f.archives.size() == 1 || e.kind() == ErrorKind::kUnavailable) throw;
        results.push_back(MigrateRefused(archive, e));
        return Report("migrate", archive, e, global);
      }
      return kExitOk;
    });
    if (one != kExitOk && f.archives.size() == 1) return one;
    if (one == kExitUnavailable) return one;
  }
  std::cout << (f.format == "json" ? RenderMigrateJson(results) + "\n" : RenderMigrateText(results)) << std::flush;
  for (const MigrateResult& r : results) {
    if (!r.written || !r.verified) return kExitFindings;
  }
  return kExitOk;
}

}  // namespace

RunFn BindMigrate(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<MigrateFlags>();
  sub->add_option("archives", f->archives, "TorchScript archives (.pt) to convert")->required();
  sub->add_option("-o,--output", f->options.output, "The .pt2 to write (atomically), for one archive");
  sub->add_option("--out-dir", f->out_dir, "Folder for many archives' programs (ARCHIVE's stem + .pt2)");
  AddRunFlags(sub, f->options, f->run, kInputFlag | kLoadInputsFlag | kNoInferFlag);
  sub->add_flag("--aoti", f->options.aoti, "Also compile with AOTInductor: write an AOTInductor package (needs a C++ compiler)");
  sub->add_flag("--keep-unverified", f->options.keep_unverified,
                "Write the program even when verification fails (its extra/tsctl_migrate.json says verified: false)");
  sub->add_option("--rtol", f->options.rtol, "Relative tolerance of the comparison with the archive")->capture_default_str();
  sub->add_option("--atol", f->options.atol, "Absolute tolerance of the comparison with the archive")->capture_default_str();
  AddFormatOption(sub, f->format, {"text", "json"});
  AddRunFlags(sub, f->options, f->run, kTimeoutFlag | kLoadLibraryFlag);
  return [f, &global] { return RunMigrate(*f, global); };
}

}  // namespace tsctl::cli
