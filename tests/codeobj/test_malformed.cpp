// Bad input gives one FormatError line naming the source and the problem, and never crashes.
#include <gtest/gtest.h>

#include <random>

#include "isatune/codeobj/disassembler.h"
#include "isatune/codeobj/reader.h"
#include "kernels.h"
#include "llvm_programs.h"

using namespace isatune;
using namespace isatune::codeobj;
using namespace isatune::codeobj::test;

namespace {

std::string error_of(std::span<const uint8_t> bytes, const std::string& name = "input.hsaco") {
  try {
    read_code_object(bytes, name);
  } catch (const FormatError& e) {
    return e.what();
  }
  return {};
}

// A valid gfx942 vadd code object (built once).
const std::vector<uint8_t>& valid_object() {
  static const std::vector<uint8_t> bytes = [] {
    std::string src = kVaddSource, error;
    replace_all(src, "@TARGET@", "amdgcn-amd-amdhsa--gfx942");
    std::string path = build_code_object("malformed_base", src, "gfx942", "", error);
    return path.empty() ? std::vector<uint8_t>() : read_bytes(path);
  }();
  return bytes;
}

// Parses, or fails with FormatError; any other exception type fails the test. Disassembles what parses.
void parse_or_format_error(std::span<const uint8_t> bytes, const std::string& what) {
  try {
    CodeObject co = read_code_object(bytes, what);
    for (const auto& k : co.kernels)
      if (k.code_offset != 0 && k.code_offset < co.bytes.size()) (void)disassemble_kernel(co, k);
  } catch (const FormatError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
    EXPECT_EQ(msg.rfind(what, 0), 0u) << "message does not start with the source: " << msg;
  } catch (const InputError&) {
    // Disassembly of a kernel whose target cannot be used (a corrupted e_flags): acceptable.
  }
}

} // namespace

TEST(Malformed, Empty) {
  std::string msg = error_of({});
  EXPECT_EQ(msg, "input.hsaco: empty input, not a code object");
}

TEST(Malformed, ThreeBytes) {
  const uint8_t b[] = {0x7f, 'E', 'L'};
  EXPECT_NE(error_of(b).find("input.hsaco: not an ELF file"), std::string::npos) << error_of(b);
}

TEST(Malformed, TruncatedHeader) {
  const uint8_t b[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  EXPECT_NE(error_of(b).find("truncated ELF header"), std::string::npos) << error_of(b);
}

TEST(Malformed, RandomBytes) {
  std::mt19937 rng(42);
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> b(1 + rng() % 4096);
    for (auto& x : b) x = uint8_t(rng());
    EXPECT_NE(error_of(b), "") << "random input " << i << " parsed";
  }
}

TEST(Malformed, X86Executable) {
  const char* path = "/bin/true";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  try {
    read_code_object_file(path);
    FAIL() << "an x86 ELF parsed";
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()), "/bin/true: not an AMDGPU code object (e_machine 62)");
  }
}

TEST(Malformed, MissingAndEmptyFiles) {
  try {
    read_code_object_file("/nonexistent/dir/k.hsaco");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/k.hsaco"), std::string::npos) << e.what();
  }
  auto empty = temp_dir() / "empty.hsaco";
  std::ofstream(empty).close();
  try {
    read_code_object_file(empty.string());
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()), empty.string() + ": empty input, not a code object");
  }
  try {
    read_code_object_file(temp_dir().string());
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()), temp_dir().string() + ": not a regular file");
  }
}

class MalformedFromValid : public ::testing::Test {
protected:
  void SetUp() override {
    if (auto why = missing_programs(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_FALSE(valid_object().empty()) << "could not build the base code object";
  }
};

TEST_F(MalformedFromValid, WrongClassAndMachine) {
  auto b = valid_object();
  b[4] = 1; // ELFCLASS32
  EXPECT_EQ(error_of(b), "input.hsaco: wrong ELF class 1 (AMDGPU code objects are 64-bit, class 2)");
  b = valid_object();
  b[18] = 190; // EM_CUDA: a cubin
  b[19] = 0;
  EXPECT_EQ(error_of(b, "k.cubin"), "k.cubin: not an AMDGPU code object (e_machine 190)");
  b = valid_object();
  b[5] = 2; // big-endian
  EXPECT_NE(error_of(b).find("big-endian"), std::string::npos);
}

TEST_F(MalformedFromValid, UnknownMachIsNamed) {
  auto b = valid_object();
  b[48] = 0xee; // mach byte of e_flags
  CodeObject co = read_code_object(b);
  EXPECT_EQ(co.isa, "gfxXXX (mach 0xee)");
  ASSERT_EQ(co.kernels.size(), 1u);
}

TEST_F(MalformedFromValid, EveryPrefix) {
  const auto& full = valid_object();
  for (size_t n = 0; n < full.size(); n += 61) {
    std::vector<uint8_t> prefix(full.begin(), full.begin() + n);
    parse_or_format_error(prefix, "prefix" + std::to_string(n));
  }
  // The prefixes cut inside the header, the section table (at the end of the file) and the note must fail.
  EXPECT_NE(error_of(std::span(full).first(40)), "");
  EXPECT_NE(error_of(std::span(full).first(full.size() - 1)), "");
}

TEST_F(MalformedFromValid, RandomByteFlips) {
  const auto& full = valid_object();
  std::mt19937 rng(7);
  for (int i = 0; i < 1500; ++i) {
    auto b = full;
    int flips = 1 + int(rng() % 8);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = uint8_t(rng());
    parse_or_format_error(b, "mutant" + std::to_string(i));
  }
}

// Regression (found by fuzz_codeobj): a metadata map with array keys made LLVM's msgpack::Document reach
// llvm_unreachable ("bad map key type") and kill the process.
TEST_F(MalformedFromValid, MetadataWithArrayKeys) {
  std::string src = kVaddSource;
  src.erase(src.find(".amdgpu_metadata"));
  replace_all(src, "@TARGET@", "amdgcn-amd-amdhsa--gfx942");
  src += R"(
.section .note.bad,"a",@note
.p2align 2
.long 7
.long 7
.long 32
.asciz "AMDGPU"
.p2align 2
.byte 0x82, 0x91, 0x01, 0x01, 0x91, 0x02, 0x02
.p2align 2
)";
  std::string error;
  std::string path = build_code_object("array_keys", src, "gfx942", "", error);
  ASSERT_FALSE(path.empty()) << error;
  try {
    read_code_object_file(path);
    FAIL() << "parsed";
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": bad AMDGPU metadata: a map key is not a scalar");
  }
}

TEST_F(MalformedFromValid, MetadataNotMsgpackOrWrongShape) {
  std::string base = kVaddSource;
  base.erase(base.find(".amdgpu_metadata"));
  replace_all(base, "@TARGET@", "amdgcn-amd-amdhsa--gfx942");
  struct Bad {
    const char* bytes;  // .byte list
    int size;
    const char* message;
  } cases[] = {
      {"0xc1", 1, "bad AMDGPU metadata: "},                                   // reserved msgpack byte
      {"0x92, 0x01", 2, "bad AMDGPU metadata: the note ends inside a map or array"},
      {"0x01", 1, "bad AMDGPU metadata: the root is not a map"},
      // {"amdhsa.kernels": 5}
      {"0x81, 0xae, 0x61, 0x6d, 0x64, 0x68, 0x73, 0x61, 0x2e, 0x6b, 0x65, 0x72, 0x6e, 0x65, 0x6c, 0x73, 0x05", 17,
       "bad AMDGPU metadata: amdhsa.kernels is not an array"},
  };
  int i = 0;
  for (const Bad& b : cases) {
    std::string src = base + ".section .note.bad,\"a\",@note\n.p2align 2\n.long 7\n.long " + std::to_string(b.size) +
                      "\n.long 32\n.asciz \"AMDGPU\"\n.p2align 2\n.byte " + b.bytes + "\n.p2align 2\n";
    std::string error;
    std::string path = build_code_object("bad_note" + std::to_string(i++), src, "gfx942", "", error);
    ASSERT_FALSE(path.empty()) << error;
    try {
      read_code_object_file(path);
      ADD_FAILURE() << "parsed: " << b.bytes;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
    }
  }
}

// Inputs that once crashed fuzz_codeobj (tests/fuzz/regressions): read and disassemble them like the fuzzer.
TEST(Malformed, FuzzRegressions) {
  std::filesystem::path dir = std::filesystem::path(ISATUNE_FIXTURES_DIR) / ".." / "fuzz" / "regressions";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " not present";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue; // the other fuzz targets' folders (tests/fuzz/regressions/<target>/)
    ++files;
    auto bytes = read_bytes(entry.path().string());
    parse_or_format_error(bytes, entry.path().filename().string());
  }
  EXPECT_GT(files, 0);
}
