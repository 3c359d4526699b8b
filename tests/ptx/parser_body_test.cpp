// The PTX parser inside function bodies: register declarations, `{ }` scopes with repeated register and label
// names, label resolution, guards, body-level variables and the statements' scope indices.
#include <gtest/gtest.h>

#include "isatune/ptx/parser.h"

using namespace isatune::ptx;
using Kind = ast::Operand::Kind;

namespace {

// One kernel with `body` between its braces.
ast::Function kernel(const std::string& body) {
  ast::Module m =
      parse(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n" + body +
                "\n}\n",
            "b.ptx");
  return m.functions.at(0);
}

// The instruction statements, skipping label definitions.
std::vector<const ast::Instruction*> instructions(const ast::Function& f) {
  std::vector<const ast::Instruction*> out;
  for (const auto& s : f.body)
    if (!s.inst.mnemonic.empty())
      out.push_back(&s.inst);
  return out;
}

int label_index(const ast::Function& f, const std::string& label, uint32_t nth = 0) {
  for (size_t i = 0; i < f.body.size(); ++i)
    if (f.body[i].label == label && nth-- == 0)
      return int(i);
  return -1;
}

} // namespace

TEST(ParserBody, RegisterRangesListsAndVectors) {
  // A name declared on its own is a register at once; one of a `<N>` range joins regs on its first use.
  const ast::Function f =
      kernel(".reg .b32 %r<100>;\n.reg .pred %p<3>;\n.reg .v4 .f32 %v;\n.reg .b64 %SP, %rd<2>;\n"
             ".reg .f16x2 %h;\n.reg .b16 a<2>, b;\n"
             "mov.b32 %r99, %r0;\nsetp.eq.b32 %p2, %r99, 1;\nmov.b64 %rd1, %SP;\nmov.b16 a0, b;\nmov.b16 a1, a0;\n");
  const std::vector<std::string> names = {"%v", "%SP", "%h", "b", "%r99", "%r0", "%p2", "%rd1", "a0", "a1"};
  ASSERT_EQ(f.regs.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(f.regs[i].name, names[i]) << i;
  EXPECT_EQ(f.regs[0].vector, 4u);
  EXPECT_EQ(f.regs[0].bits, 32u);
  EXPECT_EQ(f.regs[1].bits, 64u);
  EXPECT_EQ(f.regs[2].bits, 32u); // f16x2
  EXPECT_EQ(f.regs[3].bits, 16u);
  EXPECT_EQ(f.regs[4].type, "b32");
  EXPECT_EQ(f.regs[4].bits, 32u);
  EXPECT_EQ(f.regs[6].type, "pred");
  EXPECT_EQ(f.regs[6].bits, 1u);
  EXPECT_EQ(f.regs[7].bits, 64u);
  EXPECT_EQ(f.regs[8].type, "b16");
  EXPECT_EQ(f.regs[9].vector, 1u);
  for (const auto& r : f.regs)
    EXPECT_EQ(r.scope, 0u);
  const auto in = instructions(f);
  EXPECT_EQ(in[0]->operands[0].reg, 4);
  EXPECT_EQ(in[1]->operands[1].reg, 4); // %r99 again: the same register
}

TEST(ParserBody, RegisterRangesCostNothingUntilUsed) {
  // ptxas 13.0 takes any count below 2^32 and expands it (2^28 registers: 11 s and 2 GB; 2^32-1: out of
  // memory); the parser adds a register on its first use only, so a count costs nothing.
  const ast::Function f = kernel(".reg .b32 %r<4294967295>;\n.reg .b64 %rd<16777217>;\n"
                                 "mov.b32 %r4294967294, 1;\nmov.b64 %rd16777216, 2;\n");
  ASSERT_EQ(f.regs.size(), 2u);
  EXPECT_EQ(f.regs[0].name, "%r4294967294");
  EXPECT_EQ(f.regs[1].name, "%rd16777216");
  EXPECT_EQ(f.regs[1].bits, 64u);
}

TEST(ParserBody, ScopesRepeatRegisterNamesAndShadow) {
  const ast::Function f =
      kernel(".reg .b32 %r<2>;\n"
             "{ .reg .b32 t; mov.b32 t, 1; mov.b32 %r1, t; }\n"
             "{ .reg .b32 t; mov.b32 t, 2; { .reg .b32 t; mov.b32 t, 3; } mov.b32 %r0, t; }\n"
             "{ .reg .b32 %r1; mov.b32 %r1, 4; }\n"
             "mov.b32 %r1, 5;\n"
             "{ .reg .b32 %r<1>; mov.b32 %r0, 6; mov.b32 %r1, 7; }\n"
             "mov.b32 %r0, 8;\n");
  const auto in = instructions(f);
  ASSERT_EQ(in.size(), 10u);
  // Registers in order: t (scope 1), %r1 (first used there; the body's), t (scope 2), t (scope 3), %r0 (the
  // body's), %r1 (scope 4), %r0 (scope 5's range).
  ASSERT_EQ(f.regs.size(), 7u);
  ASSERT_EQ(f.scopes.size(), 6u);
  EXPECT_EQ(f.scopes[0].parent, -1);
  EXPECT_EQ(f.scopes[1].parent, 0);
  EXPECT_EQ(f.scopes[2].parent, 0);
  EXPECT_EQ(f.scopes[3].parent, 2);
  EXPECT_EQ(f.scopes[4].parent, 0);
  const std::vector<std::pair<std::string, uint32_t>> regs = {{"t", 1},   {"%r1", 0}, {"t", 2},  {"t", 3},
                                                              {"%r0", 0}, {"%r1", 4}, {"%r0", 5}};
  for (size_t i = 0; i < regs.size(); ++i) {
    EXPECT_EQ(f.regs[i].name, regs[i].first) << i;
    EXPECT_EQ(f.regs[i].scope, regs[i].second) << i;
  }
  EXPECT_EQ(in[0]->operands[0].reg, 0); // t of the first block
  EXPECT_EQ(in[1]->operands[1].reg, 0);
  EXPECT_EQ(in[1]->operands[0].reg, 1); // %r1 of the body, from a block
  EXPECT_EQ(in[2]->operands[0].reg, 2); // t of the second block
  EXPECT_EQ(in[3]->operands[0].reg, 3); // the inner t shadows it
  EXPECT_EQ(in[4]->operands[1].reg, 2); // and is gone after its block
  EXPECT_EQ(in[4]->operands[0].reg, 4); // %r0 of the body
  EXPECT_EQ(in[5]->operands[0].reg, 5); // %r1 redeclared in a block
  EXPECT_EQ(in[6]->operands[0].reg, 1); // the body's %r1 again
  EXPECT_EQ(in[7]->operands[0].reg, 6); // the block's range shadows %r0 ...
  EXPECT_EQ(in[8]->operands[0].reg, 1); // ... and not %r1, which it does not name
  EXPECT_EQ(in[9]->operands[0].reg, 4); // the body's %r0 after the block
  // Statement scopes.
  EXPECT_EQ(f.body[0].scope, 1u);
  EXPECT_EQ(f.body[3].scope, 3u);
  EXPECT_EQ(f.body.back().scope, 0u);
}

TEST(ParserBody, LabelsAreScopedPerBlockAndResolveToStatements) {
  const ast::Function f = kernel(".reg .pred %p;\n"
                                 "setp.eq.u32 %p, 1, 1;\n"                   // 0
                                 "TOP:\n"                                    // 1
                                 "{ L: @%p bra L; bra TOP; bra.uni END; }\n" // 2 3 4 5
                                 "{ L: @!%p bra.uni L; bra DONE; DONE: }\n"  // 6 7 8 9
                                 "@%p bra TOP;\n"                            // 10
                                 "END:\n"                                    // 11
                                 "{ END: bra END; }\n"                       // 12 13
                                 "DONE: ret;\n");                            // 14 15
  ASSERT_EQ(f.body.size(), 16u);
  auto target = [&](size_t stmt) {
    EXPECT_EQ(f.body[stmt].inst.mnemonic, "bra") << stmt;
    EXPECT_EQ(f.body[stmt].inst.operands.at(0).kind, Kind::label) << stmt;
    return int(f.body[stmt].inst.operands.at(0).target);
  };
  const int top = label_index(f, "TOP"), l1 = label_index(f, "L", 0), l2 = label_index(f, "L", 1);
  const int end_outer = label_index(f, "END", 0), end_inner = label_index(f, "END", 1);
  const int done_inner = label_index(f, "DONE", 0), done_outer = label_index(f, "DONE", 1);
  EXPECT_EQ(top, 1);
  EXPECT_EQ(target(3), l1);
  EXPECT_EQ(target(4), top);        // an enclosing scope's label
  EXPECT_EQ(target(5), end_outer);  // forward, in the enclosing scope
  EXPECT_EQ(target(7), l2);         // the same name in a sibling block is another label
  EXPECT_EQ(target(8), done_inner); // the block's own DONE, not the body's
  EXPECT_EQ(target(10), top);
  EXPECT_EQ(target(13), end_inner); // the inner END shadows the outer one
  EXPECT_EQ(f.body[size_t(done_outer)].label, "DONE");
  EXPECT_TRUE(f.body[size_t(done_outer)].inst.mnemonic.empty());
  EXPECT_EQ(f.body[size_t(done_outer) + 1].inst.mnemonic, "ret");
  EXPECT_EQ(f.body[3].inst.operands[0].name, "L");
  EXPECT_EQ(f.body[3].scope, 1u);
  EXPECT_EQ(f.body[2].scope, 1u); // the label statement itself
}

TEST(ParserBody, GuardsOnInstructions) {
  const ast::Function f = kernel(".reg .pred %p<2>;\n.reg .pred P;\n.reg .b32 %r;\n"
                                 "@%p1 mov.b32 %r, 1;\n@!%p0 mov.b32 %r, 2;\n@P ret;\nmov.b32 %r, 3;\n");
  const auto in = instructions(f);
  ASSERT_EQ(in.size(), 4u);
  ASSERT_TRUE(in[0]->guard.has_value());
  EXPECT_EQ(in[0]->guard->kind, Kind::reg);
  // Registers in order: P and %r (declared alone), then %p1 and %p0 on their first use.
  EXPECT_EQ(f.regs[size_t(in[0]->guard->reg)].name, "%p1");
  EXPECT_FALSE(in[0]->guard->negate);
  EXPECT_EQ(f.regs[size_t(in[1]->guard->reg)].name, "%p0");
  EXPECT_TRUE(in[1]->guard->negate);
  EXPECT_EQ(f.regs[size_t(in[2]->guard->reg)].name, "P");
  EXPECT_FALSE(in[3]->guard.has_value());
}

TEST(ParserBody, BodyVariablesAndCallSequenceParamsAreScoped) {
  ast::Module m = parse(".version 8.0\n.target sm_80\n.address_size 64\n"
                        ".func (.param .b32 r) f(.param .b32 a)\n{\n .reg .b32 %x;\n ld.param.b32 %x, [a];\n"
                        " st.param.b32 [r], %x;\n ret;\n}\n"
                        ".visible .entry k()\n{\n"
                        " .local .align 8 .b8 __local_depot0[16];\n"
                        " .shared .align 4 .b8 buf[256];\n"
                        " .reg .b32 %r<3>;\n .reg .b64 %SPL;\n"
                        " mov.u64 %SPL, __local_depot0;\n"
                        " { .param .b32 param0; st.param.b32 [param0+0], %r1; .param .b32 retval0;\n"
                        "   call.uni (retval0), f, (param0); ld.param.b32 %r2, [retval0+0]; }\n"
                        " { .param .b32 param0; st.param.b32 [param0], %r2; .param .b32 retval0;\n"
                        "   call.uni (retval0), f, (param0); ld.param.b32 %r1, [retval0]; }\n"
                        " st.shared.u32 [buf+4], %r1;\n"
                        " ret;\n}\n",
                        "c.ptx");
  const ast::Function& k = m.functions.at(1);
  ASSERT_EQ(k.locals.size(), 6u);
  EXPECT_EQ(k.locals[0].name, "__local_depot0");
  EXPECT_EQ(k.locals[0].space, ast::StateSpace::local);
  EXPECT_EQ(k.locals[0].align, 8u);
  EXPECT_EQ(k.locals[0].bytes(), 16u);
  EXPECT_EQ(k.locals[1].space, ast::StateSpace::shared);
  EXPECT_EQ(k.locals[2].name, "param0");
  EXPECT_EQ(k.locals[2].space, ast::StateSpace::param);
  EXPECT_EQ(k.locals[2].scope, 1u);
  EXPECT_EQ(k.locals[4].name, "param0");
  EXPECT_EQ(k.locals[4].scope, 2u);
  const auto in = instructions(k);
  ASSERT_EQ(in.size(), 9u);
  EXPECT_EQ(in[0]->operands[1].kind, Kind::symbol);
  EXPECT_EQ(in[0]->operands[1].ref, ast::Operand::Ref::local);
  EXPECT_EQ(in[0]->operands[1].index, 0);
  // Each block's param0/retval0 is its own variable.
  EXPECT_EQ(in[1]->operands[0].index, 2);
  EXPECT_EQ(in[2]->operands[0].elems[0].index, 3);
  EXPECT_EQ(in[2]->operands[2].elems[0].index, 2);
  EXPECT_EQ(in[4]->operands[0].index, 4);
  EXPECT_EQ(in[5]->operands[2].elems[0].index, 4);
  EXPECT_EQ(in[5]->operands[0].elems[0].index, 5);
  EXPECT_EQ(in[7]->operands[0].kind, Kind::address);
  EXPECT_EQ(in[7]->operands[0].ref, ast::Operand::Ref::local);
  EXPECT_EQ(in[7]->operands[0].index, 1);
  EXPECT_EQ(in[7]->operands[0].name, "buf");
  EXPECT_EQ(in[7]->operands[0].offset, 4);
  // Inside f: its parameter and its return parameter.
  const auto fin = instructions(m.functions[0]);
  EXPECT_EQ(fin[0]->operands[1].ref, ast::Operand::Ref::param);
  EXPECT_EQ(fin[0]->operands[1].index, 0);
  EXPECT_EQ(fin[1]->operands[0].ref, ast::Operand::Ref::ret);
  EXPECT_EQ(fin[1]->operands[0].index, 0);
}

TEST(ParserBody, PragmaAndLocInsideABody) {
  const ast::Function f = kernel(".pragma \"nounroll\";\n.loc 1 2 3\nL: bra L;\n");
  ASSERT_EQ(f.body.size(), 2u);
  EXPECT_EQ(f.body[1].inst.operands[0].target, 0u);
}
