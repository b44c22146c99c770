// .pt2 archives without LibTorch: the programs (pt2_program.cc), their
// weights and constants configs, sample inputs, AOTInductor packages and the
// early layout's state dict.
#include "tsctl/pt2.h"

#include <map>

#include "pt2_internal.h"
#include "pt2_json.h"
#include "tsctl/dtype.h"
#include "tsctl/error.h"
#include "tsctl/text_util.h"

namespace tsctl {
namespace {

using namespace pt2_json;

// Configs are small (one entry per tensor); 64 MiB bounds a hostile one.
constexpr uint64_t kMaxConfigBytes = uint64_t{64} << 20;

std::string ReadSmall(const Archive& a, const std::string& record, Pt2Info& info) {
  if (!a.Has(record)) return "";
  try {
    return a.Read(record, 256);
  } catch (const Error& e) {
    info.warnings.push_back(record + ": " + e.what());
    return "";
  }
}

// Applies a weights or constants config ({"config": {fqn: PayloadMeta}}) to
// the model's tensors: dtype and shape from it, the file and its size.
void ApplyConfig(const Archive& a, const std::string& record, const std::string& dir, Pt2Model& m, Pt2Info& info) {
  json config;
  try {
    config = ReadJson(a, record, kMaxConfigBytes);
  } catch (const Error& e) {
    info.warnings.push_back(e.what());
    return;
  }
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < m.tensors.size(); ++i) by_name[m.tensors[i].name] = i;
  for (const auto& [fqn, payload] : Object(config, "config").items()) {
    auto it = by_name.find(fqn);
    if (it == by_name.end()) {
      Pt2Tensor t;
      t.name = fqn;
      t.role = dir == "data/constants/" ? "constant" : Bool(payload, "is_param") ? "parameter" : "buffer";
      t.in_signature = false;  // stored, unused: torch.export.load keeps it in the state dict
      m.tensors.push_back(t);
      it = by_name.emplace(fqn, m.tensors.size() - 1).first;
    }
    Pt2Tensor& t = m.tensors[it->second];
    if (const json* meta = Field(payload, "tensor_meta")) pt2_internal::SetMeta(ReadTensorMeta(*meta), t);
    t.use_pickle = Bool(payload, "use_pickle");
    std::string path = Str(payload, "path_name");
    if (path.empty()) continue;
    t.file = dir + path;
    if (const ZipEntry* e = a.Find(t.file)) {
      t.file_present = true;
      t.file_size = e->uncompressed_size;
    }
  }
}

// Marks tensors stored in one file (tied weights, views of one storage).
void MarkShared(Pt2Model& m) {
  std::map<std::string, std::string> first;
  for (Pt2Tensor& t : m.tensors) {
    if (t.file.empty()) continue;
    auto [it, inserted] = first.emplace(t.file, t.name);
    if (!inserted) t.shared_with = it->second;
  }
}

void ReadModels(const Archive& a, Pt2Info& info) {
  for (const auto& [name, record] : Pt2ProgramRecords(a)) {
    Pt2Model m;
    try {
      m = pt2_internal::ReadProgram(a, name, record);
    } catch (const Error& e) {
      info.warnings.push_back(e.what());
      continue;
    }
    if (a.kind() == ArchiveKind::kPt2) {
      for (auto [cfg, dir] : {std::pair<std::string, std::string>{"data/weights/" + name + "_weights_config.json", "data/weights/"},
                              {"data/constants/" + name + "_constants_config.json", "data/constants/"}}) {
        if (!a.Has(cfg)) continue;
        (dir == "data/weights/" ? m.weights_config : m.constants_config) = cfg;
        ApplyConfig(a, cfg, dir, m, info);
      }
    } else {
      for (Pt2Tensor& t : m.tensors) {
        t.file = t.role == "constant" ? "serialized_constants.json" : "serialized_state_dict.json";
        t.file_present = a.Has(t.file);
      }
    }
    if (a.kind() == ArchiveKind::kPt2) MarkShared(m);  // the early layout has one file for all
    std::string sample = "data/sample_inputs/" + name + ".pt";
    if (const ZipEntry* e = a.Find(sample)) {
      m.sample_inputs = sample;
      m.sample_inputs_size = e->uncompressed_size;
      pt2_internal::ReadSampleInputs(a, m);
    }
    info.models.push_back(std::move(m));
  }
}

void ReadAoti(const Archive& a, Pt2Info& info) {
  const std::string dir = "data/aotinductor/";
  std::map<std::string, size_t> index;
  for (const std::string& name : a.RecordsUnder(dir)) {
    size_t slash = name.find('/', dir.size());
    if (slash == std::string::npos) continue;
    std::string model = name.substr(dir.size(), slash - dir.size());
    auto it = index.find(model);
    if (it == index.end()) {
      it = index.emplace(model, info.aoti.size()).first;
      info.aoti.push_back({model, {}, {}, ""});
    }
    Pt2AotiModel& m = info.aoti[it->second];
    m.files.emplace_back(name, a.Find(name)->uncompressed_size);
    const std::string suffix = "_metadata.json";
    // The wrapper's and the kernel's metadata are copies: the first is shown.
    if (m.metadata_record.empty() && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      try {
        json meta = ReadJson(a, name, kMaxConfigBytes);
        m.metadata_record = name;
        if (!meta.is_object()) throw Error(ErrorKind::kFormat, name + ": not a JSON object");
        for (const auto& [key, value] : meta.items()) {
          m.metadata.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
        }
      } catch (const Error& e) {
        info.warnings.push_back(e.what());
      }
    }
  }
}

// The early layout's weights: torch.save archives under .json names.
void ReadEarlyNotes(const Archive& a, Pt2Info& info) {
  for (const char* record : {"serialized_state_dict.json", "serialized_constants.json"}) {
    const ZipEntry* e = a.Find(record);
    if (!e) continue;
    // Its first bytes tell what it is; stored records are read in place.
    std::string head;
    try {
      if (e->method == kZipStored && e->local_header_error.empty() && e->uncompressed_size >= 4) {
        head = a.source().ReadString(e->data_offset, 4);
      }
    } catch (const Error& err) {
      info.warnings.push_back(std::string(record) + ": " + err.what());
      continue;
    }
    std::string what = head.empty()          ? "a compressed record"
                       : head == "PK\x03\x04" ? "a torch.save archive (a ZIP holding a pickled dict of tensors)"
                       : static_cast<unsigned char>(head[0]) == 0x80 ? "a pickle"
                                                                     : "neither a torch.save archive nor a pickle";
    info.notes.push_back(std::string(record) + ": " + what + ", " + HumanBytes(e->uncompressed_size) +
                         ", despite its name not JSON; tensors are listed from the program's metadata, their bytes "
                         "are not read");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> Pt2ProgramRecords(const Archive& a) {
  std::vector<std::pair<std::string, std::string>> out;
  if (a.kind() == ArchiveKind::kPt2Early) {
    out.emplace_back("model", "serialized_exported_program.json");
    return out;
  }
  for (const std::string& n : a.RecordsUnder("models/")) {
    if (n.size() <= 12 || n.compare(n.size() - 5, 5, ".json") != 0 || n.find('/', 7) != std::string::npos) continue;
    out.emplace_back(n.substr(7, n.size() - 12), n);
  }
  return out;
}

uint64_t Pt2ElementSize(const std::string& dtype) {
  const DtypeInfo* d = DtypeByName(dtype);
  return d && d->pt2 ? d->size : 0;  // a dtype .pt2's schema names
}

Pt2Info ReadPt2(const Archive& a) {
  if (!IsPt2(a.kind())) throw Error(ErrorKind::kFormat, std::string("not a .pt2 archive (") + ArchiveKindName(a.kind()) + ")");
  Pt2Info info;
  info.layout = a.kind() == ArchiveKind::kPt2       ? "exported-program"
                : a.kind() == ArchiveKind::kPt2Aoti ? "aoti-package"
                                                    : "early-exported-program";
  info.archive_format = ReadSmall(a, "archive_format", info);
  info.archive_version = ReadSmall(a, "archive_version", info);
  ReadModels(a, info);
  ReadAoti(a, info);
  if (a.kind() == ArchiveKind::kPt2Early) ReadEarlyNotes(a, info);
  return info;
}

}  // namespace tsctl
