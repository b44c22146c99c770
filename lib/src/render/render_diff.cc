// Text and JSON renderings of a DiffResult.
#include <map>
#include <cmath>
#include <cstdio>

#include "../text/json_util.h"
#include "../text/units.h"
#include "render_json.h"
#include "tsctl/diff.h"
#include "tsctl/escape.h"
#include "tsctl/text_diff.h"

namespace tsctl {
namespace {

using nlohmann::json;

json Finite(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

char Mark(ChangeKind k) { return k == ChangeKind::kAdded ? '+' : k == ChangeKind::kRemoved ? '-' : '~'; }

std::string Fields(const std::vector<FieldChange>& fields) {
  std::string s;
  for (const FieldChange& f : fields) {
    if (!s.empty()) s += ", ";
    s += f.field + " ";
    if (f.b.empty()) {
      s += EscapeText(f.a);  // removed: only A's value
    } else {
      if (!f.a.empty()) s += EscapeText(f.a) + " -> ";
      s += EscapeText(f.b);
    }
  }
  return s;
}

json FieldsJson(const std::vector<FieldChange>& fields) {
  json j = json::array();
  for (const FieldChange& f : fields) j.push_back({{"field", f.field}, {"a", f.a}, {"b", f.b}});
  return j;
}

json ChangeJson(const TensorChange& t) {
  json j = {{"name", t.name}, {"role", t.role}, {"change", ChangeKindName(t.kind)},
            {"dtype_a", t.dtype_a}, {"dtype_b", t.dtype_b}, {"values_compared", t.values_compared},
            {"note", t.note}};
  j["shape_a"] = t.shape_a;
  j["shape_b"] = t.shape_b;
  if (t.values_compared) {
    j["values"] = {{"numel", t.values.numel},        {"differing", t.values.differing},
                   {"max_abs", Finite(t.values.max_abs)}, {"max_rel", Finite(t.values.max_rel)},
                   {"nan_mismatch", t.values.nan_mismatch}};
  }
  return j;
}

std::string TensorText(const TensorChange& t) {
  std::string s = std::string(1, Mark(t.kind)) + " " + EscapeText(t.name) + " (" + t.role + ")";
  if (t.kind == ChangeKind::kAdded) return s + " " + EscapeText(t.dtype_b) + " " + ShapeText(t.shape_b) + (t.note.empty() ? "" : ": " + EscapeText(t.note));
  if (t.kind == ChangeKind::kRemoved) return s + " " + EscapeText(t.dtype_a) + " " + ShapeText(t.shape_a) + (t.note.empty() ? "" : ": " + EscapeText(t.note));
  s += " " + EscapeText(t.dtype_a) + " " + ShapeText(t.shape_a) + ":";
  if (t.values_compared && (t.values.differing > 0 || t.values.nan_mismatch)) {
    s += " " + std::to_string(t.values.differing) + " of " + std::to_string(t.values.numel) +
         " elements differ, max abs " + ShortNumber(t.values.max_abs) + ", max rel " + ShortNumber(t.values.max_rel);
    if (t.values.nan_mismatch) s += ", NaN on one side";
    if (!t.note.empty()) s += ";";
  }
  if (!t.note.empty()) s += " " + EscapeText(t.note);
  return s;
}

void Indented(std::ostream& out, const std::string& diff) {
  for (std::string_view line : SplitLines(diff)) out << "      " << EscapeText(std::string(line)) << '\n';
}

}  // namespace

nlohmann::json ToJson(const DiffResult& r) {
  json j = {{"schema_version", kDiffSchemaVersion},
            {"a", {{"path", r.path_a}, {"kind", r.kind_a}}},
            {"b", {{"path", r.path_b}, {"kind", r.kind_b}}},
            {"equal", r.Equal()},
            {"formats_differ", r.formats_differ}};
  json sections = json::object();
  for (const SectionResult& s : r.sections) {
    json js = {{"compared", s.compared}};
    js["equal"] = s.compared ? json(s.equal) : json(nullptr);
    js["reason"] = s.compared ? json(nullptr) : json(s.not_compared_reason);
    json changes = json::array();
    switch (s.section) {
      case DiffSection::kFormat:
        changes = FieldsJson(r.format);
        break;
      case DiffSection::kRecords:
        for (const RecordChange& c : r.records) {
          changes.push_back({{"name", c.name}, {"change", ChangeKindName(c.kind)}, {"fields", FieldsJson(c.fields)},
                             {"covered_by", c.covered_by}, {"counts", c.counts}});
        }
        break;
      case DiffSection::kModules:
        for (const ModuleChange& c : r.modules) {
          changes.push_back({{"path", c.path}, {"what", c.what}, {"change", ChangeKindName(c.kind)}, {"fields", FieldsJson(c.fields)}});
        }
        break;
      case DiffSection::kParameters:
        for (const TensorChange& t : r.parameters) changes.push_back(ChangeJson(t));
        break;
      case DiffSection::kConstants:
        for (const TensorChange& t : r.constants) changes.push_back(ChangeJson(t));
        break;
      case DiffSection::kCode:
        for (const CodeChange& c : r.code) {
          json jc = {{"class", c.class_name}, {"method", c.method}, {"change", ChangeKindName(c.kind)},
                     {"unified_diff", c.unified_diff}};
          if (!c.class_b.empty()) jc["class_b"] = c.class_b;
          changes.push_back(std::move(jc));
        }
        break;
      case DiffSection::kOperators:
        for (const std::string& op : r.operators_added) changes.push_back({{"operator", op}, {"change", "added"}});
        for (const std::string& op : r.operators_removed) changes.push_back({{"operator", op}, {"change", "removed"}});
        break;
      case DiffSection::kExtra:
        for (const ExtraChange& c : r.extra) {
          json jc = {{"name", c.name}, {"change", ChangeKindName(c.kind)}, {"content_type", c.content_type},
                     {"fields", FieldsJson(c.fields)}, {"unified_diff", c.unified_diff}};
          jc["json_changes"] = json::array();
          for (const JsonChange& k : c.json_changes) {
            jc["json_changes"].push_back({{"pointer", k.pointer}, {"change", ChangeKindName(k.kind)}, {"a", k.a}, {"b", k.b}});
          }
          changes.push_back(std::move(jc));
        }
        break;
    }
    js["changes"] = std::move(changes);
    sections[DiffSectionName(s.section)] = std::move(js);
  }
  j["sections"] = std::move(sections);
  j["warnings"] = r.warnings;
  return j;
}

// Records that make a difference by themselves, all; those whose contents
// another section compares (a weight's storage: parameters), the first
// kMaxCoveredRecords, then how many more per section: a re-saved model
// changes hundreds, and "records: same" is not to be followed by a page.
void RecordsText(const std::vector<RecordChange>& records, std::ostream& out) {
  constexpr size_t kMaxCoveredRecords = 10;
  size_t covered = 0;
  std::map<std::string, size_t> more;
  for (const RecordChange& c : records) {
    if (!c.counts && covered++ >= kMaxCoveredRecords) {
      ++more[c.covered_by];
      continue;
    }
    out << "  " << Mark(c.kind) << ' ' << EscapeText(c.name);
    if (!c.fields.empty()) out << ": " << Fields(c.fields);
    if (!c.counts) out << " (contents: see " << c.covered_by << ")";
    out << '\n';
  }
  if (more.empty()) return;
  size_t n = 0;
  std::string by;
  for (const auto& [section, count] : more) {
    n += count;
    by += (by.empty() ? "" : ", ") + section + " " + std::to_string(count);
  }
  out << "  ... and " << n << " more records whose contents other sections compare (" << by
      << "); --format json lists every one\n";
}

void RenderDiffText(const DiffResult& r, std::ostream& out) {
  out << "A: " << EscapeText(r.path_a) << " (" << r.kind_a << ")\n";
  out << "B: " << EscapeText(r.path_b) << " (" << r.kind_b << ")\n";
  if (r.formats_differ) out << "the two archives have different formats\n";
  std::vector<std::string> different;
  for (const SectionResult& s : r.sections) {
    const char* name = DiffSectionName(s.section);
    if (!s.compared) {
      out << name << ": not compared (" << s.not_compared_reason << ")\n";
      continue;
    }
    out << name << ": " << (s.equal ? "same" : "different") << '\n';
    if (!s.equal) different.push_back(name);
    switch (s.section) {
      case DiffSection::kFormat:
        for (const FieldChange& f : r.format) out << "  ~ " << f.field << ": " << EscapeText(f.a) << " -> " << EscapeText(f.b) << '\n';
        break;
      case DiffSection::kRecords:
        RecordsText(r.records, out);
        break;
      case DiffSection::kModules:
        for (const ModuleChange& c : r.modules) {
          out << "  " << Mark(c.kind) << ' ' << c.what << ' ' << (c.path.empty() ? "(root)" : EscapeText(c.path)) << ": "
              << Fields(c.fields) << '\n';
        }
        break;
      case DiffSection::kParameters:
        for (const TensorChange& t : r.parameters) out << "  " << TensorText(t) << '\n';
        break;
      case DiffSection::kConstants:
        for (const TensorChange& t : r.constants) out << "  " << TensorText(t) << '\n';
        break;
      case DiffSection::kCode:
        for (const CodeChange& c : r.code) {
          out << "  " << Mark(c.kind) << ' ' << (c.method.empty() ? "class " : "") << EscapeText(c.class_name);
          if (!c.method.empty()) out << (c.method[0] == '(' ? " " : ".") << EscapeText(c.method);
          if (!c.class_b.empty()) out << " (B: " << EscapeText(c.class_b) << ")";
          out << '\n';
          Indented(out, c.unified_diff);
        }
        break;
      case DiffSection::kOperators:
        for (const std::string& op : r.operators_added) out << "  + " << EscapeText(op) << '\n';
        for (const std::string& op : r.operators_removed) out << "  - " << EscapeText(op) << '\n';
        break;
      case DiffSection::kExtra:
        for (const ExtraChange& c : r.extra) {
          out << "  " << Mark(c.kind) << " extra/" << EscapeText(c.name);
          if (c.kind == ChangeKind::kChanged) out << " (" << c.content_type << ")";
          if (!c.fields.empty()) out << ": " << Fields(c.fields);
          out << '\n';
          for (const JsonChange& k : c.json_changes) {
            out << "      " << Mark(k.kind) << ' ' << (k.pointer.empty() ? "(root)" : EscapeText(k.pointer)) << ": ";
            if (k.kind == ChangeKind::kChanged) out << EscapeText(k.a) << " -> " << EscapeText(k.b);
            else out << EscapeText(k.kind == ChangeKind::kAdded ? k.b : k.a);
            out << '\n';
          }
          Indented(out, c.unified_diff);
        }
        break;
    }
  }
  out << "result: ";
  if (different.empty()) {
    out << "same\n";
  } else {
    out << "different (";
    for (size_t i = 0; i < different.size(); ++i) out << (i ? ", " : "") << different[i];
    out << ")\n";
  }
}

std::string RenderJson(const DiffResult& result) { return DumpJson(ToJson(result)); }

}  // namespace tsctl
