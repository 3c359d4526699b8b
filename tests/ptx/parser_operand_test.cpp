// The PTX parser's operands and opcodes: every operand kind, immediates in every notation, special registers,
// addresses, vectors, pairs, calls, and how opcodes split into mnemonic and qualifiers.
#include <gtest/gtest.h>

#include <cstring>

#include "isatune/ptx/parser.h"

using namespace isatune::ptx;
using Kind = ast::Operand::Kind;
using ast::Special;

namespace {

const char* kDecls =
    ".reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<2>;\n.reg .pred %p<3>;\n"
    ".reg .v4 .f32 %v;\n.reg .b16 %h;\n.shared .align 16 .b8 sbuf[256];\n";

ast::Module module_with(const std::string& body, const std::string& target = "sm_90a") {
  return parse(".version 8.0\n.target " + target +
                   "\n.address_size 64\n.global .align 4 .u32 gtable[4];\n"
                   ".func (.param .b32 r) f2(.param .b32 a, .param .b32 b)\n{\n ret;\n}\n"
                   ".func nothing()\n{\n ret;\n}\n"
                   ".visible .entry k(.param .u64 p, .param .align 64 .b8 tmap[128])\n{\n" +
                   std::string(kDecls) + body + "\n}\n",
               "o.ptx");
}

// The registers of the function insts() parsed last: a register of a `%r<8>` range enters Function::regs on
// its first use, so indices depend on the body.
std::vector<ast::RegDecl> last_regs;

// The instructions of k's body (no labels).
std::vector<ast::Instruction> insts(const std::string& body) {
  const ast::Module m = module_with(body);
  last_regs = m.functions.back().regs;
  std::vector<ast::Instruction> out;
  for (const auto& s : m.functions.back().body)
    if (!s.inst.mnemonic.empty())
      out.push_back(s.inst);
  return out;
}

ast::Operand operand(const std::string& inst, size_t i) {
  return insts(inst).at(0).operands.at(i);
}

// The index of `name` in the registers of the body insts() parsed last; -2 when it is not there (an operand's
// reg is -1 when it has none).
int reg_index(const std::string& name) {
  for (size_t i = 0; i < last_regs.size(); ++i)
    if (last_regs[i].name == name)
      return int(i);
  return -2;
}

uint64_t f64_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}
uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

} // namespace

TEST(ParserOperand, OpcodeSplitsIntoMnemonicAndQualifiers) {
  struct Case {
    std::string inst;
    std::string mnemonic;
    std::vector<std::string> qualifiers;
  };
  const std::vector<Case> cases = {
      {"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, "
       "%r3}], "
       "[%r4];",
       "cp",
       {"async", "bulk", "tensor", "2d", "shared::cluster", "global", "tile",
        "mbarrier::complete_tx::bytes"}},
      {"bar.warp.sync -1;", "bar", {"warp", "sync"}},
      {"barrier.cluster.arrive.aligned;", "barrier", {"cluster", "arrive", "aligned"}},
      {"fence.proxy.async.shared::cta;", "fence", {"proxy", "async", "shared::cta"}},
      {"wgmma.fence.sync.aligned;", "wgmma", {"fence", "sync", "aligned"}},
      {"mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;",
       "mbarrier",
       {"try_wait", "parity", "shared::cta", "b64"}},
      {"ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%f0, %f1, %f2, %f3}, [%rd1];",
       "ld",
       {"global", "nc", "L1::no_allocate", "L2::256B", "v4", "f32"}},
      {"ret;", "ret", {}},
  };
  for (const Case& c : cases) {
    const auto in = insts(c.inst);
    ASSERT_EQ(in.size(), 1u) << c.inst;
    EXPECT_EQ(in[0].opcode, c.inst.substr(0, c.inst.find_first_of(" ;")));
    EXPECT_EQ(in[0].mnemonic, c.mnemonic) << c.inst;
    EXPECT_EQ(in[0].qualifiers, c.qualifiers) << c.inst;
  }
  const auto in = insts("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [%r4];");
  EXPECT_TRUE(in[0].has("x4"));
  EXPECT_FALSE(in[0].has("x2"));
  EXPECT_EQ(in[0].loc.line, 23u);
  EXPECT_EQ(in[0].loc.column, 1u);
}

TEST(ParserOperand, RegistersAndVectorElements) {
  const auto in = insts("mov.b32 %r3, %r7;\nmov.f32 %f1, %v.y;\nmov.f32 %v.w, %f2;\nmov.f32 %f0, %v.r;\n");
  EXPECT_EQ(in[0].operands[0].kind, Kind::reg);
  EXPECT_EQ(in[0].operands[0].reg, reg_index("%r3"));
  EXPECT_EQ(in[0].operands[0].element, -1);
  EXPECT_EQ(in[0].operands[1].reg, reg_index("%r7"));
  EXPECT_EQ(in[1].operands[1].reg, reg_index("%v"));
  EXPECT_EQ(in[1].operands[1].element, 1);
  EXPECT_EQ(in[2].operands[0].element, 3);
  EXPECT_EQ(in[3].operands[1].element, 0);
}

TEST(ParserOperand, SpecialRegisters) {
  struct Case {
    std::string text;
    Special s;
    int component;
  };
  const std::vector<Case> cases = {
      {"%tid.x", Special::tid, 0},
      {"%tid.z", Special::tid, 2},
      {"%ntid.y", Special::ntid, 1},
      {"%ctaid.y", Special::ctaid, 1},
      {"%nctaid.x", Special::nctaid, 0},
      {"%laneid", Special::laneid, 0},
      {"%warpid", Special::warpid, 0},
      {"%smid", Special::smid, 0},
      {"%lanemask_lt", Special::lanemask_lt, 0},
      {"%lanemask_ge", Special::lanemask_ge, 0},
      {"%cluster_ctarank", Special::cluster_ctarank, 0},
      {"%cluster_nctarank", Special::cluster_nctarank, 0},
      {"%clusterid.x", Special::clusterid, 0},
      {"%cluster_ctaid.y", Special::cluster_ctaid, 1},
      {"%cluster_nctaid.z", Special::cluster_nctaid, 2},
      {"%nclusterid.x", Special::nclusterid, 0},
      {"%dynamic_smem_size", Special::dynamic_smem_size, 0},
      {"%total_smem_size", Special::total_smem_size, 0},
      {"%clock", Special::clock, 0},
      {"%envreg7", Special::envreg, 7},
      {"%pm3", Special::pm, 3},
  };
  for (const Case& c : cases) {
    const ast::Operand o = operand("mov.u32 %r1, " + c.text + ";", 1);
    EXPECT_EQ(o.kind, Kind::special) << c.text;
    EXPECT_EQ(o.special, c.s) << c.text;
    EXPECT_EQ(o.component, c.component) << c.text;
  }
  for (const char* s64 : {"%clock64", "%globaltimer", "%gridid"}) {
    const ast::Operand o = operand(std::string("mov.u64 %rd1, ") + s64 + ";", 1);
    EXPECT_EQ(o.kind, Kind::special) << s64;
  }
  EXPECT_EQ(operand("mov.u64 %rd1, %clock64;", 1).special, Special::clock64);
  EXPECT_EQ(operand("mov.pred %p1, %is_explicit_cluster;", 1).special, Special::is_explicit_cluster);
}

TEST(ParserOperand, IntegerImmediatesInEveryNotation) {
  struct Case {
    std::string text;
    int64_t value;
  };
  const std::vector<Case> cases = {
      {"42", 42},
      {"0x1f", 31},
      {"0X1F", 31},
      {"017", 15},
      {"0b101", 5},
      {"-1", -1},
      {"12U", 12},
      {"0xffffffff", 0xffffffffLL},
      {"0", 0},
      {"-0x10", -16},
      {"0xFFFFFFFFFFFFFFFF", -1},
      {"(1<<3)", 8},
      {"4*4+1", 17},
      {"~0", -1},
      {"-(3)", -3},
      {"7/2", 3},
      {"1 ? 5 : 6", 5},
      {"(2+3)*4", 20},
      {"-7 % 3", -1},
      {"0xF0 | 0x0F", 255},
  };
  for (const Case& c : cases) {
    const ast::Operand o = operand("add.s32 %r1, %r2, " + c.text + ";", 2);
    EXPECT_EQ(o.kind, Kind::imm_int) << c.text;
    EXPECT_EQ(o.i, c.value) << c.text;
  }
}

TEST(ParserOperand, FloatImmediates) {
  const ast::Operand h32 = operand("mov.f32 %f1, 0f3F800000;", 1);
  EXPECT_EQ(h32.kind, Kind::imm_float);
  EXPECT_TRUE(h32.f32);
  EXPECT_EQ(h32.bits, 0x3F800000u);
  const ast::Operand h64 = operand("mov.f64 %fd1, 0d400921FB54442D18;", 1);
  EXPECT_FALSE(h64.f32);
  EXPECT_EQ(h64.bits, 0x400921FB54442D18u);
  const ast::Operand d1 = operand("mov.f32 %f1, 1.5;", 1); // exact in f32
  EXPECT_TRUE(d1.f32);
  EXPECT_EQ(d1.bits, f32_bits(1.5f));
  const ast::Operand d2 = operand("mov.f64 %fd1, 0.1;", 1); // not exact in f32
  EXPECT_FALSE(d2.f32);
  EXPECT_EQ(d2.bits, f64_bits(0.1));
  EXPECT_EQ(operand("mov.f32 %f1, -2.5e1;", 1).bits, f32_bits(-25.0f));
  EXPECT_EQ(operand("mov.f32 %f1, .5;", 1).bits, f32_bits(0.5f));
  EXPECT_EQ(operand("mov.f32 %f1, 1.0+0.25;", 1).bits, f32_bits(1.25f));
  EXPECT_EQ(operand("mov.f32 %f1, 0F3f000000;", 1).bits, 0x3F000000u);
}

TEST(ParserOperand, Addresses) {
  const auto in = insts("ld.global.u32 %r1, [%rd1];\n"
                        "ld.global.u32 %r1, [%rd1+16];\n"
                        "ld.global.u32 %r1, [%rd1+-4];\n"
                        "ld.shared.u32 %r1, [sbuf];\n"
                        "ld.shared.u32 %r1, [sbuf+8];\n"
                        "ld.shared.u32 %r1, [%r1];\n"
                        "ld.param.u64 %rd1, [p];\n"
                        "ld.global.u32 %r1, [gtable+0x8];\n"
                        "ld.local.u32 %r1, [64];\n"
                        "ld.global.u32 %r1, [ %rd1 + (4*4) ];\n");
  ASSERT_EQ(in.size(), 10u);
  for (const auto& i : in)
    EXPECT_EQ(i.operands[1].kind, Kind::address) << i.opcode;
  EXPECT_EQ(in[0].operands[1].reg, reg_index("%rd1"));
  EXPECT_EQ(in[0].operands[1].offset, 0);
  EXPECT_TRUE(in[0].operands[1].name.empty());
  EXPECT_EQ(in[1].operands[1].offset, 16);
  EXPECT_EQ(in[2].operands[1].offset, -4);
  EXPECT_EQ(in[3].operands[1].reg, -1);
  EXPECT_EQ(in[3].operands[1].name, "sbuf");
  EXPECT_EQ(in[3].operands[1].ref, ast::Operand::Ref::local);
  EXPECT_EQ(in[4].operands[1].offset, 8);
  EXPECT_EQ(in[5].operands[1].reg, reg_index("%r1"));
  EXPECT_EQ(in[6].operands[1].ref, ast::Operand::Ref::param);
  EXPECT_EQ(in[6].operands[1].index, 0);
  EXPECT_EQ(in[7].operands[1].ref, ast::Operand::Ref::global);
  EXPECT_EQ(in[7].operands[1].index, 0);
  EXPECT_EQ(in[7].operands[1].offset, 8);
  EXPECT_EQ(in[8].operands[1].reg, -1);
  EXPECT_TRUE(in[8].operands[1].name.empty());
  EXPECT_EQ(in[8].operands[1].offset, 64);
  EXPECT_EQ(in[9].operands[1].offset, 16);
}

TEST(ParserOperand, TensorAddressesCarryTheirCoordinates) {
  const ast::Operand a = operand("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
                                 "bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
                                 1);
  EXPECT_EQ(a.kind, Kind::address);
  EXPECT_EQ(a.reg, reg_index("%rd1"));
  ASSERT_EQ(a.elems.size(), 1u);
  EXPECT_EQ(a.elems[0].kind, Kind::vector);
  ASSERT_EQ(a.elems[0].elems.size(), 2u);
  EXPECT_EQ(a.elems[0].elems[1].reg, reg_index("%r3"));
  const ast::Operand b =
      operand("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {%r2}], [%r1];", 0);
  EXPECT_EQ(b.name, "tmap");
  EXPECT_EQ(b.ref, ast::Operand::Ref::param);
  EXPECT_EQ(b.index, 1);
  EXPECT_EQ(b.elems.at(0).elems.size(), 1u);
}

TEST(ParserOperand, VectorsSinksPairsAndNegatedPredicates) {
  const auto in = insts("ld.global.v4.f32 {%f0, %f1, _, %f3}, [%rd1];\n"
                        "mov.b64 %rd1, {%r1, %r2};\n"
                        "shfl.sync.down.b32 %r1|%p1, %r2, 1, 0x1f, -1;\n"
                        "elect.sync _|%p2, 0xffffffff;\n"
                        "selp.u32 %r1, 1, 0, !%p1;\n"
                        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 128;\n");
  ASSERT_EQ(in.size(), 6u);
  const ast::Operand& v = in[0].operands[0];
  EXPECT_EQ(v.kind, Kind::vector);
  ASSERT_EQ(v.elems.size(), 4u);
  EXPECT_EQ(v.elems[0].reg, reg_index("%f0"));
  EXPECT_EQ(v.elems[2].kind, Kind::sink);
  EXPECT_EQ(in[1].operands[1].elems.size(), 2u);
  const ast::Operand& pr = in[2].operands[0];
  EXPECT_EQ(pr.kind, Kind::pair);
  ASSERT_EQ(pr.elems.size(), 2u);
  EXPECT_EQ(pr.elems[0].reg, reg_index("%r1"));
  EXPECT_EQ(pr.elems[1].reg, reg_index("%p1"));
  EXPECT_EQ(in[3].operands[0].elems[0].kind, Kind::sink);
  EXPECT_EQ(in[3].operands[0].elems[1].reg, reg_index("%p2"));
  const ast::Operand& n = in[4].operands[3];
  EXPECT_EQ(n.kind, Kind::reg);
  EXPECT_TRUE(n.negate);
  EXPECT_EQ(n.reg, reg_index("%p1"));
  EXPECT_FALSE(in[4].operands[1].negate);
  EXPECT_EQ(in[5].operands[0].kind, Kind::sink);
}

TEST(ParserOperand, SymbolsAsOperands) {
  const auto in =
      insts("mov.u64 %rd1, sbuf;\nmov.u64 %rd1, p;\ncvta.param.u64 %rd1, %rd1;\nmov.u64 %rd2, gtable;\n"
            "mov.u32 %r1, sbuf+16;\nmov.u64 %rd1, tmap;\n");
  EXPECT_EQ(in[0].operands[1].kind, Kind::symbol);
  EXPECT_EQ(in[0].operands[1].name, "sbuf");
  EXPECT_EQ(in[0].operands[1].ref, ast::Operand::Ref::local);
  EXPECT_EQ(in[1].operands[1].ref, ast::Operand::Ref::param);
  EXPECT_EQ(in[1].operands[1].index, 0);
  EXPECT_EQ(in[3].operands[1].ref, ast::Operand::Ref::global);
  EXPECT_EQ(in[4].operands[1].offset, 16);
  EXPECT_EQ(in[5].operands[1].index, 1);
}

TEST(ParserOperand, CallOperandForms) {
  const auto in = insts("{ .param .b32 a; .param .b32 b; .param .b32 r;\n"
                        "call.uni (r), f2, (a, b);\n"
                        "call nothing, ();\n"
                        "call.uni nothing;\n"
                        "}\n");
  ASSERT_EQ(in.size(), 3u);
  const auto& c = in[0].operands;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].kind, Kind::vector);
  ASSERT_EQ(c[0].elems.size(), 1u);
  EXPECT_EQ(c[0].elems[0].name, "r");
  EXPECT_EQ(c[1].kind, Kind::symbol);
  EXPECT_EQ(c[1].ref, ast::Operand::Ref::function);
  EXPECT_EQ(c[1].index, 0);
  EXPECT_EQ(c[1].name, "f2");
  EXPECT_EQ(c[2].kind, Kind::vector);
  ASSERT_EQ(c[2].elems.size(), 2u);
  EXPECT_EQ(c[2].elems[1].name, "b");
  EXPECT_EQ(c[2].elems[1].ref, ast::Operand::Ref::local);
  for (size_t i : {1, 2}) {
    ASSERT_EQ(in[i].operands.size(), 2u) << i; // no return list: function, empty arguments
    EXPECT_EQ(in[i].operands[0].index, 1);
    EXPECT_EQ(in[i].operands[1].kind, Kind::vector);
    EXPECT_TRUE(in[i].operands[1].elems.empty());
  }
}

TEST(ParserOperand, InstructionsOfTheCoveredSetParse) {
  // One of each family beyond the scalar core, as ptxas 13.0 accepts them for sm_90a.
  const auto in = insts("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, {%r0, "
                        "%r1, %r2, %r3}, {%r4, %r5}, "
                        "{%f0, %f1, %f2, %f3};\n"
                        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd1, "
                        "%rd2, %p1, 1, -1, 0, 1;\n"
                        "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r1], {%r2, %r3};\n"
                        "setmaxnreg.inc.sync.aligned.u32 232;\n"
                        "mapa.shared::cluster.u32 %r1, %r2, %r3;\n"
                        "getctarank.shared::cluster.u32 %r1, %r2;\n"
                        "barrier.cluster.wait.acquire.aligned;\n"
                        "griddepcontrol.launch_dependents;\n"
                        "prefetch.tensormap [%rd1];\n"
                        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r1], %rd1;\n"
                        "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;\n"
                        "vote.sync.ballot.b32 %r1, %p1, -1;\n"
                        "match.any.sync.b32 %r1, %r2, -1;\n"
                        "redux.sync.add.u32 %r1, %r2, -1;\n"
                        "activemask.b32 %r1;\n"
                        "nanosleep.u32 100;\n"
                        "fma.rn.f16x2 %r1, %r2, %r3, %r4;\n"
                        "lop3.b32 %r1, %r2, %r3, %r4, 0xEA;\n"
                        "prmt.b32 %r1, %r2, %r3, 0x5410;\n"
                        "red.global.add.f32 [%rd1], %f1;\n"
                        "atom.global.cas.b32 %r1, [%rd1+4], %r2, %r3;\n"
                        "membar.gl;\n"
                        "trap;\n");
  EXPECT_EQ(in.size(), 23u);
  EXPECT_EQ(in[1].operands.size(), 8u);
  EXPECT_EQ(in[1].operands[3].kind, Kind::reg);
  EXPECT_EQ(in[1].operands[5].i, -1);
}

TEST(ParserOperand, TheCoveredMnemonicsAreKnownAndOthersAreNot) {
  // The list of covered instructions; `cp` covers cp.async*, cp.reduce.async.bulk*.
  const char* covered[] = {"add",
                           "sub",
                           "mul",
                           "mad",
                           "mad24",
                           "mul24",
                           "sad",
                           "div",
                           "rem",
                           "abs",
                           "neg",
                           "min",
                           "max",
                           "fma",
                           "rcp",
                           "sqrt",
                           "rsqrt",
                           "sin",
                           "cos",
                           "lg2",
                           "ex2",
                           "tanh",
                           "copysign",
                           "testp",
                           "cvt",
                           "cvta",
                           "and",
                           "or",
                           "xor",
                           "not",
                           "cnot",
                           "shl",
                           "shr",
                           "bfe",
                           "bfi",
                           "bfind",
                           "prmt",
                           "lop3",
                           "shf",
                           "brev",
                           "clz",
                           "popc",
                           "fns",
                           "setp",
                           "set",
                           "selp",
                           "slct",
                           "mov",
                           "ld",
                           "ldu",
                           "st",
                           "prefetch",
                           "prefetchu",
                           "isspacep",
                           "atom",
                           "red",
                           "shfl",
                           "vote",
                           "match",
                           "redux",
                           "activemask",
                           "bar",
                           "barrier",
                           "membar",
                           "fence",
                           "ret",
                           "exit",
                           "bra",
                           "trap",
                           "brkpt",
                           "nanosleep",
                           "mma",
                           "ldmatrix",
                           "stmatrix",
                           "cp",
                           "wgmma",
                           "mbarrier",
                           "elect",
                           "setmaxnreg",
                           "mapa",
                           "getctarank",
                           "tensormap",
                           "griddepcontrol",
                           "applypriority",
                           "discard",
                           "createpolicy"};
  auto verdict = [](const std::string& m) {
    try {
      module_with(m + ".x %r1;");
      return std::string();
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
  };
  for (const char* m : covered)
    EXPECT_EQ(verdict(m).find("unknown instruction"), std::string::npos) << m << ": " << verdict(m);
  for (const char* m : {"multimem", "tcgen05", "tex", "suld", "wmma", "foo"})
    EXPECT_NE(verdict(m).find("unknown instruction '" + std::string(m) + ".x'"), std::string::npos) << m;
}
