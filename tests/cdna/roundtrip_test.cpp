// Every instruction form the builder offers, on every target that has it: builder -> text -> in-process
// assemble -> disassemble -> the same instruction back. Forms absent on a target must be refused.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/cdna/sample.h"
#include "isatune/codeobj/disassembler.h"
#include "isatune/error.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/llvm_mc.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::cdna;

namespace {

// Textual differences that carry no meaning, and nothing else:
//  * LLVM names the encoding it chose (v_add_u32_e32, v_add_f32_e64); we print the plain mnemonic.
//  * Numbers: LLVM prints literals and SMEM offsets in hex and some fields decimal; compared as 32-bit
//  values.
//  * Whitespace.
std::string normalise(std::string s) {
  s = std::regex_replace(s, std::regex(R"(^(\S+?)_e(32|64)\b)"), "$1");
  std::string out;
  std::regex num(R"((^|[^\w.])(-?)(0x[0-9a-fA-F]+|\d+)(?![\w.]))");
  auto begin = std::sregex_iterator(s.begin(), s.end(), num);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    out += s.substr(last, m.position(0) - last) + m[1].str();
    std::string t = m[3].str();
    long long v = t.rfind("0x", 0) == 0 ? std::stoll(t.substr(2), nullptr, 16) : std::stoll(t);
    if (!m[2].str().empty())
      v = -v;
    out += std::to_string(static_cast<uint32_t>(v));
    last = m.position(0) + m.length(0);
  }
  out += s.substr(last);
  std::string collapsed;
  bool space = false;
  for (char c : out) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !collapsed.empty())
      collapsed += ' ';
    space = false;
    collapsed += c;
  }
  return collapsed;
}

struct Case {
  const Form* form;
  Gfx gfx;
};

std::vector<Case> all_cases(bool available) {
  std::vector<Case> out;
  for (const auto& f : all_forms())
    for (const auto& t : all_targets())
      if (f.available_on(t.gfx) == available)
        out.push_back({&f, t.gfx});
  return out;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return std::string(info.param.form->name) + "_" +
         std::string(all_targets()[static_cast<int>(info.param.gfx)].name);
}

const toolchain::Assembler& assembler() {
  static auto a = toolchain::make_assembler("llvm");
  return *a;
}

class FormRoundTrip : public testing::TestWithParam<Case> {};

TEST_P(FormRoundTrip, BuilderTextAssembleDisassemble) {
  const Case c = GetParam();
  const TargetInfo& info = all_targets()[static_cast<int>(c.gfx)];
  ISATUNE_SKIP_IF_LLVM_LACKS(info.name);
  Builder b(parse_target_id(info.name), "k");
  Label end = b.label("end");
  auto samples = sample_instructions(*c.form, c.gfx, end);
  ASSERT_FALSE(samples.empty());
  std::vector<std::string> printed;
  for (const auto& s : samples) {
    const Instruction& inst = b.emit(c.form->name, s.operands(), s.modifiers());
    printed.push_back(print_instruction(inst, b.kernel().label_names));
  }
  b.bind(end);
  b.s_endpgm();
  Kernel k = b.finish();
  std::string text = print(k);
  toolchain::AssembleOptions opt;
  opt.target = std::string(info.name);
  opt.file_name = std::string(c.form->name) + ".s";
  toolchain::Assembled out;
  try {
    out = assembler().assemble(text, opt);
  } catch (const Error& e) {
    FAIL() << "assembly failed: " << e.what() << "\n" << text;
  }
  ASSERT_EQ(out.code.kernels.size(), 1u);
  auto dis = codeobj::disassemble_kernel(out.code, out.code.kernels[0]);
  ASSERT_GE(dis.size(), samples.size() + 1) << text;
  const uint64_t end_address = dis[samples.size()].address;
  EXPECT_EQ(dis[samples.size()].text, "s_endpgm");
  for (size_t i = 0; i < samples.size(); ++i) {
    std::string expected = printed[i];
    if (samples[i].branch_target().valid()) {
      // A branch prints its 16-bit dword offset from the next instruction.
      int64_t delta = (static_cast<int64_t>(end_address) - static_cast<int64_t>(dis[i].address + 4)) / 4;
      expected = std::regex_replace(expected, std::regex(R"(\.Lend\b)"), std::to_string(delta & 0xffff));
    }
    ASSERT_TRUE(dis[i].valid) << expected;
    EXPECT_EQ(normalise(dis[i].text), normalise(expected))
        << "printed:      " << expected << "\ndisassembled: " << dis[i].text;
  }
}

INSTANTIATE_TEST_SUITE_P(AllForms, FormRoundTrip, testing::ValuesIn(all_cases(true)), case_name);

class FormAbsent : public testing::TestWithParam<Case> {};

TEST_P(FormAbsent, BuilderRefuses) {
  const Case c = GetParam();
  const TargetInfo& info = all_targets()[static_cast<int>(c.gfx)];
  // Samples made for a target that has the form, then emitted on this one.
  Gfx other = c.form->available_on(Gfx::gfx950) ? Gfx::gfx950 : Gfx::gfx942;
  auto s = sample_instructions(*c.form, other).front();
  Builder b(parse_target_id(info.name), "k");
  try {
    b.emit(c.form->name, s.operands(), s.modifiers());
    FAIL() << c.form->name << " accepted on " << info.name;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not available on " + std::string(info.name)), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(AbsentForms, FormAbsent, testing::ValuesIn(all_cases(false)), case_name);

TEST(Normalise, OnlyMeaninglessDifferences) {
  EXPECT_EQ(normalise("v_add_u32_e32 v1, s2, v0"), normalise("v_add_u32 v1, s2, v0"));
  EXPECT_EQ(normalise("s_load_dword s4, s[0:1], 0x10"), normalise("s_load_dword s4, s[0:1], 16"));
  EXPECT_EQ(normalise("v_mov_b32_e32 v0, 0xfffffff9"), normalise("v_mov_b32 v0, -7"));
  EXPECT_NE(normalise("v_add_u32 v1, s2, v0"), normalise("v_add_u32 v1, s3, v0"));
  EXPECT_NE(normalise("global_load_dword v1, v0, s[2:3] offset:16"),
            normalise("global_load_dword v1, v0, s[2:3]"));
  EXPECT_NE(normalise("v_mfma_f32_32x32x8f16 v[0:15]"), normalise("v_mfma_f32_32x32x8_f16 v[0:15]"));
  EXPECT_NE(normalise("v_mov_b32 v0, 1.0"), normalise("v_mov_b32 v0, 1"));
}

} // namespace
