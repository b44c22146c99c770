// tsctl stamp ARCHIVE...: producer metadata into extra/ records, in place.
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
#include "tsctl/render_inspect.h"
#include "tsctl/text_util.h"
#include "tsctl/stamp.h"

namespace tsctl::cli {
namespace {

struct StampFlags {
  std::vector<std::string> archives;
  std::string meta_path;
  std::vector<std::string> set;
  std::vector<std::string> files;
  bool show = false;
  std::string format;
  bool no_auto = false;
  StampOptions options;
};

std::string ReadWholeFile(const std::string& path, const std::string& flag) {
  if (path == "-") {
    std::ostringstream s;
    s << std::cin.rdbuf();
    return s.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kIo, flag + ": cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error(ErrorKind::kIo, flag + ": cannot read " + path + ": " + std::strerror(errno));
  return s.str();
}

std::pair<std::string, std::string> SplitAssignment(const std::string& arg, const std::string& flag) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) throw Error(ErrorKind::kUsage, flag + " wants NAME=VALUE, got '" + arg + "'");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

void PrintShow(const ArchiveInfo& info, bool json) {
  if (json) {
    nlohmann::json j = ToJson(info);
    std::cout << DumpJson(nlohmann::json{{"schema_version", kStampSchemaVersion}, {"path", info.path}, {"extra", j["extra"]}}) << '\n';
    return;
  }
  std::cout << EscapeText(info.path) << '\n';
  if (info.extra.empty()) std::cout << "  (no extra/ records)\n";
  for (const ExtraInfo& x : info.extra) {
    std::cout << "  extra/" << EscapeText(x.name) << "  " << HumanBytes(x.size) << "  " << x.content_type << (x.truncated ? " (truncated)" : "") << '\n';
    std::string shown = x.content;
    if (x.content_type == "json") shown = DumpJson(nlohmann::json::parse(x.content, nullptr, false), 2);
    shown = EscapeText(shown, {.keep_newlines = true});
    std::istringstream lines(shown);
    std::string line;
    while (std::getline(lines, line)) std::cout << "    | " << line << '\n';
  }
}

void PrintResult(const StampResult& r, bool json, bool repair_only) {
  if (json) {
    std::cout << DumpJson(ToJson(r)) << '\n';
    return;
  }
  if (repair_only) {
    std::cout << r.path << (r.repaired ? (r.dry_run ? ": would undo an interrupted stamp\n" : ": undid an interrupted stamp\n")
                                       : ": no interrupted stamp to undo\n");
    return;
  }
  std::cout << (r.dry_run ? "would stamp " : "stamped ") << r.output;
  if (r.output != r.path) std::cout << " (from " << r.path << ")";
  std::cout << '\n';
  if (r.repaired) {
    std::cout << (r.output != r.path ? "  found an interrupted stamp in the source (read as the original)\n"
                  : r.dry_run        ? "  would undo an interrupted stamp first\n"
                                     : "  repaired: undid an interrupted stamp first\n");
  }
  for (const StampAction& a : r.actions) {
    std::cout << "  " << a.action << ' ' << a.record;
    if (a.action == "replace") std::cout << " (" << HumanBytes(a.old_size) << " -> " << HumanBytes(a.new_size) << ")";
    else if (a.action == "add") std::cout << " (" << HumanBytes(a.new_size) << ")";
    std::cout << '\n';
  }
  if (r.dry_run && !r.producer.is_null()) {
    std::istringstream lines(EscapeText(DumpJson(r.producer, 2), {.keep_newlines = true}));
    std::string line;
    while (std::getline(lines, line)) std::cout << "    | " << line << '\n';
  }
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
      f.options.meta_json = ReadWholeFile(f.meta_path, "--meta");
      f.options.has_meta = true;
    }
    for (const std::string& s : f.set) f.options.set.push_back(SplitAssignment(s, "--set"));
    for (const std::string& s : f.files) {
      auto [name, path] = SplitAssignment(s, "--file");
      CheckExtraName(name);
      f.options.files.emplace_back(name, ReadWholeFile(path, "--file"));
    }
  } catch (const Error& e) {
    return Report("stamp", "", e, global);
  }
  if (f.show) {
    return ForEachArchive("stamp", f.archives, global, [&](const std::string& path) {
      Archive archive = Archive::Open(OpenFileSource(path));
      RequireSoundStructure(archive.layout());
      PrintShow(Inspect(archive), f.format == "json");
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
    PrintResult(Stamp(path, f.options), f.format == "json", f.options.repair);
  });
}

}  // namespace

RunFn BindStamp(CLI::App* sub, const GlobalOptions& global) {
  auto f = std::make_shared<StampFlags>();
  sub->add_option("archives", f->archives, "TorchScript archives to stamp (changed in place unless --output)")->required();
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
  sub->add_flag("--repair", f->options.repair,
                "Only undo what an interrupted in-place stamp left (a stamp does this first anyway)")
      ->excludes(show);
  sub->add_flag("--replace", f->options.replace, "Start the producer record empty instead of merging into it")->excludes(show);
  sub->add_option("-o,--output", f->options.output, "Write a new archive to this path; the original is left alone")->excludes(show);
  sub->add_flag("-n,--dry-run", f->options.dry_run, "Print what would change; write nothing")->excludes(show);
  AddFormatOption(sub, f->format, {"text", "json"});  // json: one document per archive and line
  return [f, &global] { return RunStamp(*f, global); };
}

}  // namespace tsctl::cli
