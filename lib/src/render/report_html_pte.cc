// The report page of an ExecuTorch file (.pte program, .ptd data file,
// .bpte bundled program), from ReadPte's result.
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "report_html.h"
#include "tsctl/pte.h"
#include "tsctl/text_util.h"

namespace tsctl::report {
namespace {

uint64_t Elements(const std::vector<int64_t>& sizes) {
  uint64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0) return 0;
    if (s != 0 && n > UINT64_MAX / static_cast<uint64_t>(s)) return UINT64_MAX;
    n *= static_cast<uint64_t>(s);
  }
  return n;
}

Value FromPteValue(size_t index, const PteValue& v) {
  Value out{std::to_string(index), PteValueKindName(v.kind), "", ""};
  if (v.kind == PteValueKind::kTensor) {
    out.dtype = v.tensor.dtype;
    out.shape = ShapeText(v.tensor.sizes);
    if (v.tensor.dynamism != PteShapeDynamism::kStatic) {
      out.shape += std::string(" (") + PteShapeDynamismName(v.tensor.dynamism) + ")";
    }
  } else if (!v.scalar.empty()) {
    out.type += " = " + Ellipsis(v.scalar, 200);
  } else if (v.list_size) {
    out.type += " of " + Grouped(v.list_size);
  }
  return out;
}

// "QnnBackend: 1 blob, 1.62 MiB, 2 calls": each backend's blobs (one blob
// shared by several methods counted once) and delegate calls.
std::string DelegatesText(const PteProgram& program) {
  struct Backend {
    std::set<std::pair<bool, uint32_t>> blobs;
    uint64_t bytes = 0, calls = 0;
  };
  std::map<std::string, Backend> backends;
  for (const PteMethod& m : program.methods) {
    for (const PteDelegate& d : m.delegates) {
      Backend& b = backends[d.backend_id];
      if (b.blobs.insert({d.inline_data, d.index}).second) b.bytes += d.bytes;
      b.calls += d.calls;
    }
  }
  if (backends.empty()) return "none: every call is a kernel call";
  std::string out;
  for (const auto& [id, b] : backends) {
    out += (out.empty() ? "" : "; ") + id + ": " + Grouped(b.blobs.size()) + (b.blobs.size() == 1 ? " blob, " : " blobs, ") +
           HumanBytes(b.bytes) + ", " + Grouped(b.calls) + (b.calls == 1 ? " call" : " calls");
  }
  return out;
}

void MethodsSection(const PteProgram& program, Page& page) {
  std::map<std::string, uint64_t> calls;
  std::map<std::string, uint64_t> delegates;
  for (const PteMethod& m : program.methods) {
    Method method{m.name, "", {}, {}, ""};
    for (size_t i = 0; i < m.inputs.size(); ++i) method.inputs.push_back(FromPteValue(i, m.inputs[i]));
    for (size_t i = 0; i < m.outputs.size(); ++i) method.outputs.push_back(FromPteValue(i, m.outputs[i]));
    method.note = Grouped(m.instructions.kernel_calls) + " kernel calls, " + Grouped(m.instructions.delegate_calls) +
                  " delegate calls, " + Grouped(m.values) + " values";
    page.methods.push_back(std::move(method));
    for (const PteOperator& op : m.operators) calls[PteOperatorKey(op)] += op.calls;
    for (const PteDelegate& d : m.delegates) delegates[d.backend_id] += d.calls;
  }
  for (const auto& [key, n] : calls) page.operators.push_back({key, n});
  page.operators_note = "Kernel calls in the methods' instruction chains, by operator and overload (the keys a "
                        "runtime registers kernels under).";
  for (const auto& [backend, n] : delegates) {
    page.operators_note += " Delegated: " + Grouped(n) + " call(s) to " + backend + ".";
  }
  page.overview.emplace_back("delegates", DelegatesText(program));
  page.signature_note = "Each method's inputs and outputs as the program's values declare them.";
}

void StoredTensorsSection(const std::vector<Tensor>& named, size_t unnamed, Page& page) {
  if (!named.empty()) {
    page.modules = ModulesFromNames(named);
    page.modules[0].type = "stored tensors";
  }
  page.modules_note = "ExecuTorch keeps no module objects: the tree is built from the stored tensors' fully "
                      "qualified names; the role column says where each tensor's bytes are.";
  if (unnamed) page.modules_note += " " + Grouped(unnamed) + " stored tensor(s) carry no name: (unnamed) lists them.";
}

// Tensors without a name are listed apart, by method and value index.
void ProgramTensors(const PteProgram& program, Page& page) {
  std::vector<Tensor> named;
  Module unnamed;
  unnamed.name = "(unnamed)";
  unnamed.type = "stored tensors without a fully qualified name";
  for (const PteStoredTensor& s : program.tensors) {
    const PteTensor& t = s.tensor;
    Tensor row{t.fqn, PteDataLocationName(t.location), t.dtype, ShapeText(t.sizes), Elements(t.sizes), t.nbytes};
    if (t.fqn.empty()) {
      row.name = s.method + " value " + std::to_string(s.value_index);
      unnamed.tensors.push_back(std::move(row));
    } else {
      named.push_back(std::move(row));
    }
  }
  StoredTensorsSection(named, unnamed.tensors.size(), page);
  if (!unnamed.tensors.empty()) page.modules.push_back(std::move(unnamed));
  uint64_t external = 0, external_bytes = 0;
  for (const PteStoredTensor& s : program.tensors) {
    if (s.tensor.location != PteDataLocation::kExternal) continue;
    ++external;
    external_bytes += s.tensor.nbytes;
  }
  if (external) {
    page.modules_note += " " + Grouped(external) + " external tensor(s), " + HumanBytes(external_bytes) +
                         ", are another file's bytes (a .ptd): listed with their size, not counted in this file's.";
  }
}

void FlatTensors(const PteFlatTensor& data, Page& page) {
  std::vector<Tensor> named;
  size_t unnamed = 0;
  for (const PteDataTensor& t : data.tensors) {
    if (t.fqn.empty()) {
      ++unnamed;
      continue;
    }
    named.push_back({t.fqn, "data", t.dtype, ShapeText(t.sizes), Elements(t.sizes), t.nbytes});
  }
  StoredTensorsSection(named, unnamed, page);
  page.signature_note = "A .ptd holds data only: methods live in the program that refers to it.";
  page.operators_note = page.signature_note;
}

std::string PartLabel(const PteSizePart& p) {
  std::string label = p.label.empty() ? PteSizeKindName(p.kind) : p.label;
  return p.in_flatbuffer ? label + " (in the flatbuffer)" : label;
}

// The named data part split by key, where the keys' segments add up to no
// more than it (the rest: alignment between them).
bool NamedDataParts(const PteSizePart& part, const std::vector<PteNamedData>& keys, Page& page) {
  uint64_t sum = 0;
  for (const PteNamedData& k : keys) sum += k.bytes;
  if (keys.empty() || part.in_flatbuffer || sum > part.bytes) return false;
  for (const PteNamedData& k : keys) page.sizes.push_back({PteSizeKindName(part.kind), k.key, k.bytes});
  if (part.bytes > sum) page.sizes.push_back({PteSizeKindName(part.kind), "(alignment)", part.bytes - sum});
  return true;
}

void Sizes(const PteFile& file, Page& page) {
  const auto& keys = file.kind == PteKind::kFlatTensor ? file.flat_tensor.named_data : file.program.named_data;
  for (const PteSizePart& p : file.sizes) {
    if (p.kind == PteSizeKind::kNamedData && NamedDataParts(p, keys, page)) continue;
    if (p.kind == PteSizeKind::kProgram && !file.bundled.program_sizes.empty()) {
      for (const PteSizePart& q : file.bundled.program_sizes) {
        page.sizes.push_back({std::string("program: ") + PteSizeKindName(q.kind), PartLabel(q), q.bytes});
      }
      continue;
    }
    page.sizes.push_back({PteSizeKindName(p.kind), PartLabel(p), p.bytes});
  }
  page.sizes_note = "The file's size breakdown: the parts sum to the file size.";
}

void PteSummary(const PteFile& file, const std::string& path, Page& page) {
  auto add = [&](const std::string& k, const std::string& v) { page.summary.emplace_back(k, v); };
  add("file", path);
  add("kind", std::string("ExecuTorch ") + PteKindName(file.kind) + " (" + file.identifier + ")");
  add("size", HumanBytes(file.file_size) + " (" + Grouped(file.file_size) + " bytes)");
  if (file.header.present) {
    add("header", file.header.magic + ", " + Grouped(file.header.length) + " bytes; segments from byte " +
                      Grouped(file.header.segment_base_offset));
  }
  const PteProgram& p = file.program;
  if (file.kind == PteKind::kFlatTensor) {
    add("data version", std::to_string(file.flat_tensor.version));
    add("tensors", Grouped(file.flat_tensor.tensors.size()));
    add("segments", Grouped(file.flat_tensor.segments.size()));
    add("named data", Grouped(file.flat_tensor.named_data.size()) + " keys");
    return;
  }
  if (file.kind == PteKind::kBundled) {
    uint64_t cases = 0;
    for (const PteTestSuite& s : file.bundled.suites) cases += s.cases.size();
    add("bundle version", std::to_string(file.bundled.version));
    add("tests", Grouped(file.bundled.suites.size()) + " suites, " + Grouped(cases) + " cases");
    add("embedded program", HumanBytes(file.bundled.program_bytes));
  }
  add("program version", std::to_string(p.version));
  std::string methods;
  for (const PteMethod& m : p.methods) methods += (methods.empty() ? "" : ", ") + m.name;
  add("methods", Grouped(p.methods.size()) + (methods.empty() ? "" : ": " + Ellipsis(methods, 400)));
  add("stored tensors", Grouped(p.tensors.size()));
  add("segments", Grouped(p.segments.size()));
  add("named data", Grouped(p.named_data.size()) + " keys");
}

// Each method's instruction chains as tsctl graph prints them, in the code
// section (a program has no source); none where the file was read without
// its chains.
void Chains(const PteFile& file, Page& page) {
  constexpr size_t kMaxChainText = 256 * 1024;  // per method; tsctl graph prints all of it
  for (const PteMethod& m : file.program.methods) {
    if (m.chain_list.empty() && m.chains > 0) continue;
    Text t;
    t.name = m.name;
    t.text = RenderPteGraph(file, m.name, false);
    t.size = t.text.size();
    t.type = "instructions";
    if (t.text.size() > kMaxChainText) {
      t.text.resize(kMaxChainText);
      t.note = "cut at 256 KiB: tsctl graph prints it all";
    }
    page.code.push_back(std::move(t));
  }
  page.code_note = page.code.empty() ? "ExecuTorch files carry no source code."
                                     : "ExecuTorch files carry no source code: each method's instruction chains, as "
                                       "tsctl graph prints them (ExecuTorch's print_program).";
}

}  // namespace

Page PtePage(const PteFile& file, const std::string& path) {
  Page page;
  page.path = path;
  PteSummary(file, path, page);
  if (file.kind == PteKind::kFlatTensor) {
    FlatTensors(file.flat_tensor, page);
  } else {
    MethodsSection(file.program, page);
    ProgramTensors(file.program, page);
  }
  Sizes(file, page);
  page.code_note = "ExecuTorch files carry no source code.";
  if (file.kind != PteKind::kFlatTensor) Chains(file, page);
  page.extra_note = "ExecuTorch files have no extra/ records.";
  return page;
}

}  // namespace tsctl::report

namespace tsctl {

std::string RenderReportHtml(const PteFile& file, const std::string& path, const ReportGraphs& graphs) {
  report::Page page = report::PtePage(file, path);
  page.graph = graphs;
  return report::RenderPage(std::move(page));
}

}  // namespace tsctl
