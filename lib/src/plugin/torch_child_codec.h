// The codec of the LibTorch child's answer (torch_child.h): its value or the
// tsctl::Error it threw, as one CBOR document with one version key. CBOR
// (nlohmann's binary form of a JSON value) keeps what a JSON text would
// lose: bytes that are not UTF-8 (LibTorch's messages, names from an
// archive) and doubles that are not finite (a max difference of Inf). Each
// struct's fields are listed once (torch_child_codec.cc) for the writer and
// the reader; the reader throws on a missing or mistyped field instead of
// defaulting.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "torch_child.h"

namespace tsctl {

// Bump when any struct that crosses changes.
inline constexpr int kChildCodecVersion = 2;

std::string EncodeChildValue(const ChildValue& value);
std::string EncodeChildError(const Error& error);

// Fills `out`'s value (kAnswered) or error (kRaised). Throws tsctl::Error
// (kIo) if the bytes are not a complete answer of this version.
void DecodeChildAnswer(const std::string& bytes, ChildOutcome& out);

// The model-check result as JSON, under the field names the codec uses (the
// "model" details of validate's JSON report).
nlohmann::json ModelCheckToJson(const ModelCheckResult& result);

}  // namespace tsctl
