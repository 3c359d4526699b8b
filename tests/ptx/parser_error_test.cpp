// The PTX parser's errors: each bad input stops with a ParseError whose message names the file, the line, the
// column and the offending token or instruction.
#include <gtest/gtest.h>

#include "isatune/ptx/parser.h"

using namespace isatune::ptx;

namespace {

struct Bad {
  const char* what;
  std::string text;
  uint32_t line;
  uint32_t column;    // 0: not checked
  std::string needle; // must appear in the message
};

const std::string kHead = ".version 8.0\n.target sm_80\n.address_size 64\n";               // lines 1-3
const std::string kOpen = ".visible .entry k()\n{\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n"; // lines 4-7

std::string in_body(const std::string& lines) {
  return kHead + kOpen + lines + "\n}\n";
} // body from line 8

} // namespace

TEST(ParserError, IsAnInputErrorWithTheLocation) {
  try {
    parse(in_body("mov.u32 %r1, 1;\n  foo.bar %r1;"), "k.ptx");
    FAIL() << "no error";
  } catch (const isatune::InputError& e) {
    EXPECT_STREQ(e.what(), "k.ptx:9:3: unknown instruction 'foo.bar'");
    const auto* pe = dynamic_cast<const ParseError*>(&e);
    ASSERT_NE(pe, nullptr);
    EXPECT_EQ(pe->file(), "k.ptx");
    EXPECT_EQ(pe->line(), 9u);
    EXPECT_EQ(pe->column(), 3u);
    EXPECT_EQ(pe->message(), "unknown instruction 'foo.bar'");
  }
}

TEST(ParserError, EachBadInputNamesItsLineAndToken) {
  const std::vector<Bad> cases = {
      {"unknown instruction", in_body("mov.u32 %r1, 1;\nfrobnicate.u32 %r1, %r2;"), 9, 1, "'frobnicate.u32'"},
      {"undeclared register", in_body("mov.u32 %r1, %r9;"), 8, 14, "'%r9'"},
      {"undeclared register in an address", in_body("ld.global.u32 %r1, [%rd1];"), 8, 21, "'%rd1'"},
      {"missing semicolon", in_body("mov.u32 %r1, 1\nmov.u32 %r2, 2;"), 8, 15, "missing ';' after 'mov.u32'"},
      {"missing semicolon at the end of a body", in_body("ret"), 8, 4, "missing ';' after 'ret'"},
      {"unbalanced open brace", kHead + kOpen + "{ mov.u32 %r1, 1;\n", 8, 1, "unbalanced '{'"},
      {"unbalanced open brace of the body", kHead + kOpen + "ret;\n", 5, 1, "never closed"},
      {"unbalanced close brace", in_body("ret;\n}"), 10, 1, "'}'"},
      {"bad immediate: hex without digits", in_body("mov.u32 %r1, 0x;"), 8, 14, "malformed immediate '0x'"},
      {"bad immediate: short f32", in_body("mov.f32 %r1, 0f3F80;"), 8, 14, "'0f3F80'"},
      {"bad immediate: trailing letters", in_body("mov.u32 %r1, 12abc;"), 8, 14, "'12abc'"},
      {"bad immediate: octal digit", in_body("mov.u32 %r1, 09;"), 8, 14, "'09'"},
      {"bad immediate: overflow", in_body("mov.u32 %r1, 99999999999999999999;"), 8, 14, "overflow"},
      {"duplicate label in one scope", in_body("L1: mov.u32 %r1, 1;\nL1: ret;"), 9, 1,
       "duplicate label 'L1'"},
      {"undefined label", in_body("bra NOWHERE;\nret;"), 8, 5, "undefined label 'NOWHERE'"},
      {"label of an inner scope", in_body("bra IN;\n{ IN: ret; }"), 8, 5, "undefined label 'IN'"},
      {"duplicate register", in_body(".reg .b32 %r2;"), 8, 11, "duplicate definition of '%r2'"},
      {"register out of its scope", in_body("{ .reg .b32 t; }\nmov.u32 t, 1;"), 9, 9, "'t'"},
      {"unknown directive in a body", in_body(".frob 1;"), 8, 1, "unknown directive '.frob'"},
      {"unknown directive at module scope", kHead + ".frob 1;\n", 4, 1, "unknown directive '.frob'"},
      {"missing .version", ".target sm_80\n.address_size 64\n", 1, 1, "'.version'"},
      {"malformed .version", ".version 8\n.target sm_80\n", 1, 10, "malformed '.version'"},
      {"unsupported .version", ".version 9.5\n.target sm_80\n", 1, 10, "9.5"},
      {"missing .target", ".version 8.0\n.address_size 64\n", 2, 1, "'.target'"},
      {"malformed .target", ".version 8.0\n.target banana\n", 2, 9, "'banana'"},
      {"unterminated comment", in_body("mov.u32 %r1, 1; /* never\nclosed"), 8, 17, "unterminated comment"},
      {"unterminated string", kHead + ".pragma \"nounroll;\n", 4, 9, "unterminated string"},
      {"undeclared guard", in_body("@%p7 ret;"), 8, 2, "'%p7'"},
      {"guard is not a predicate", in_body("@%r1 ret;"), 8, 2, "not a .pred"},
      {"negated non-predicate", in_body("mov.u32 %r1, !%r2;"), 8, 14, "'%r2'"},
      {"undefined symbol", in_body("mov.u32 %r1, nowhere;"), 8, 14, "undefined symbol 'nowhere'"},
      {"call to an undeclared function", in_body("call.uni later;"), 8, 10, "'later'"},
      {"call with the wrong argument count",
       kHead + ".func f(.param .b32 a)\n{\nret;\n}\n" + kOpen + "call.uni f, ();\n}\n", 12, 10, "'f'"},
      {"wrong operand count", in_body("add.s32 %r1, %r2;"), 8, 1, "'add.s32' takes 3"},
      {"empty vector", in_body("mov.b64 %r1, {};"), 8, 15, "empty vector"},
      {"unclosed address", in_body("ld.shared.u32 %r1, [%r2;"), 8, 24, "']'"},
      {"minus in an address", in_body("ld.shared.u32 %r1, [%r2-4];"), 8, 24, "'-'"},
      {"hex float in an expression", in_body("mov.f32 %r1, -0f3F800000;"), 8, 15, "'0f3F800000'"},
      {"special register without component", in_body("mov.u32 %r1, %tid;"), 8, 14, "'%tid'"},
      {"vector element of a scalar", in_body("mov.u32 %r1, %r2.x;"), 8, 14, "'%r2'"},
      {"alignment not a power of two", kHead + ".global .align 3 .u32 x;\n", 4, 16, "power of two"},
      {"too many initialisers", kHead + ".global .u32 x[2] = {1, 2, 3};\n", 4, 28, "too many"},
      {"integer initialiser of a float", kHead + ".global .f32 x = 1;\n", 4, 18, "mismatch"},
      {"initialiser in .shared", kHead + ".shared .u32 x = 1;\n", 4, 16, "initialiser"},
      {"duplicate global", kHead + ".global .u32 x;\n.global .u32 x;\n", 5, 14,
       "duplicate definition of 'x'"},
      {"duplicate function", kHead + ".func f()\n{\nret;\n}\n.func f()\n{\nret;\n}\n", 8, 7, "'f'"},
      {"param duplicated by a register",
       kHead + ".visible .entry k(.param .u32 a)\n{\n.reg .b32 a;\nret;\n}\n", 6, 11,
       "duplicate definition of 'a'"},
      {"division by zero", in_body("mov.u32 %r1, 1/0;"), 8, 15, "division by zero"},
      {"unknown .target option", ".version 8.0\n.target sm_80, turbo\n", 2, 16, "'turbo'"},
      {"label after a guard", in_body("@%p1 L: ret;"), 8, 6, "'L'"},
      {"entry declared twice as .func", kHead + ".func f();\n.visible .entry f()\n{\nret;\n}\n", 5, 17,
       "'f'"},
      {"bad character", in_body("mov.u32 %r1, 1; #"), 8, 17, "'#'"},
  };
  for (const Bad& b : cases) {
    try {
      parse(b.text, "bad.ptx");
      ADD_FAILURE() << b.what << ": no error for\n" << b.text;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), b.line) << b.what << ": " << e.what();
      if (b.column) {
        EXPECT_EQ(e.column(), b.column) << b.what << ": " << e.what();
      }
      EXPECT_NE(std::string(e.what()).find(b.needle), std::string::npos) << b.what << ": " << e.what();
      const std::string prefix = "bad.ptx:" + std::to_string(b.line) + ":";
      EXPECT_EQ(std::string(e.what()).substr(0, prefix.size()), prefix) << b.what << ": " << e.what();
    }
  }
}

TEST(ParserError, DeepNestingIsAnErrorNotACrash) {
  const std::string parens =
      "mov.u32 %r1, " + std::string(100000, '(') + "1" + std::string(100000, ')') + ";";
  const std::string minus = "mov.u32 %r1, " + std::string(100000, '-') + "1;";
  const std::string braces =
      "mov.b64 %r1, " + std::string(100000, '{') + "%r1" + std::string(100000, '}') + ";";
  std::string dims = ".global .u32 x";
  for (int i = 0; i < 100000; ++i)
    dims += "[1]";
  for (const std::string& text : {in_body(parens), in_body(minus), in_body(braces), kHead + dims + ";\n"}) {
    try {
      parse(text, "deep.ptx");
      ADD_FAILURE() << "no error";
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("deep.ptx:"), std::string::npos);
    }
  }
  // A reasonable depth is fine.
  EXPECT_NO_THROW(
      parse(in_body("mov.u32 %r1, " + std::string(50, '(') + "1" + std::string(50, ')') + ";"), "ok.ptx"));
}
