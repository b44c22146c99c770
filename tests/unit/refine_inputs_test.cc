// RefineFromError: LibTorch's own messages (as 1.13 and 2.x word them) turned
// into the next inferred candidate.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "refine_inputs.h"
#include "refine_rules.h"

using namespace tsctl;

namespace {

std::string Refined(const std::vector<ArgSpec>& args, const std::string& error, size_t which = 0) {
  std::optional<Refinement> r = RefineFromError(args, error);
  if (!r) return "";
  REQUIRE(r->args.size() == args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (i != which) CHECK(r->args[i].value == args[i].value);
  }
  CHECK(!r->note.empty());
  return r->args[which].value;
}

}  // namespace

TEST_CASE("refine: a convolution's channels and rank", "[refine]") {
  CHECK(Refined({{"x", "1x3x224x224:float32"}},
                "RuntimeError: Given groups=1, weight of size [8, 6, 3, 3], expected input[1, 3, 224, 224] to have 6 "
                "channels, but got 3 channels instead") == "1x6x224x224:float32");
  CHECK(Refined({{"x", "1x16:float32"}},
                "Expected 4-dimensional input for 4-dimensional weight [8, 6, 3, 3], but got 2-dimensional input of size "
                "[1, 16] instead") == "1x6x224x224:float32");
  CHECK(Refined({{"x", "1x3x224x224:float32"}},
                "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [1, 3, 224, 224]") ==
        "1x3x128:float32");
}

TEST_CASE("refine: a matrix product's inner size, on the argument that has the wrong one", "[refine]") {
  CHECK(Refined({{"a", "1x8:float32"}, {"b", "1x16:float32"}},
                "mat1 and mat2 shapes cannot be multiplied (1x16 and 128x10)", 1) == "1x128:float32");
}

TEST_CASE("refine: a product's inner size on an argument concatenated with a few features first", "[refine]") {
  // cat([x, ones], 2) @ w.t(): 225 = 224 + 1; w wants 8, so x gets 7.
  CHECK(Refined({{"x", "3x224x224:float32"}}, "mat1 and mat2 shapes cannot be multiplied (672x225 and 8x32)") ==
        "3x224x7:float32");
  // A flattened image is far from any argument's size: not this rule's case.
  CHECK(Refined({{"x", "1x3x28x28:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x2352 and 784x10)") ==
        "1x3x16x16:float32");
}

TEST_CASE("refine: matrix-vector products and signals", "[refine]") {
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "vector + matrix @ vector expected, got 1, 2, 4") == "224:float32");
  CHECK(Refined({{"x", "16:float32"}}, "size mismatch, got 2, 2x6,16") == "6:float32");
  CHECK(Refined({{"x", "1x1x16000:float32"}},
                "stft(CPUFloatType[1, 1, 16320], n_fft=320, hop_length=160, win_length=320, window=None, "
                "normalized=0, onesided=None, return_complex=None) : expected a 1D or 2D tensor") == "1x16000:float32");
  CHECK(Refined({{"x", "1x16:float32"}},
                "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding "
                "(160, 160) at dimension 2 of input [1, 1, 16]") == "1x16000:float32");
}

TEST_CASE("refine: a count that grows with the input's area", "[refine]") {
  // Anchors of a detector: 2890 at 224x224, 9984 wanted.
  CHECK(Refined({{"x", "1x3x224x224:float32"}},
                "The size of tensor a (2890) must match the size of tensor b (9984) at non-singleton dimension 1") ==
        "1x3x416x416:float32");
  // Rounding gives the same size back: the common size of nearest area.
  CHECK(Refined({{"x", "1x3x416x416:float32"}},
                "The size of tensor a (9949) must match the size of tensor b (9984) at non-singleton dimension 1") ==
        "1x3x360x480:float32");
  // A common size nearer than the scaled square: 240x320 (76800) for 77043.
  CHECK(Refined({{"x", "1x3x224x224:float32"}},
                "The size of tensor a (3087) must match the size of tensor b (4740) at non-singleton dimension 1") ==
        "1x3x240x320:float32");
  // A video's frames keep their number; height and width scale.
  CHECK(Refined({{"clip", "1x3x8x32x32:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x1024 and 4096x7)") ==
        "1x3x8x64x64:float32");
  // A flattened 23x23 feature map where a 1-D convolution wants 21x21.
  CHECK(Refined({{"x", "1x3x224x224:float32"}},
                "Given groups=1, weight of size [1, 441, 1], expected input[1, 529, 40] to have 441 channels, but got "
                "529 channels instead") == "1x3x204x204:float32");
  // A count exactly proportional to the area (2 per pixel: 100352 at
  // 224x224) whose wanted area (2000 pixels) has no square side: the most
  // nearly square pair of multiples of 4, wider than high.
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x100352 and 4000x64)") ==
        "1x3x20x100:float32");
  // A signal's length.
  CHECK(Refined({{"x", "1x1x16000:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x4000 and 1000x2)") ==
        "1x1x4000:float32");
  // A size the argument has is another rule's case; so is an integer argument.
  CHECK(Refined({{"x", "1x16:int64"}},
                "The size of tensor a (2890) must match the size of tensor b (9984) at non-singleton dimension 1")
            .empty());
}

TEST_CASE("refine: a traced view's sizes, integer indices, broadcasts, recurrent layers and norms", "[refine]") {
  CHECK(Refined({{"x", "1x3x32x32:float32"}}, "shape '[3, 4, 256]' is invalid for input of size 3072") ==
        "3x4x256:float32");
  CHECK(Refined({{"x", "1x3x32x32:float32"}}, "shape '[-1, 20, 2, 10, 3]' is invalid for input of size 3072") ==
        "1x20x2x10x3:float32");
  CHECK(Refined({{"x", "1x3x32x32:float32"}}, "shape '[-1, -1, 256]' is invalid for input of size 3072").empty());
  CHECK(Refined({{"ids", "1x16:float32"}},
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
                "got torch.FloatTensor instead (while checking arguments for embedding)") ==
        "1x16:int64:randint:0:2");
  CHECK(Refined({{"x", "1x3x224x224:float32"}},
                "The size of tensor a (224) must match the size of tensor b (64) at non-singleton dimension 3") ==
        "1x3x224x64:float32");
  CHECK(Refined({{"x", "1x8x224:float32"}}, "input.size(-1) must be equal to input_size. Expected 40, got 224") ==
        "1x8x40:float32");
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "input must have 3 dimensions, got 4") == "1x8x224:float32");
  CHECK(Refined({{"x", "1x16:float32"}},
                "Given normalized_shape=[768], expected input with shape [*, 768], but got input of size[1, 16]") ==
        "1x768:float32");
  CHECK(Refined({{"x", "1x3x64x64:float32"}}, "running_mean should contain 64 elements not 3") == "1x64x64x64:float32");
}

TEST_CASE("refine: concatenations and dimensions an operator reads", "[refine]") {
  CHECK(Refined({{"s", "1x3x224x512:float32"}, {"t", "1x3x224x224:float32"}},
                "Sizes of tensors must match except in dimension 1. Expected size 512 but got size 224 for tensor number "
                "1 in the list.",
                1) == "1x3x224x512:float32");
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "Tensors must have same number of dimensions: got 4 and 3") ==
        "3x224x224:float32");
  CHECK(Refined({{"x", "1x16:float32"}}, "Dimension out of range (expected to be in range of [-2, 1], but got 2)") ==
        "1x1x16:float32");
}

TEST_CASE("refine: a dictionary argument gets the key the code reads", "[refine]") {
  const std::string batch = R"({"input":"1x3x224x224:float32"})";
  CHECK(Refined({{"batch", batch}}, "RuntimeError: KeyError: foo at File \"code/__torch__.py\", line 8, in generate") ==
        R"({"foo":"1x3x224x224:float32","input":"1x3x224x224:float32"})");
  // The next key, on the dictionary that already has the first.
  CHECK(Refined({{"batch", R"({"foo":"2:float32"})"}}, "KeyError: bar\n") == R"({"bar":"2:float32","foo":"2:float32"})");
  // Quoted keys; the second dictionary when the first has the key.
  CHECK(Refined({{"a", R"({"foo":"2:float32"})"}, {"b", R"({"x":"3:int64"})"}}, "KeyError: 'foo'", 1) ==
        R"({"foo":"3:int64","x":"3:int64"})");
  CHECK_FALSE(RefineFromError({{"x", "1x3:float32"}}, "KeyError: foo").has_value());
}

TEST_CASE("refine: nothing for messages no rule reads, or without a tensor argument to change", "[refine]") {
  CHECK_FALSE(RefineFromError({{"x", "1x3x224x224:float32"}}, "some other error").has_value());
  CHECK_FALSE(RefineFromError({{"k", "3"}}, "mat1 and mat2 shapes cannot be multiplied (1x16 and 128x10)").has_value());
  CHECK_FALSE(RefineFromError({}, "input must have 3 dimensions, got 4").has_value());
  CHECK_FALSE(RefineFromError({{"x", "1x3:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x99999999999999999999 and 1x1)").has_value());
}

TEST_CASE("refine: a flattened feature map's view, the batch left free", "[refine]") {
  // Two 5x5 convolutions and pools of 4 and 2: 224 gives 16x25x25 = 10000,
  // 80 gives 16x7x7 = 784.
  CHECK(Refined({{"x", "1x4x224x224:float32"}}, "shape '[-1, 784]' is invalid for input of size 10000") ==
        "1x4x80x80:float32");
  CHECK(Refined({{"x", "1x4x64x64:float32"}}, "shape '[-1, 784]' is invalid for input of size 400") ==
        "1x4x80x80:float32");
  // The argument itself viewed stays ViewSize's case.
  CHECK(Refined({{"x", "3x1024:float32"}}, "shape '[-1, 20, 2, 10, 3]' is invalid for input of size 3072") ==
        "1x20x2x10x3:float32");
}

TEST_CASE("refine: integer indices, as LibTorch 1.13 and 2.x word the dtype error", "[refine]") {
  for (const char* e : {
           "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
           "CPUFloatType instead (while checking arguments for embedding)",
           "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
           "torch.FloatTensor instead (while checking arguments for embedding)",
           "index_select(): Expected dtype int32 or int64 for index", "gather(): Expected dtype int64 for index",
           "gather(): Expected dtype int32/int64 for index",
           "tensors used as indices must be long, byte or bool tensors",
           "tensors used as indices must be long, int, byte or bool tensors",
           "one_hot is only applicable to index tensor.", "one_hot is only applicable to index tensor of type LongTensor.",
           "take(): Expected a long tensor for index, but got Float"}) {
    CAPTURE(e);
    CHECK(Refined({{"x", "1x3x224x224:float32"}}, e) == "1x16:int64:randint:0:2");
  }
}

TEST_CASE("refine: an index past its table", "[refine]") {
  CHECK(Refined({{"x", "1x16:float32"}}, "index out of range in self") == "1x16:int64:randint:0:2");
  CHECK(Refined({{"x", "1x16:int64:randint:0:100"}}, "index 7 is out of bounds for dimension 0 with size 5") ==
        "1x16:int64:randint:0:2");
  CHECK(Refined({{"x", "4:float32"}}, "out of range: tried to access index 9 on a tensor of 1 elements.") ==
        "4:int64:randint:0:1");
  // Already in [0, 2): nothing left to narrow.
  CHECK(Refined({{"x", "1x16:int64:randint:0:2"}}, "index out of range in self") == "");
}

TEST_CASE("refine: a stack's sizes", "[refine]") {
  CHECK(Refined({{"x", "1x16:float32"}, {"y", "1x3x224x224:float32"}},
                "stack expects each tensor to be equal size, but got [1, 11] at entry 0 and [1, 3, 224, 224] at entry 1",
                1) == "1x11:float32");
}

TEST_CASE("refine: a recurrent layer's hidden state, alone or in a tuple", "[refine]") {
  CHECK(Refined({{"x", "1x8x5:float32"}, {"h", "1x1x16000:float32"}}, "Expected hidden size (1, 1, 7), got [1, 1, 16000]", 1) ==
        "1x1x7:float32");
  CHECK(Refined({{"x", "1x1x6:float32"}, {"state", R"(["1x1x16000:float32","1x1x16000:float32"])"}},
                "builtins.RuntimeError: Expected hidden[0] size (1, 1, 10), got [1, 1, 16000]", 1) ==
        R"(["1x1x10:float32","1x1x10:float32"])");
  // No tensor of the size named: nothing to change.
  CHECK(Refined({{"x", "1x8x5:float32"}}, "Expected hidden size (1, 1, 7), got [1, 1, 9]") == "");
}

TEST_CASE("refine: a view that splits the argument is grouped back into its rank", "[refine]") {
  // A traced patch embedding: the image, not the patches, is the argument.
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "shape '[1, 1, 4, 7, 4, 7]' is invalid for input of size 150528") ==
        "1x1x28x28:float32");
  CHECK(refine::GroupedShape({1, 3, 4, 8, 4, 8}, 4) == refine::Shape{1, 3, 32, 32});
  CHECK(refine::GroupedShape({2, 6}, 1) == std::nullopt);
  // A view of the same rank stays the view's shape.
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "shape '[1, 2, 7, 7]' is invalid for input of size 150528") ==
        "1x2x7x7:float32");
}

namespace {

// The errors a model with a count of 4 * (H/2 - 2) * (W/2 - 2) before a
// linear layer of 1596 inputs gives, as LibTorch words them.
std::string CountError(int64_t h, int64_t w) {
  const int64_t got = 4 * (h / 2 - 2) * (w / 2 - 2);
  return "mat1 and mat2 shapes cannot be multiplied (1x" + std::to_string(got) + " and 1596x2)";
}

}  // namespace

TEST_CASE("refine: a count solved from the candidates tried, probes first", "[refine]") {
  std::vector<Attempt> earlier;
  std::vector<ArgSpec> args = {{"x", "1x1x224x224:float32"}};
  // Without earlier candidates: the area is scaled (AreaScale).
  std::optional<Refinement> r = RefineFromError(args, CountError(224, 224));
  REQUIRE(r);
  int steps = 0;
  while (r && steps < 8) {
    earlier.push_back({args, CountError(ParseInputSpec(args[0].value).shape[2], ParseInputSpec(args[0].value).shape[3])});
    args = r->args;
    const InputSpec s = ParseInputSpec(args[0].value);
    if (4 * (s.shape[2] / 2 - 2) * (s.shape[3] / 2 - 2) == 1596) break;
    r = RefineFromError(args, CountError(s.shape[2], s.shape[3]), "LibTorch's error", earlier);
    ++steps;
  }
  const InputSpec s = ParseInputSpec(args[0].value);
  CHECK(4 * (s.shape[2] / 2 - 2) * (s.shape[3] / 2 - 2) == 1596);
  CHECK(steps <= 8);
  CHECK(s.shape[0] == 1);
  CHECK(s.shape[1] == 1);
}

TEST_CASE("refine: a count affine in a signal's length is solved from two candidates", "[refine]") {
  // A valid convolution of kernel 9 and a flatten of 8 channels: 8 * (L - 8).
  auto error = [](int64_t l) { return "mat1 and mat2 shapes cannot be multiplied (1x" + std::to_string(8 * (l - 8)) + " and 800x4)"; };
  std::vector<Attempt> earlier = {{{{"x", "1x2x128:float32"}}, error(128)}};
  CHECK(Refined({{"x", "1x2x64:float32"}}, error(64)) != "");
  std::optional<Refinement> r = RefineFromError({{"x", "1x2x64:float32"}}, error(64), "LibTorch's error", earlier);
  REQUIRE(r);
  CHECK(r->args[0].value == "1x2x108:float32");
}

TEST_CASE("refine: a broadcast's size shared by several arguments changes in all of them", "[refine]") {
  std::optional<Refinement> r =
      RefineFromError({{"x", "1x8x7:float32"}, {"marks", "1x8x4:float32"}, {"k", "3"}},
                      "The size of tensor a (8) must match the size of tensor b (24) at non-singleton dimension 1");
  REQUIRE(r);
  CHECK(r->args[0].value == "1x24x7:float32");
  CHECK(r->args[1].value == "1x24x4:float32");
  CHECK(r->args[2].value == "3");
  // Rows of features grown on the way (x[:, None] - table): their last size.
  CHECK(Refined({{"x", "1x16:float32"}}, "The size of tensor a (16) must match the size of tensor b (8) at non-singleton dimension 2") ==
        "1x8:float32");
  // Not an image's width.
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "The size of tensor a (224) must match the size of tensor b (8) at non-singleton dimension 4") ==
        "");
}

TEST_CASE("refine: a column broadcast against a stored table gets the table's feature", "[refine]") {
  CHECK(Refined({{"x", "16:float32"}}, "aten::sub broadcasts [16, 1] from the inputs against the stored [37, 8]: its last size, 8, is a feature") ==
        "16x8:float32");
  CHECK(Refined({{"x", "4x1:float32"}}, "aten::mul broadcasts [4, 1] from the inputs against the stored [5, 3]: ...") == "4x3:float32");
}

TEST_CASE("refine: a state's rank, an attention layer's embedding, a reduction's lost dimension", "[refine]") {
  CHECK(Refined({{"x", "1x16x5:float32"}, {"h", "1x224:float32"}}, "For batched 3-D input, hx should also be 3-D but got 2-D tensor", 1) ==
        "1x1x224:float32");
  CHECK(Refined({{"x", "1x16x5:float32"}, {"s", R"(["1x224:float32","1x224:float32"])"}},
                "For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors", 1) == "");
  CHECK(Refined({{"x", "1x224:float32"}}, "AssertionError: was expecting embedding dimension of 16, but got 224") == "1x16:float32");
  CHECK(Refined({{"x", "1x16:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x1 and 16x2)") == "1x8x16:float32");
}

TEST_CASE("refine: the sizes a count grows with", "[refine]") {
  // Time steps times features: only the steps scale to a whole number.
  CHECK(refine::SpatialDims({1, 16, 3}, 128, 240) == std::vector<size_t>{1});
  // A conv1d signal's length.
  CHECK(refine::SpatialDims({1, 4, 100}, 388, 392) == std::vector<size_t>{2});
  // A map without channels, an image, a row of samples.
  CHECK(refine::SpatialDims({1, 224, 224}, 100352, 8000) == std::vector<size_t>{1, 2});
  CHECK(refine::SpatialDims({1, 3, 224, 224}, 10, 20) == std::vector<size_t>{2, 3});
  CHECK(refine::SpatialDims({1, 16000}, 31992, 392) == std::vector<size_t>{1});
  CHECK(Refined({{"x", "1x16x3:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x128 and 240x1)") == "1x30x3:float32");
}

TEST_CASE("refine: rows concatenated, channels concatenated, a shape unpacked", "[refine]") {
  std::optional<Refinement> r =
      RefineFromError({{"a", "1x16:float32"}, {"b", "1x16:float32"}}, "mat1 and mat2 shapes cannot be multiplied (1x48 and 36x1)");
  REQUIRE(r);
  CHECK(r->args[0].value == "1x12:float32");
  CHECK(r->args[1].value == "1x12:float32");
  r = RefineFromError({{"rgb", "1x3x64x64:float32"}, {"depth", "1x3x64x64:float32"}},
                      "Given groups=1, weight of size [8, 4, 3, 3], expected input[1, 6, 64, 64] to have 4 channels, but got 6 channels instead");
  REQUIRE(r);
  CHECK(r->args[0].value == "1x3x64x64:float32");
  CHECK(r->args[1].value == "1x1x64x64:float32");
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "RuntimeError: Expected 5 elements in a list but found 4") == "1x1x3x224x224:float32");
  CHECK(Refined({{"x", "1x3x224x224:float32"}}, "RuntimeError: Expected 3 elements in a list but found 4") == "1x224x224:float32");
}

TEST_CASE("refine: a list of tensors of one spec changes as one tensor", "[refine]") {
  CHECK(Refined({{"xs", R"(["3x224x224:float32","3x224x224:float32"])"}}, "mat1 and mat2 shapes cannot be multiplied (672x224 and 6x2)") ==
        R"(["3x224x6:float32","3x224x6:float32"])");
  // Elements that differ are not one tensor.
  CHECK(Refined({{"xs", R"(["3x224x224:float32","1x4:float32"])"}}, "mat1 and mat2 shapes cannot be multiplied (672x224 and 6x2)") == "");
}
