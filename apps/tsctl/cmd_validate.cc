// tsctl validate ARCHIVE...: a CI gate with machine-readable reports.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "progress.h"
#include "run_flags.h"
#include "tsctl/archive.h"
#include "tsctl/atomic_file.h"
#include "tsctl/escape.h"
#include "tsctl/source.h"
#include "tsctl/validate.h"
#include "tsctl/zip_structure.h"

namespace tsctl::cli {
namespace {

struct ValidateFlags {
  std::vector<std::string> archives;
  bool allow_load_hooks = false;
  std::string rtol = "1e-5";
  std::string atol = "1e-8";
  std::string allow_ops;
  std::string allow_delegates;
  std::string require_meta;
  CLI::Option* require_meta_option = nullptr;
  OutputFormat format = OutputFormat::kText;
  std::string output;
  std::string report;  // --report FILE.html
  bool strict = false;
  bool allow_not_run = false;
  bool list_ops = false;
  bool no_load = false;
  bool no_run = false;
  int jobs = 0;  // 0: DefaultValidateJobs()
  std::string shard;
  std::vector<std::string> skip;
  CLI::Option* seed_option = nullptr;
  ValidateOptions options;
  RunFlags run;
};

// --require-meta's value: comma-separated keys, each a dotted path of
// non-empty names ("producer.version"). An empty key, an empty part of a
// dotted key, or no key at all is a usage error: a gate that checks nothing
// must not pass.
std::vector<std::string> ParseMetaKeys(const std::string& text) {
  std::vector<std::string> keys;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, ',')) {
    const size_t b = part.find_first_not_of(" \t"), e = part.find_last_not_of(" \t");
    std::string key = b == std::string::npos ? "" : part.substr(b, e - b + 1);
    if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos) {
      throw Error(ErrorKind::kUsage, "--require-meta: '" + text + "' has an empty key (give comma-separated keys such as "
                                     "producer,producer.version)");
    }
    keys.push_back(key);
  }
  if (keys.empty()) throw Error(ErrorKind::kUsage, "--require-meta needs at least one key");
  return keys;
}

// --list-ops: an archive that failed before its operators were known is one
// error line, and `status` becomes findings; the list is the library's.
std::string ListOps(const ValidationReport& report, bool several, int& status) {
  for (const auto& a : report.archives) {
    if (!a.ops.empty() || a.Count(CheckStatus::kFail) == 0) continue;
    for (const auto& c : a.checks) {
      if (c.status == CheckStatus::kFail) {
        std::cerr << "tsctl: validate: " << EscapeText(a.path) << ": " << c.id << ": " << EscapeText(c.message) << '\n';
        if (status == kExitOk) status = kExitFindings;
        break;
      }
    }
  }
  return RenderOperatorList(report, several);
}

// The flags into f.options; throws tsctl::Error (kUsage, kIo).
void OptionsFromFlags(ValidateFlags& f) {
  ValidateOptions& o = f.options;
  ApplyRunFlags(f.run, o);
  o.method_given = f.run.method->count() > 0;
  o.seed_given = f.seed_option->count() > 0;
  o.allow_load_hooks = f.allow_load_hooks;
  o.rtol = ParseNumberList(f.rtol, "--rtol", 0, 1e300, "a non-negative number");
  o.atol = ParseNumberList(f.atol, "--atol", 0, 1e300, "a non-negative number");
  if (f.require_meta_option->count() > 0) o.require_meta = ParseMetaKeys(f.require_meta);
  if (!f.allow_ops.empty()) {
    o.allow_ops = ReadOperatorList(f.allow_ops);
    o.has_allow_ops = true;
  }
  if (!f.allow_delegates.empty()) {
    std::stringstream ids(f.allow_delegates);
    for (std::string id; std::getline(ids, id, ',');) {
      if (!id.empty()) o.allow_delegates.push_back(id);
    }
    o.has_allow_delegates = true;
  }
  o.load = !f.no_load;
  o.run = !f.no_run;
  for (const std::string& id : f.skip) RequireCheckId(id, "--skip");
  o.skip = f.skip;
  if (f.list_ops) o.run = false;  // with --no-load: the static list
}

int RunValidate(ValidateFlags& f, const GlobalOptions& global) {
  ValidateOptions& o = f.options;
  try {
    OptionsFromFlags(f);
  } catch (const Error& e) {
    return Report("validate", "", e, global);
  }
  ValidationReport report;
  report.strict = f.strict;
  report.allow_not_run = f.allow_not_run;
  std::vector<std::string> archives = f.archives;
  ValidateBatchOptions batch;
  try {
    if (!f.shard.empty()) {
      auto [k, n] = ParseShard(f.shard);
      archives = ShardOf(archives, k, n);
      if (archives.empty()) {
        // More slices than archives: this one checks nothing, and says so
        // instead of printing a report that passed.
        std::cerr << "tsctl: validate: --shard " << EscapeText(f.shard) << ": no archive falls in this slice (" << f.archives.size()
                  << " given): nothing checked\n";
        return kExitOk;
      }
    }
    batch.jobs = f.jobs > 0 ? f.jobs : DefaultValidateJobs();
  } catch (const Error& e) {
    return Report("validate", "", e, global);
  }
  // On a terminal, when the report is text or goes to a file: "archives
  // checked: 3 of 8, about 12 s left", or for one archive what its LibTorch
  // child is doing ("trying inferred inputs: candidate 3").
  ProgressLine line("validate", StderrIsTerminal() && (f.format == OutputFormat::kText || !f.output.empty()));
  // Several: "archives checked: 60 of 83, about 42 s left; on model.pt for 35 s".
  size_t done_so_far = 0;
  std::string on;
  if (line.enabled() && archives.size() > 1) {
    line.Steps("archives checked:", 0, archives.size());
    batch.progress = [&](size_t done, size_t total) {
      done_so_far = done;
      line.Steps("archives checked:", done, total, on);
    };
    batch.waiting = [&](const std::string& path, double seconds) {
      on.clear();
      if (!path.empty()) {
        on = "on " + EscapeText(std::filesystem::path(path).filename().string());
        if (seconds >= 2) on += " for " + std::to_string(static_cast<int>(seconds)) + " s";
      }
      line.Steps("archives checked:", done_so_far, archives.size(), on);
    };
  } else if (line.enabled() && o.load) {
    o.progress = [&line, path = EscapeText(archives[0])](const std::string& doing) { line.Show(path + ": " + doing); };
  }
  int status = kExitOk;
  std::vector<BatchEntry> entries;
  if (int code = Guarded("validate", "", global, [&] {
        entries = ValidateBatch(archives, o, batch);
        return kExitOk;
      });
      code != kExitOk) {
    return code;
  }
  line.Clear();
  for (BatchEntry& e : entries) {
    if (e.checked) {
      report.archives.push_back(std::move(e.report));
      continue;
    }
    // Each archive that could not be checked at all: one line, in order.
    report.not_checked.push_back(e.path);
    int code = Report("validate", e.path, Error(e.error_kind, e.error, e.error_detail), global);
    if (status == kExitOk) status = code;
  }
  try {
    WriteOutput(f.output, f.list_ops ? ListOps(report, f.archives.size() > 1, status) : Render(report, f.format));
  } catch (const Error& e) {
    return Report("validate", f.output, e, global);
  }
  // The page, besides the report on stdout (or -o).
  try {
    if (!f.report.empty()) WriteFileAtomically(f.report, RenderHtml(report));
  } catch (const Error& e) {
    return Report("validate", f.report, e, global);
  }
  if (status != kExitOk || f.list_ops) return status;
  if (report.Passed()) return kExitOk;
  return report.Result() == ArchiveResult::kNotRun ? kExitNotRun : kExitFindings;
}

}  // namespace

RunFn BindValidate(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<ValidateFlags>();
  sub->add_option("archives", f->archives, "Archives to check")->required();
  f->run.help = {
      {"--method", "Method to check and run; 'all' checks every method (without forward and without --method, every "
                   "method is checked)"},
      {"--device", "cpu, cuda or cuda:N: where LibTorch loads TorchScript archives (stored tensors mapped there, as a "
                   "server does) and runs them; inputs are moved there, outputs compared on the CPU; on CUDA, cuDNN is "
                   "deterministic and TF32 off"},
      {"--no-infer", "Do not infer inputs when none are given or stored (the run is then a WARN)"},
      {"--timeout", "Seconds LibTorch may take to load and run an archive before it counts as hung (default: 60 plus 60 "
                    "per GiB of the archive)"},
  };
  AddRunFlags(sub, f->options, f->run, kAllRunFlags);
  sub->get_option("--timeout")->default_str("");
  f->seed_option = sub->get_option("--seed");
  sub->add_option("--calls", f->options.calls,
                  "Calls of the method on one copy of the model, to find state that survives a call (torch.stateful); "
                  "default: 3 to 5, drawn from --seed when given, else at random (the report says how many)")
      ->check(NumberIn(2, 1000, true, "a whole number from 2 to 1000"));
  sub->add_option("--save-outputs", f->options.save_outputs_path,
                  "Write the outputs to FILE (torch.load reads it; FILE.npz: NumPy's, arr_0, arr_1, ... flattened; FILE.npy: one tensor)");
  sub->add_option("--save-inputs", f->options.save_inputs_path,
                  "Write the inputs the run used to FILE, in the formats of --save-outputs (an ExecuTorch program: .npz or .npy)");
  sub->add_flag("--allow-load-hooks", f->allow_load_hooks,
                "Load archives whose code runs at load time (a custom __setstate__) or reads files or unchecked memory "
                "(ts.hooks is then a WARN, not a FAIL that keeps LibTorch away), and such a --reference-model");
  sub->add_option("--reference", f->options.reference_path,
                  "Expected outputs: a torch.save file of {'inputs': (x,), 'outputs': y} (tuples, not lists) or of the outputs alone");
  sub->add_option("--reference-model", f->options.reference_model_path,
                  "Run this archive too, on the same inputs, and compare outputs with it (tolerances as --reference)");
  sub->add_flag("--compare-intermediates", f->options.compare_intermediates,
                "With --reference-model: compare every intermediate tensor of the two graphs (matched by position, or by "
                "debug name) and report the first that differs beyond the tolerances (torch.intermediates)");
  sub->add_option("--rtol", f->rtol, "Relative tolerance, or one per output separated by commas")->capture_default_str();
  sub->add_option("--atol", f->atol, "Absolute tolerance, or one per output separated by commas")->capture_default_str();
  sub->add_flag("--record-reference", f->options.record_reference,
                "Store this run's inputs and outputs in extra/tsctl_reference.pt; later runs compare with them");
  sub->add_option("--save-reference", f->options.save_reference_path,
                  "Write this run's inputs and outputs to FILE (for --reference elsewhere; torch.load reads it)");
  sub->add_option("--allow-ops", f->allow_ops, "File listing the operators the deployment target has, one per line");
  sub->add_option("--kernels", f->options.pte_kernels_path,
                  "ExecuTorch: the operators the target runtime registers (one name.overload a line, or a "
                  "selected_operators.yaml); a .pte calling another fails pte.kernels");
  sub->add_option("--data", f->options.pte_data_path,
                  "ExecuTorch: the .ptd that holds a .pte's external tensors (checked by pte.data, given to the runtime; default: the .ptd named as the program beside it)");
  sub->add_option("--allow-delegates", f->allow_delegates,
                  "ExecuTorch: comma-separated backend ids a .pte may delegate to (XnnpackBackend,...); others fail pte.delegates");
  sub->add_flag("--list-ops", f->list_ops, "Print the operators the methods call, one per line, instead of a report");
  f->require_meta_option = sub->add_option("--require-meta", f->require_meta, "Comma-separated keys extra/producer_info.json must have (dotted keys nest)");
  sub->add_flag("--strict", f->strict, "Warnings fail too");
  sub->add_flag("--allow-not-run", f->allow_not_run,
                "An archive whose model was not loaded or run (NOT RUN, exit 7) does not fail the run");
  AddFormatOption(sub, f->format, {OutputFormat::kText, OutputFormat::kJson, OutputFormat::kJUnit});
  sub->add_option("-o,--output", f->output, "Write the report to FILE instead of stdout");
  sub->add_option("--report", f->report,
                  "Also write one offline HTML page for the whole run to FILE.html: a summary, then per archive its "
                  "checks, inputs, outputs and the reference's error figures");
  sub->add_option("-j,--jobs", f->jobs,
                  "Archives checked at once, each in its own worker process (default: the number of cores; 1: one after "
                  "another); reports are the same and in the same order whatever N is")
      ->check(NumberIn(1, 1024, true, "a whole number from 1 to 1024"));
  sub->add_option("--shard", f->shard,
                  "Check only the K-th of N slices of the archives given (every N-th from the K-th), e.g. 2/4 for CI matrices");
  sub->add_option("--skip", f->skip,
                  "Report this check (an id such as torch.run or zip.crc; repeatable) as SKIP, never PASS or FAIL; "
                  "torch.load and torch.run are then not run at all")
      ->allow_extra_args(false);
  sub->add_flag("--no-load", f->no_load, "Only the checks that need no LibTorch (ZIP, structure, metadata)");
  sub->add_flag("--no-run", f->no_run, "Load but do not run the method");
  return [f, &global] { return RunValidate(*f, global); };
}

}  // namespace tsctl::cli
