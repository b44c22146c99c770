// tsctl stamp ARCHIVE...: producer metadata into extra/ records, in place.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "tsctl/archive.h"
#include "tsctl/zip_structure.h"
#include "tsctl/escape.h"
#include "tsctl/inspect.h"
#include "tsctl/stamp.h"

namespace tsctl::cli {
namespace {

struct StampFlags {
  std::vector<std::string> archives;
  std::string meta_path;
  std::vector<std::string> set;
  std::vector<std::string> files;
  bool show = false;
  OutputFormat format = OutputFormat::kText;
  bool no_auto = false;
  StampOptions options;
};

std::string ReadWholeFile(const std::string& path, const std::string& flag, uint64_t max_bytes,
                          const std::string& limit_hint = "--max-input-size sets it") {
  try {
    return ReadInputFile(path, max_bytes, limit_hint);
  } catch (const Error& e) {
    throw Error(e.kind(), flag + ": " + path + ": " + e.what());
  }
}

std::pair<std::string, std::string> SplitAssignment(const std::string& arg, const std::string& flag) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) throw Error(ErrorKind::kUsage, flag + " wants NAME=VALUE, got '" + arg + "'");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

int RunStamp(StampFlags& f, const GlobalOptions& global) {
  try {
    if (!f.options.output.empty() && f.archives.size() != 1) {
      throw Error(ErrorKind::kUsage, "--output takes exactly one archive");
    }
    if (f.options.repair && (!f.meta_path.empty() || !f.set.empty() || !f.files.empty() ||
                             !f.options.remove.empty() || f.options.replace || !f.options.output.empty())) {
      throw Error(ErrorKind::kUsage, "--repair only undoes an interrupted stamp; give it no other change");
    }
    f.options.auto_fields = !f.no_auto;
    if (!f.meta_path.empty()) {
      f.options.meta_json = global.max_input_bytes < kMaxMetaBytes
                                ? ReadWholeFile(f.meta_path, "--meta", global.max_input_bytes)
                                : ReadWholeFile(f.meta_path, "--meta", kMaxMetaBytes, "the limit for a producer record");
      f.options.has_meta = true;
    }
    for (const std::string& s : f.set) f.options.set.push_back(SplitAssignment(s, "--set"));
    for (const std::string& s : f.files) {
      auto [name, path] = SplitAssignment(s, "--file");
      CheckExtraName(name);
      f.options.files.emplace_back(name, ReadWholeFile(path, "--file", global.max_input_bytes));
    }
  } catch (const Error& e) {
    return Report("stamp", "", e, global);
  }
  if (f.show) {
    return ForEachArchive("stamp", f.archives, global, [&](const std::string& path) {
      Archive archive = Archive::OpenSoundModel(path, global.max_input_bytes);
      ArchiveInfo info = Inspect(archive);
      std::cout << RenderStampShow(info, f.format);
    });
  }
  if (!f.options.dry_run) {
    // Never half-apply: every archive passes every check (a dry run) before
    // the first one is written. Each failure gets its line; nothing is written.
    StampOptions check = f.options;
    check.dry_run = true;
    int status = ForEachArchive("stamp", f.archives, global, [&](const std::string& path) { Stamp(path, check); });
    if (status != 0) return status;
  }
  return ForEachArchive("stamp", f.archives, global, [&](const std::string& path) {
    StampResult result = Stamp(path, f.options);
    std::cout << Render(result, f.format, f.options.repair);
  });
}

}  // namespace

RunFn BindStamp(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<StampFlags>();
  sub->add_option("archives", f->archives, "TorchScript or .pt2 archives to stamp (changed in place unless --output)")->required();
  auto* show = sub->add_flag("--show", f->show, "Print the extra/ records instead of changing anything");
  sub->add_option("--meta", f->meta_path, "JSON object file merged into extra/producer_info.json ('-': stdin)")->excludes(show);
  sub->add_option("--meta-name", f->options.meta_name, "Name of the producer record under extra/")->capture_default_str();
  sub->add_option("--set", f->set,
                  "KEY=VALUE... into the producer record; dotted keys nest; VALUE is JSON if it parses, else a string")
      ->excludes(show);
  sub->add_option("--file", f->files, "NAME=PATH...: store the file PATH as extra/NAME")->excludes(show);
  sub->add_option("--remove", f->options.remove, "NAME...: remove the record extra/NAME")->excludes(show);
  sub->add_flag("--no-auto", f->no_auto,
                "Do not fill tsctl/LibTorch versions, user, host, time, git commit and CI variables")
      ->excludes(show);
  sub->add_option("--wait", f->options.wait_seconds,
                  "SECONDS to wait for another stamp of the same archive to finish before refusing")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--repair", f->options.repair,
                "Only undo what an interrupted in-place stamp left (a stamp does this first anyway)")
      ->excludes(show);
  sub->add_flag("--replace", f->options.replace, "Start the producer record empty instead of merging into it")->excludes(show);
  sub->add_option("-o,--output", f->options.output, "Write a new archive to this path; the original is left alone")->excludes(show);
  sub->add_flag("-n,--dry-run", f->options.dry_run, "Print what would change; write nothing")->excludes(show);
  AddFormatOption(sub, f->format, {OutputFormat::kText, OutputFormat::kJson});  // json: one document per archive and line
  return [f, &global] { return RunStamp(*f, global); };
}

}  // namespace tsctl::cli
