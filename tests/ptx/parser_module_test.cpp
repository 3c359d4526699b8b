// The PTX parser at module level: header directives, variables and initialisers, dynamic shared memory,
// functions, parameters and their offsets, performance and debug directives.
#include <gtest/gtest.h>

#include <cstring>

#include "isatune/ptx/parser.h"

using namespace isatune::ptx;
using ast::StateSpace;

namespace {

const std::string kHeader = ".version 8.0\n.target sm_90a\n.address_size 64\n";

ast::Module parse_module(const std::string& rest) {
  return parse(kHeader + rest, "m.ptx");
}

std::vector<uint8_t> le32(std::initializer_list<uint32_t> v) {
  std::vector<uint8_t> out;
  for (uint32_t x : v)
    for (int i = 0; i < 4; ++i)
      out.push_back(uint8_t(x >> (8 * i)));
  return out;
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

} // namespace

TEST(ParserModule, ReadsVersionTargetOptionsAndAddressSize) {
  const ast::Module m =
      parse(".version 7.8\n.target sm_80, texmode_independent, debug\n.address_size 64\n", "h.ptx");
  EXPECT_EQ(m.version_major, 7u);
  EXPECT_EQ(m.version_minor, 8u);
  EXPECT_EQ(m.target, "sm_80");
  EXPECT_EQ(m.target_options, (std::vector<std::string>{"texmode_independent", "debug"}));
  EXPECT_EQ(m.address_size, 64u);
  EXPECT_EQ(m.file, "h.ptx");
  EXPECT_TRUE(m.functions.empty());
  // Without .address_size, PTX means 32.
  EXPECT_EQ(parse(".version 9.0\n.target sm_90a\n").address_size, 32u);
}

TEST(ParserModule, GlobalVariablesWithAlignmentArraysAndInitialisers) {
  const ast::Module m = parse_module(".global .align 16 .u32 table[3] = {1, 2, 0x10};\n"
                                     ".const .f32 coef[2] = {1.5, 0f40000000};\n"
                                     ".global .u32 grid[2][2] = {{1, 2}, {3}};\n"
                                     ".global .s32 neg = -5;\n"
                                     ".global .b8 bytes[] = {7, 8, 9};\n"
                                     ".const .align 8 .v2 .u32 pair = {4, 5};\n"
                                     ".visible .global .f64 one = 0d3FF0000000000000;\n"
                                     ".weak .global .u64 w;\n"
                                     ".align 8 .global .u16 half_words[4];\n");
  ASSERT_EQ(m.globals.size(), 9u);
  const ast::Variable& t = m.globals[0];
  EXPECT_EQ(t.name, "table");
  EXPECT_EQ(t.space, StateSpace::global);
  EXPECT_EQ(t.type, "u32");
  EXPECT_EQ(t.element_bytes, 4u);
  EXPECT_EQ(t.align, 16u);
  EXPECT_EQ(t.dims, (std::vector<uint64_t>{3}));
  EXPECT_EQ(t.bytes(), 12u);
  EXPECT_TRUE(t.is_const_init);
  EXPECT_EQ(t.init, le32({1, 2, 16}));

  const ast::Variable& c = m.globals[1];
  EXPECT_EQ(c.space, StateSpace::const_);
  EXPECT_EQ(c.init, le32({f32_bits(1.5f), 0x40000000u}));

  // Nested braces per dimension; missing elements are zeros.
  EXPECT_EQ(m.globals[2].dims, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(m.globals[2].init, le32({1, 2, 3, 0}));
  EXPECT_EQ(m.globals[3].init, le32({uint32_t(-5)}));
  // `[]` takes its size from the initialiser.
  EXPECT_EQ(m.globals[4].dims, (std::vector<uint64_t>{3}));
  EXPECT_EQ(m.globals[4].bytes(), 3u);
  EXPECT_EQ(m.globals[4].init, (std::vector<uint8_t>{7, 8, 9}));
  EXPECT_EQ(m.globals[5].vector, 2u);
  EXPECT_EQ(m.globals[5].bytes(), 8u);
  EXPECT_EQ(m.globals[5].init, le32({4, 5}));
  EXPECT_EQ(m.globals[6].init, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0xF0, 0x3F}));
  EXPECT_FALSE(m.globals[7].is_const_init);
  EXPECT_TRUE(m.globals[7].init.empty());
  EXPECT_EQ(m.globals[8].align, 8u);
  EXPECT_EQ(m.globals[8].bytes(), 8u);

  ASSERT_NE(m.find_global("coef"), nullptr);
  EXPECT_EQ(m.find_global("coef")->name, "coef");
  EXPECT_EQ(m.find_global("nothing"), nullptr);
}

TEST(ParserModule, DynamicSharedMemoryIsAnExternZeroSizedArray) {
  const ast::Module m =
      parse_module(".extern .shared .align 16 .b8 smem[];\n.shared .align 128 .b8 stat[4096];\n");
  ASSERT_EQ(m.globals.size(), 2u);
  const ast::Variable& d = m.globals[0];
  EXPECT_EQ(d.name, "smem");
  EXPECT_EQ(d.space, StateSpace::shared);
  EXPECT_TRUE(d.external);
  EXPECT_EQ(d.align, 16u);
  EXPECT_EQ(d.dims, (std::vector<uint64_t>{0}));
  EXPECT_EQ(d.bytes(), 0u);
  EXPECT_FALSE(m.globals[1].external);
  EXPECT_EQ(m.globals[1].bytes(), 4096u);
}

TEST(ParserModule, KernelParametersGetCudaAbiOffsets) {
  const ast::Module m = parse_module(".visible .entry k(\n"
                                     "  .param .u32 n,\n"
                                     "  .param .u64 .ptr .global .align 16 out,\n"
                                     "  .param .align 64 .b8 tmap[128],\n"
                                     "  .param .u8 flag,\n"
                                     "  .param .u16 h,\n"
                                     "  .param .align 8 .b8 blob[12],\n"
                                     "  .param .f32 x\n"
                                     ")\n{ ret; }\n");
  ASSERT_EQ(m.functions.size(), 1u);
  const ast::Function& k = m.functions[0];
  EXPECT_TRUE(k.entry);
  EXPECT_TRUE(k.visible);
  ASSERT_EQ(k.params.size(), 7u);
  // Each parameter at the next multiple of its alignment (natural unless .align says otherwise).
  EXPECT_EQ(k.params[0].offset, 0u);
  EXPECT_EQ(k.params[1].offset, 8u);
  EXPECT_EQ(k.params[2].offset, 64u);
  EXPECT_EQ(k.params[3].offset, 192u);
  EXPECT_EQ(k.params[4].offset, 194u);
  EXPECT_EQ(k.params[5].offset, 200u);
  EXPECT_EQ(k.params[6].offset, 212u);
  EXPECT_EQ(k.param_bytes(), 216u);
  const ast::Param& out = k.params[1];
  EXPECT_EQ(out.name, "out");
  EXPECT_EQ(out.type, "u64");
  EXPECT_TRUE(out.pointer);
  EXPECT_EQ(out.pointer_space, "global");
  EXPECT_EQ(out.pointer_align, 16u);
  EXPECT_EQ(out.align, 0u); // the .align after .ptr is the pointee's
  EXPECT_EQ(k.params[2].align, 64u);
  EXPECT_EQ(k.params[2].array, 128u);
  EXPECT_EQ(k.params[2].bytes(), 128u);
  EXPECT_EQ(k.params[0].loc.line, 5u);
  ASSERT_EQ(m.find("k"), &m.functions[0]);
  EXPECT_EQ(m.find("absent"), nullptr);
}

TEST(ParserModule, FunctionsWithReturnsPrototypesAndExternDeclarations) {
  const ast::Module m = parse_module(
      ".extern .func (.param .b32 status) vprintf(.param .b64 fmt, .param .b64 args);\n"
      ".extern .func __assertfail(.param .b64 m, .param .b64 f, .param .b32 l, .param .b64 fn, .param .b64 "
      "s)\n"
      ".noreturn;\n"
      ".func (.param .b32 r) later(.param .b32 a);\n"
      ".weak .func (.param .align 4 .b8 pair[8]) pack(.param .b32 a, .param .b64 b)\n{\n ret;\n}\n"
      ".func (.param .b32 r) later(.param .b32 a)\n{\n st.param.b32 [r], 1;\n ret;\n}\n"
      ".func noargs\n{\n ret;\n}\n");
  ASSERT_EQ(m.functions.size(), 5u);
  const ast::Function& vp = m.functions[0];
  EXPECT_FALSE(vp.entry);
  EXPECT_TRUE(vp.external);
  EXPECT_FALSE(vp.defined());
  ASSERT_EQ(vp.returns.size(), 1u);
  EXPECT_EQ(vp.returns[0].name, "status");
  EXPECT_EQ(vp.params.size(), 2u);
  EXPECT_TRUE(m.functions[1].noreturn);
  EXPECT_EQ(m.functions[1].params[4].offset, 32u);
  // A prototype and its later definition are one function, at the prototype's index.
  const ast::Function& later = m.functions[2];
  EXPECT_EQ(later.name, "later");
  EXPECT_TRUE(later.defined());
  EXPECT_EQ(later.body.size(), 2u);
  const ast::Function& pack = m.functions[3];
  EXPECT_EQ(pack.returns[0].bytes(), 8u);
  EXPECT_EQ(pack.returns[0].align, 4u);
  EXPECT_EQ(pack.params[1].offset, 8u);
  EXPECT_TRUE(m.functions[4].params.empty());
  EXPECT_TRUE(m.functions[4].defined());
}

TEST(ParserModule, PerformanceDirectives) {
  const ast::Module m = parse_module(
      ".visible .entry a() .maxntid 128, 2 .minnctapersm 4 .maxnreg 64\n{ ret; }\n"
      ".visible .entry b() .reqntid 384, 1, 1 .maxnreg 168 .reqnctapercluster 2, 1, 1\n{ ret; }\n"
      ".visible .entry c()\n.maxclusterrank 8\n.explicitcluster\n.pragma \"nounroll\";\n{ ret; }\n");
  ASSERT_EQ(m.functions.size(), 3u);
  const ast::Function &a = m.functions[0], &b = m.functions[1], &c = m.functions[2];
  EXPECT_EQ(a.maxntid[0], 128u);
  EXPECT_EQ(a.maxntid[1], 2u);
  EXPECT_EQ(a.maxntid[2], 1u);
  EXPECT_EQ(a.minnctapersm, 4u);
  EXPECT_EQ(a.maxnreg, 64u);
  EXPECT_EQ(a.reqntid[0], 0u);
  EXPECT_EQ(b.reqntid[0], 384u);
  EXPECT_EQ(b.maxnreg, 168u);
  EXPECT_EQ(b.reqnctapercluster[0], 2u);
  EXPECT_EQ(b.reqnctapercluster[1], 1u);
  EXPECT_EQ(c.maxclusterrank, 8u);
  EXPECT_TRUE(c.explicitcluster);
  EXPECT_FALSE(a.explicitcluster);
}

TEST(ParserModule, DebugDirectivesAndCommentsAreSkipped) {
  const ast::Module m =
      parse("// leading comment\n.version 8.0 /* inline */ .target sm_80\n.address_size 64\n"
            ".file 1 \"/tmp/k.cu\", 1700000000, 1234\n"
            ".pragma \"nounroll\";\n"
            ".visible .entry k()\n{\n.loc 1 20 5\n  ret; // done\n/* multi\nline */\n}\n"
            ".section .debug_info\n{\n.b32 89\n.b8 2, 0\n.b64 $L__func_begin0\n}\n"
            ".section .debug_macinfo { }\n",
            "d.ptx");
  ASSERT_EQ(m.functions.size(), 1u);
  ASSERT_EQ(m.functions[0].body.size(), 1u);
  EXPECT_EQ(m.functions[0].body[0].inst.mnemonic, "ret");
  EXPECT_EQ(m.functions[0].body[0].inst.loc.line, 9u);
}

TEST(ParserModule, ParseFileReadsAFileAndNamesItInMessages) {
  const std::string path = std::string(ISATUNE_FIXTURES_DIR) + "/add_one.ptx";
  const ast::Module m = parse_file(path);
  EXPECT_EQ(m.file, path);
  ASSERT_NE(m.find("addone"), nullptr);
  EXPECT_EQ(m.find("addone")->params.size(), 2u);
  EXPECT_THROW(parse_file("/nonexistent/x.ptx"), isatune::InputError);
  try {
    parse_file(std::string(ISATUNE_FIXTURES_DIR) + "/bad_syntax.ptx");
    FAIL() << "bad_syntax.ptx parsed";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("bad_syntax.ptx:"), std::string::npos) << e.what();
  }
}

TEST(ParserModule, RegisterParametersOfFunctionsAreRegistersOfTheBody) {
  const ast::Module m =
      parse_module(".func (.reg .b32 r) f(.reg .b32 a, .param .b32 b, .reg .u64 c)\n{\n"
                   " .reg .b32 %t;\n ld.param.b32 %t, [b];\n add.s32 r, a, %t;\n ret;\n}\n");
  const ast::Function& f = m.functions.at(0);
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_TRUE(f.params[0].reg);
  EXPECT_FALSE(f.params[1].reg);
  EXPECT_EQ(f.params[1].offset, 0u); // register parameters take no room in the parameter buffer
  ASSERT_GE(f.params[2].reg_index, 0);
  EXPECT_EQ(f.regs[size_t(f.params[2].reg_index)].bits, 64u);
  const ast::Instruction& add = f.body.at(1).inst;
  EXPECT_EQ(add.operands[0].kind, ast::Operand::Kind::reg);
  EXPECT_EQ(add.operands[0].reg, f.returns.at(0).reg_index);
  EXPECT_EQ(add.operands[1].reg, f.params[0].reg_index);
  EXPECT_EQ(f.regs[size_t(f.params[0].reg_index)].name, "a");
  // Kernels take .param only; predicates and 16-bit values cannot be register parameters.
  EXPECT_THROW(parse_module(".visible .entry k(.reg .b32 a)\n{\n ret;\n}\n"), ParseError);
  EXPECT_THROW(parse_module(".func f(.reg .pred q)\n{\n ret;\n}\n"), ParseError);
  EXPECT_THROW(parse_module(".func f(.reg .b16 h)\n{\n ret;\n}\n"), ParseError);
}

TEST(ParserModule, WindowsLineEndingsParseAlike) {
  std::string text = kHeader + ".visible .entry k(.param .u32 n)\n{\n.reg .b32 %r<2>;\nL:\nld.param.u32 %r1, [n];\n"
                               "bra L;\n}\n";
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const ast::Module a = parse(text, "lf.ptx"), b = parse(crlf, "crlf.ptx");
  ASSERT_EQ(b.functions.size(), 1u);
  ASSERT_EQ(a.functions[0].body.size(), b.functions[0].body.size());
  for (size_t i = 0; i < a.functions[0].body.size(); ++i)
    EXPECT_EQ(a.functions[0].body[i].inst.loc.line, b.functions[0].body[i].inst.loc.line);
  EXPECT_EQ(b.functions[0].body[2].inst.operands[0].target, 0u);
}
