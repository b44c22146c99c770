// The parent's streaming reader of a child's frames (lib/src/plugin/frame_stream.h):
// frames split anywhere, files streamed to the paths the request named,
// others refused, a file past the limit not written.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "frame_stream.h"
#include "process.h"

namespace tsctl {
namespace {

std::string Frame(char type, const std::string& payload) {
  std::string f(kFrameHeader, '\0');
  f[0] = type;
  PutLength(f.data() + 1, static_cast<uint32_t>(payload.size()));
  return f + payload;
}

std::string FileFrame(const std::string& path, const std::string& bytes) {
  std::string p(4, '\0');
  PutLength(p.data(), static_cast<uint32_t>(path.size()));
  return Frame('W', p + path + bytes);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("frame stream: files stream to named paths, other frames whole, in any pieces", "[frame_stream]") {
  const std::string dir = std::filesystem::temp_directory_path() / ("tsctl-frames-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = dir + "/out.bin", other = dir + "/other.bin", big = dir + "/big.bin";
  std::string body(200000, 'x');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 7);
  const std::string stream = Frame('P', "progress") + FileFrame(out, body) + FileFrame(other, "no") +
                             FileFrame(big, std::string(300000, 'b')) + Frame('A', "") + Frame('A', "answer");
  for (size_t piece : {size_t{1}, size_t{3}, size_t{4096}, stream.size()}) {
    std::filesystem::remove(out);
    std::vector<std::pair<char, std::string>> frames;
    FrameStream s('W', {out, big}, 250000, [&](char type, std::string payload) { frames.emplace_back(type, payload); });
    for (size_t at = 0; at < stream.size(); at += piece) s.Feed(stream.data() + at, std::min(piece, stream.size() - at));
    CHECK(frames == std::vector<std::pair<char, std::string>>{{'P', "progress"}, {'A', ""}, {'A', "answer"}});
    CHECK(ReadAll(out) == body);
    CHECK_FALSE(std::filesystem::exists(other));
    CHECK(s.unnamed_file());
    CHECK_FALSE(std::filesystem::exists(big));
    CHECK(s.write_error().find("--max-output-size") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace tsctl
