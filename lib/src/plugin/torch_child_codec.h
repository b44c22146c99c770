// The codec of the LibTorch door (torch_child.h, torch_server.h): the
// request a child gets, and its answer (its value or the tsctl::Error it
// threw), each one CBOR document with one version key. CBOR
// (nlohmann's binary form of a JSON value) keeps what a JSON text would
// lose: bytes that are not UTF-8 (LibTorch's messages, names from an
// archive) and doubles that are not finite (a max difference of Inf). Each
// struct's fields are listed once (torch_child_codec.cc) for the writer and
// the reader; the reader throws on a missing or mistyped field instead of
// defaulting.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "torch_child.h"
#include "torch_child_sandbox.h"

namespace tsctl {

// Bump when any struct that crosses changes.
inline constexpr int kChildCodecVersion = 13;

std::string EncodeChildValue(const ChildValue& value);
std::string EncodeChildError(const Error& error);

// What the parent sends the LibTorch server for one child: the request,
// what it reads and writes, its limits, its own folder, the environment it
// gets where it runs the caller's own code (kPython, kOff; empty
// otherwise), and the descriptors the parent passes with it, by the numbers
// the request names them ("/proc/self/fd/N").
struct ChildLaunch {
  ChildRequest request;
  RequestFiles files;
  ChildLimits limits;
  std::string private_dir;
  std::vector<std::string> environment;
  std::vector<int> descriptors;
};
std::string EncodeChildLaunch(const ChildLaunch& launch);
// Throws tsctl::Error (kIo) if the bytes are not a complete request of this version.
ChildLaunch DecodeChildLaunch(const std::string& bytes);

// What the LibTorch server's plugin is (TorchBackend::StaticInfo), in its
// first word. DecodeBuildInfo throws tsctl::Error (kIo).
std::string EncodeBuildInfo(const BuildInfo& info);

// A progress event on the child's pipe (its 'P' frame); nullopt for bytes
// that are not one (a frame of another version).
std::string EncodeProgress(const ProgressEvent& event);
std::optional<ProgressEvent> DecodeProgress(const std::string& bytes);
BuildInfo DecodeBuildInfo(const std::string& bytes);

// Fills `out`'s value (kAnswered) or error (kRaised). Throws tsctl::Error
// (kIo) if the bytes are not a complete answer of this version.
void DecodeChildAnswer(const std::string& bytes, ChildOutcome& out);

// The model-check result as JSON, under the field names the codec uses (the
// "model" details of validate's JSON report).
nlohmann::json ModelCheckToJson(const ModelCheckResult& result);

}  // namespace tsctl
