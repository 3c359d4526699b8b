// Disassembly compared with `llvm-objdump -d` on the same file.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "isatune/codeobj/disassembler.h"
#include "isatune/codeobj/reader.h"
#include "kernels.h"
#include "llvm_programs.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::codeobj;
using namespace isatune::codeobj::test;

namespace {

struct ObjdumpLine {
  uint64_t address;
  std::string text;
  std::string hex; // "C00A0100 00000000"
};

std::string collapse(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Instructions llvm-objdump prints under `<symbol>:`.
std::vector<ObjdumpLine> objdump(const std::string& path, const std::string& mcpu, const std::string& symbol) {
  std::string out;
  EXPECT_EQ(run_command(shell_quote(llvm_program("llvm-objdump")) + " -d --mcpu=" + mcpu + " " + shell_quote(path),
                        out),
            0)
      << out;
  std::vector<ObjdumpLine> lines;
  std::istringstream in(out);
  std::string line;
  bool inside = false;
  static const std::regex insn(R"(^\s+(.*?)\s*// ([0-9A-Fa-f]+): ([0-9A-Fa-f ]+?)\s*(<.*>)?$)");
  while (std::getline(in, line)) {
    if (line.find("<" + symbol + ">:") != std::string::npos) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.empty()) break;
    std::smatch m;
    if (std::regex_match(line, m, insn))
      lines.push_back({std::stoull(m[2].str(), nullptr, 16), collapse(m[1].str()), m[3].str()});
  }
  return lines;
}

std::string hex_words(const std::vector<uint8_t>& b) {
  std::string s;
  char buf[16];
  for (size_t i = 0; i + 4 <= b.size(); i += 4) {
    std::snprintf(buf, sizeof buf, "%s%02X%02X%02X%02X", s.empty() ? "" : " ", b[i + 3], b[i + 2], b[i + 1], b[i]);
    s += buf;
  }
  return s;
}

class Disassembler : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override {
    if (auto why = missing_programs(); !why.empty()) GTEST_SKIP() << why;
  }
};

} // namespace

TEST_P(Disassembler, MatchesObjdump) {
  const std::string isa = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(isa);
  for (auto [name, source, mattr, target] :
       {std::tuple{std::string("vadd"), kVaddSource, std::string(), "amdgcn-amd-amdhsa--" + isa},
        std::tuple{std::string("mfma_lds"), kMfmaLdsSource, std::string("+sramecc,-xnack,+tgsplit"),
                   "amdgcn-amd-amdhsa--" + isa + ":sramecc+:xnack-"}}) {
    replace_all(source, "@TARGET@", target);
    std::string error;
    std::string path = build_code_object("dis_" + name + "_" + isa, source, isa, mattr, error);
    ASSERT_FALSE(path.empty()) << error;
    CodeObject co = read_code_object_file(path);
    ASSERT_EQ(co.kernels.size(), 1u);
    auto ours = disassemble_kernel(co, co.kernels[0]);
    auto theirs = objdump(path, isa, name);
    ASSERT_FALSE(ours.empty());
    // objdump runs on past the symbol into the s_nop padding; the kernel's own instructions come first.
    ASSERT_GE(theirs.size(), ours.size()) << name;
    for (size_t i = 0; i < ours.size(); ++i) {
      EXPECT_TRUE(ours[i].valid) << name << " #" << i;
      EXPECT_EQ(ours[i].text, theirs[i].text) << name << " #" << i;
      EXPECT_EQ(ours[i].address, theirs[i].address - theirs[0].address) << name << " #" << i;
      EXPECT_EQ(hex_words(ours[i].bytes), theirs[i].hex) << name << " #" << i;
    }
    EXPECT_EQ(ours.back().text, "s_endpgm");
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, Disassembler, ::testing::Values("gfx90a", "gfx942", "gfx950"));

TEST(DisassembleBytes, KnownWordsAndUnknown) {
  // s_endpgm, s_nop 0, then three stray bytes.
  const uint8_t code[] = {0x00, 0x00, 0x81, 0xbf, 0x00, 0x00, 0x80, 0xbf, 0x12, 0x34, 0x56};
  auto out = disassemble_bytes("gfx942", code);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].text, "s_endpgm");
  EXPECT_EQ(out[1].text, "s_nop 0");
  EXPECT_EQ(out[1].address, 4u);
  EXPECT_FALSE(out[2].valid);
  EXPECT_EQ(out[2].text, "<unknown 0x00563412>");
  EXPECT_EQ(out[2].bytes.size(), 3u);
}

TEST(DisassembleBytes, TargetIdForms) {
  const uint8_t code[] = {0x00, 0x00, 0x81, 0xbf};
  for (const char* t : {"gfx90a", "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx950"}) {
    if (std::string why = isatune::test::llvm_lacks(t); !why.empty()) {
      // gfx950 on LLVM 19: refused with the LLVM version it needs.
      try {
        disassemble_bytes(t, code);
        ADD_FAILURE() << t << ": no error";
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), why) << t;
      }
      continue;
    }
    EXPECT_EQ(disassemble_bytes(t, code).at(0).text, "s_endpgm") << t;
  }
  EXPECT_THROW(disassemble_bytes("gfx9999", code), InputError);
  EXPECT_THROW(disassemble_bytes("gfx942:bogus", code), InputError);
  EXPECT_THROW(disassemble_bytes("gfx942:gcn3-encoding-", code), InputError);
  EXPECT_THROW(disassemble_bytes("gfx600", code), InputError); // LLVM would abort the process
  EXPECT_THROW(disassemble_bytes("gfx704", code), InputError);
  EXPECT_EQ(disassemble_bytes("gfx908", code).at(0).text, "s_endpgm");
  EXPECT_TRUE(disassemble_bytes("gfx942", {}).empty());
}

TEST(DisassembleBytes, ManyThreads) {
  std::vector<uint8_t> code;
  for (int i = 0; i < 200; ++i)
    for (uint8_t b : {0x00, 0x00, 0x80, 0xbf, 0x7f, 0xc0, 0x8c, 0xbf}) code.push_back(b); // s_nop 0; s_waitcnt
  auto expected = disassemble_bytes("gfx942", code);
  ASSERT_EQ(expected.size(), 400u);
  EXPECT_EQ(expected[1].text, "s_waitcnt lgkmcnt(0)");
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int r = 0; r < 5; ++r) {
        auto got = disassemble_bytes("gfx942", code);
        if (got.size() != expected.size() || got[399].text != expected[399].text) ++mismatches;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Regression (found by fuzz_codeobj): MUBUF/MTBUF with soffset 0xff segfaults LLVM 22's decoder (llvm-mc
// --disassemble too); these words must come back undecodable instead.
TEST(DisassembleBytes, LiteralSoffsetInBufferInstruction) {
  const uint8_t mubuf[] = {0x00, 0x00, 0x00, 0xe0, 0x00, 0x00, 0x00, 0xff, 0x00, 0x00, 0x81, 0xbf};
  const uint8_t mtbuf[] = {0x00, 0x00, 0x00, 0xe8, 0x00, 0x00, 0x00, 0xff};
  for (const char* t : {"gfx90a", "gfx942", "gfx950"}) {
    if (isatune::test::llvm_too_old_for(t)) { // gfx950 on LLVM 19: refused, nothing to decode
      EXPECT_THROW(disassemble_bytes(t, mubuf), InputError) << t;
      continue;
    }
    auto out = disassemble_bytes(t, mubuf);
    ASSERT_EQ(out.size(), 3u) << t;
    EXPECT_FALSE(out[0].valid);
    EXPECT_EQ(out[0].text, "<unknown 0xe0000000>");
    EXPECT_EQ(out[2].text, "s_endpgm");
    EXPECT_FALSE(disassemble_bytes(t, mtbuf).at(0).valid);
  }
  // The same instruction with an inline soffset decodes.
  const uint8_t ok[] = {0x00, 0x00, 0x00, 0xe0, 0x00, 0x00, 0x00, 0x80};
  EXPECT_EQ(disassemble_bytes("gfx942", ok).at(0).text, "buffer_load_format_x v0, off, s[0:3], 0");
}

// Regression (found by fuzz_codeobj): an instruction whose 32-bit literal is cut off by the end of the bytes
// (s_add_u32 with a literal source and one byte left) crashed LLVM 22's decoder.
TEST(DisassembleBytes, LiteralCutOffAtTheEnd) {
  const uint8_t cut[] = {0xff, 0xff, 0xff, 0x80, 0xff};
  auto out = disassemble_bytes("gfx942", cut);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].valid);
  EXPECT_EQ(out[0].text, "<unknown 0x80ffffff>");
  EXPECT_FALSE(out[1].valid);
  EXPECT_EQ(out[1].bytes.size(), 1u);
  // With its literal present the same instruction decodes, 8 bytes long.
  const uint8_t whole[] = {0xff, 0x00, 0x00, 0x80, 0x78, 0x56, 0x34, 0x12};
  out = disassemble_bytes("gfx942", whole);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].valid);
  EXPECT_EQ(out[0].bytes.size(), 8u);
  EXPECT_EQ(out[0].text, "s_add_u32 s0, 0x12345678, s0");
}

// The words LLVM 22's decoder crashes on are recognised (the emulator's decoder relies on this too), and an
// ordinary MFMA or buffer load is not.
TEST(DisassembleBytes, KnowsTheWordsLlvmCrashesOn) {
  using isatune::codeobj::llvm_decoder_crashes_on;
  const std::vector<uint8_t> mfma_literal = {0x64, 0x40, 0xd9, 0xd3, 0xff, 0xf8, 0x00, 0x18};
  const std::vector<uint8_t> mfma_vgprs = {0x00, 0x40, 0xa3, 0xd3, 0x00, 0xfe, 0x03, 0x04};
  const std::vector<uint8_t> mubuf_literal_soffset = {0x00, 0x00, 0x50, 0xe0, 0x00, 0x01, 0x01, 0xff};
  const std::vector<uint8_t> mubuf_sgpr_soffset = {0x00, 0x00, 0x50, 0xe0, 0x00, 0x01, 0x01, 0x08};
  EXPECT_TRUE(llvm_decoder_crashes_on(mfma_literal));
  EXPECT_FALSE(llvm_decoder_crashes_on(mfma_vgprs));
  EXPECT_TRUE(llvm_decoder_crashes_on(mubuf_literal_soffset));
  EXPECT_FALSE(llvm_decoder_crashes_on(mubuf_sgpr_soffset));
  EXPECT_FALSE(llvm_decoder_crashes_on(std::span<const uint8_t>(mfma_literal).first(4))); // needs 8 bytes
  // The 16-bit KImm VOP2 forms with the constant 0xff (fuzz_codeobj, regressions/codeobj): GFX9 v_madmk_f16
  // (opcode 36) and GFX10+ v_fmamk_f16 (55); the same opcode on the other family, or another constant, is fine.
  const std::vector<uint8_t> madmk_ff = {0x00, 0x00, 0x00, 0x48, 0xff, 0x00, 0x00, 0x00};
  const std::vector<uint8_t> madmk_fe = {0x00, 0x00, 0x00, 0x48, 0xfe, 0x00, 0x00, 0x00};
  const std::vector<uint8_t> fmamk_ff = {0xf6, 0xff, 0xff, 0x6f, 0xff, 0x00, 0x00, 0x00};
  EXPECT_TRUE(llvm_decoder_crashes_on(madmk_ff));
  EXPECT_FALSE(llvm_decoder_crashes_on(madmk_ff, true));
  EXPECT_FALSE(llvm_decoder_crashes_on(madmk_fe));
  EXPECT_TRUE(llvm_decoder_crashes_on(fmamk_ff, true));
  EXPECT_FALSE(llvm_decoder_crashes_on(fmamk_ff)); // GFX9: v_dot2c_f32_f16, then a literal-source v_cndmask
  // SDWA with the undefined selector 7 (fuzz_codeobj, regressions/sdwa-sel7.hsaco on gfx803): v_add_f32_sdwa
  // v1, v0, v1 with each of dst_sel, src0_sel, src1_sel 7 crashes LLVM; DWORD (6) does not, nor a VOPC's sdst
  // bits 10:8 = 7, nor a VOP1's unused src1_sel, nor any of it on GFX11+ (no SDWA).
  auto sdwa_add = [](uint32_t sdwa) {
    std::vector<uint8_t> w = {0xf9, 0x02, 0x02, 0x02};
    for (int i = 0; i < 4; ++i) w.push_back(uint8_t(sdwa >> (8 * i)));
    return w;
  };
  const uint32_t dword_sels = 0x06060600;  // src1_sel, src0_sel, dst_sel DWORD; src0 v0
  EXPECT_FALSE(llvm_decoder_crashes_on(sdwa_add(dword_sels)));
  for (int shift : {8, 16, 24}) {
    const uint32_t sel7 = (dword_sels & ~(7u << shift)) | (7u << shift);
    EXPECT_TRUE(llvm_decoder_crashes_on(sdwa_add(sel7))) << shift;
    EXPECT_TRUE(llvm_decoder_crashes_on(sdwa_add(sel7), true)) << shift;  // GFX10 has SDWA too
    EXPECT_FALSE(llvm_decoder_crashes_on(sdwa_add(sel7), true, false)) << shift;
    auto d = isatune::codeobj::disassemble_bytes("gfx803", sdwa_add(sel7));
    ASSERT_FALSE(d.empty());
    EXPECT_FALSE(d[0].valid) << shift;
  }
  const std::vector<uint8_t> vopc_sdst7 = {0xf9, 0x00, 0x82, 0x7c, 0x00, 0x07, 0x06, 0x06};  // v_cmp_lt_f32_sdwa s[7:8]
  const std::vector<uint8_t> vop1_src1_7 = {0xf9, 0x02, 0x02, 0x7e, 0x00, 0x06, 0x06, 0x07};  // VOP1: no src1_sel (LLVM refuses the word)
  EXPECT_FALSE(llvm_decoder_crashes_on(vopc_sdst7));
  EXPECT_FALSE(llvm_decoder_crashes_on(vop1_src1_7));
  auto add_dword = isatune::codeobj::disassemble_bytes("gfx90a", sdwa_add(dword_sels));
  ASSERT_EQ(add_dword.size(), 1u);
  EXPECT_TRUE(add_dword[0].valid);
  EXPECT_EQ(add_dword[0].text.rfind("v_add_f32_sdwa v1, v0, v1", 0), 0u) << add_dword[0].text;
  for (const char* t : {"gfx942", "gfx1100"}) {
    auto d = isatune::codeobj::disassemble_bytes(t, std::string(t) == "gfx942" ? madmk_ff : fmamk_ff);
    ASSERT_FALSE(d.empty()) << t;
    EXPECT_FALSE(d[0].valid) << t;
  }
  // And decoding a literal-source MFMA reports it undecodable instead of crashing the process.
  auto out = isatune::codeobj::disassemble_bytes("gfx942", mfma_literal);
  ASSERT_FALSE(out.empty());
  EXPECT_FALSE(out[0].valid);
}
