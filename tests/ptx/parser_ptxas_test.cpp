// ptxas as the oracle of the parser: for a kernel mutated in the ways the parser is responsible for (names,
// scopes, labels, immediates, expressions, braces, semicolons, declarations), the parser accepts exactly when
// ptxas 13.0 does; where both reject, the parser's message names the line and the offending token.
// The corpus files are checked against ptxas in parser_corpus_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "isatune/ptx/parser.h"
#include "isatune/toolchain/diagnostic.h"
#include "isatune/toolchain/ptx_compiler.h"

using namespace isatune;

namespace {

// Line 21 is where `body` starts.
std::string kernel(const std::string& body, const std::string& decls = "") {
  return ".version 8.0\n.target sm_80\n.address_size 64\n" + decls +
         ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n"
         "  .reg .pred %p<3>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .reg .f32 %f<4>;\n"
         "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd1, %rd1;\n  ld.param.u32 %r1, [n];\n"
         "  mov.u32 %r2, %tid.x;\n  setp.ge.u32 %p1, %r2, %r1;\n  @%p1 bra DONE;\n  mul.wide.u32 %rd2, %r2, "
         "4;\n"
         "  add.s64 %rd3, %rd1, %rd2;\n  ld.global.f32 %f1, [%rd3];\n  add.f32 %f1, %f1, 0f3F800000;\n"
         "  st.global.f32 [%rd3], %f1;\n" +
         body + "\nDONE:\n  ret;\n}\n";
}

struct Case {
  const char* name;
  std::string text;
  bool valid;
  uint32_t line = 0; // for invalid cases: the line the parser must name
  std::string token; // and a token its message must quote
};

bool ptxas_accepts(const std::string& text, std::string& log) {
  toolchain::PtxCompileOptions o;
  o.target = "sm_80";
  o.backend = toolchain::PtxBackend::ptxas;
  o.file_name = "oracle.ptx";
  try {
    toolchain::compile_ptx(text, o);
    return true;
  } catch (const toolchain::AssemblyError& e) {
    log = e.what();
    return false;
  }
}

std::vector<Case> cases() {
  const std::string d =
      ".func (.param .b32 r) twice(.param .b32 a)\n{\n .reg .b32 %x;\n ld.param.b32 %x, [a];\n"
      " add.s32 %x, %x, %x;\n st.param.b32 [r], %x;\n ret;\n}\n"; // 8 lines: body at 29
  return {
      // Accepted by both.
      {"base", kernel(""), true, 0, ""},
      {"inline-asm scopes repeat labels and registers",
       kernel("  { .reg .pred P1; .reg .b32 t; L: add.u32 t, %r2, 1; setp.lt.u32 P1, t, 4; @P1 bra L; }\n"
              "  { .reg .pred P1; .reg .b32 t; L: add.u32 t, %r2, 2; setp.lt.u32 P1, t, 8; @P1 bra L; }"),
       true, 0, ""},
      {"inner scope branches to an enclosing label", kernel("  { @%p1 bra DONE; }"), true, 0, ""},
      {"inner register shadows an outer one",
       kernel("  { .reg .b32 %r2; mov.u32 %r2, 5; }\n  mov.u32 %r3, %r2;"), true, 0, ""},
      {"inner label shadows an outer one", kernel("  { DONE: @%p1 bra DONE; }"), true, 0, ""},
      {"constant expressions",
       kernel("  add.s32 %r3, %r2, (1<<4)+2*3;\n  and.b32 %r3, %r3, ~0xF;\n"
              "  ld.global.f32 %f2, [%rd3+(2*2)];"),
       true, 0, ""},
      {"immediates in every notation",
       kernel("  add.s32 %r3, %r2, 0b101;\n  add.s32 %r3, %r3, 017;\n  add.s32 %r3, %r3, 0x1fU;\n"
              "  add.s32 %r3, %r3, -12;\n  add.f32 %f2, %f1, 1.5e-1;\n  add.f32 %f2, %f2, .5;"),
       true, 0, ""},
      {"negative address offset", kernel("  ld.global.f32 %f2, [%rd3+-4];"), true, 0, ""},
      {"comments and instructions across lines",
       kernel("  /* a */ add.s32 /* b */ %r3,\n  %r2, // c\n  1;  mov.u32 %r4, %r3; mov.u32 %r5, %r4;"), true,
       0, ""},
      {"vector operands, sinks and pairs",
       kernel("  mov.b64 %rd2, {%r2, %r3};\n  mov.b64 {%r4, _}, %rd2;\n"
              "  setp.eq.u32 %p1|%p2, %r2, 3;\n  selp.u32 %r5, 1, 0, !%p2;"),
       true, 0, ""},
      {"a call through .param blocks",
       kernel("  { .param .b32 a0; .param .b32 r0; st.param.b32 [a0], %r2;\n"
              "    call.uni (r0), twice, (a0); ld.param.b32 %r3, [r0]; }",
              d),
       true, 0, ""},
      {"pragma in a body", kernel("  .pragma \"nounroll\";"), true, 0, ""},
      {"several variables in one declaration", kernel("", ".global .u32 ga, gb[2];\n"), true, 0, ""},
      {"nested and empty blocks", kernel("  { { } { mov.u32 %r3, 1; } }"), true, 0, ""},
      {"call arguments that are registers and immediates",
       kernel("  call.uni one, (%r2);\n  call.uni one, (1);", ".func one(.param .b32 a)\n{\n ret;\n}\n"),
       true, 0, ""},
      {"register parameters of a .func",
       kernel("  call.uni (%r3), inc, (%r2);",
              ".func (.reg .b32 r) inc(.reg .b32 a)\n{\n add.s32 r, a, 1;\n ret;\n}\n"),
       true, 0, ""},
      {"special registers",
       kernel("  mov.u32 %r3, %laneid;\n  mov.u32 %r3, %lanemask_lt;\n  mov.u64 %rd2, %clock64;\n"
              "  mov.u32 %r3, %dynamic_smem_size;\n  mov.u32 %r3, %ctaid.y;"),
       true, 0, ""},

      // Register ranges (`%r<8>` declares %r0..%r7), as ptxas 13.0 names them.
      {"a range shadowed in a block, and the rest of the outer one", kernel("  { .reg .b32 %r<2>; mov.u32 %r1, 1; mov.u32 %r5, %r1; }"), true},
      {"a range past the old 2^24 limit", kernel("  .reg .b32 %q<16777300>;\n  mov.u32 %q16777299, 1;"), true},
      {"a leading zero names the same register", kernel("  mov.u32 %r03, %r3;"), true},
      {"ranges of bases that differ by a digit", kernel("  .reg .b32 %y<20>;\n  .reg .b32 %y1<5>;\n  mov.u32 %y10, 1;"), true},
      {"a label with a range register's name", kernel("  .reg .b32 q<10>;\n  mov.u32 q5, 1;\nq5:\n  mov.u32 q5, 2;"), true},
      {"a register past the range", kernel("  mov.u32 %r8, 1;"), false, 21, "'%r8'"},
      {"a base ending in a digit names nothing", kernel("  .reg .b32 %t1<3>;\n  mov.u32 %t12, 1;"), false, 22, "'%t12'"},
      {"two ranges of one base in a scope", kernel("  .reg .b32 %r<2>;"), false, 21, "'%r<...>'"},
      {"two empty ranges of one base in a scope", kernel("  .reg .b32 %z<0>;\n  .reg .b32 %z<0>;"), false, 22, "'%z<...>'"},
      {"a range over a register declared alone", kernel("  .reg .b32 %z5;\n  .reg .b32 %z<10>;"), false, 22, "'%z5'"},
      {"a register declared alone with a range's name", kernel("  .reg .b32 %r05;"), false, 21, "'%r05'"},
      {"a register count past 2^32-1", kernel("  .reg .b32 %q<4294967296>;"), false, 21, "'4294967296'"},

      // Rejected by both.
      {"call with the wrong number of arguments",
       kernel("  call.uni one, ();", ".func one(.param .b32 a)\n{\n ret;\n}\n"), false, 25, "'one'"},
      {"empty statement", kernel("  add.s32 %r3, %r2, 1;;"), false, 21, "';'"},
      {"label after a guard", kernel("  @%p1 L: add.s32 %r3, %r2, 1;"), false, 21, "'L'"},
      {"unknown instruction", kernel("  frobnicate.u32 %r3, %r2;"), false, 21, "'frobnicate.u32'"},
      {"undeclared register", kernel("  add.s32 %r3, %r9, 1;"), false, 21, "'%r9'"},
      {"missing semicolon", kernel("  add.s32 %r3, %r2, 1\n  add.s32 %r4, %r3, 1;"), false, 21, "'add.s32'"},
      {"unbalanced open brace", kernel("  { add.s32 %r3, %r2, 1;"), false, 5, "'{'"},
      {"unbalanced close brace", kernel("") + "}\n", false, 25, "unbalanced '}'"},
      {"a '}' that ends the body early", kernel("  add.s32 %r3, %r2, 1; }\n  ld.global.f32 %f2, [%rd3];"),
       false, 22, "'ld.global.f32'"},
      {"bad immediate: 0x", kernel("  add.s32 %r3, %r2, 0x;"), false, 21, "'0x'"},
      {"bad immediate: short hex float", kernel("  add.f32 %f2, %f1, 0f3F80;"), false, 21, "'0f3F80'"},
      {"bad immediate: 12abc", kernel("  add.s32 %r3, %r2, 12abc;"), false, 21, "'12abc'"},
      {"bad immediate: 09", kernel("  add.s32 %r3, %r2, 09;"), false, 21, "'09'"},
      {"bad immediate: negated hex float", kernel("  add.f32 %f2, %f1, -0f3F800000;"), false, 21,
       "'0f3F800000'"},
      {"duplicate label in one scope", kernel("  L: add.s32 %r3, %r2, 1;\n  L: add.s32 %r3, %r2, 1;"), false,
       22, "'L'"},
      {"label duplicating the function's DONE", kernel("DONE:"), false, 22, "'DONE'"},
      {"undefined label", kernel("  @%p1 bra NOWHERE;"), false, 21, "'NOWHERE'"},
      {"label of an inner scope used outside", kernel("  @%p1 bra IN;\n  { IN: add.s32 %r3, %r2, 1; }"),
       false, 21, "'IN'"},
      {"duplicate register in one scope", kernel("  .reg .b32 %r3;"), false, 21, "'%r3'"},
      {"register used after its scope", kernel("  { .reg .b32 t; mov.u32 t, 1; }\n  mov.u32 %r3, t;"), false,
       22, "'t'"},
      {"minus offset in an address", kernel("  ld.global.f32 %f2, [%rd3-4];"), false, 21, "'-'"},
      {"special register without a component", kernel("  mov.u32 %r3, %tid;"), false, 21, "'%tid'"},
      {"call before the declaration", kernel("  call.uni later;") + ".func later()\n{\n ret;\n}\n", false, 21,
       "'later'"},
      {"unterminated comment", kernel("  /* open"), false, 21, "'/*'"},
      {"missing operand", kernel("  add.s32 %r3, %r2;"), false, 21, "'add.s32'"},
      {"trailing comma", kernel("  add.s32 %r3, %r2, 1,;"), false, 21, "';'"},
      {"unknown directive", kernel("  .frob 1;"), false, 21, "'.frob'"},
      {"predicate negation of a non-predicate", kernel("  mov.u32 %r3, !%r2;"), false, 21, "'%r2'"},
      {"initialiser in .shared", kernel("", ".shared .u32 s = 1;\n"), false, 4, "initialiser"},
      {"integer initialiser of .f32", kernel("", ".global .f32 g = 1;\n"), false, 4, "'1'"},
      {"too many initialisers", kernel("", ".global .u32 g[2] = {1, 2, 3};\n"), false, 4, "'3'"},
      {"alignment not a power of two", kernel("", ".global .align 3 .u32 g;\n"), false, 4, "'3'"},
      {"missing .version", kernel("").substr(kernel("").find(".target")), false, 1, "'.target'"},
      {"missing .target", ".version 8.0\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n", false, 2,
       "'.address_size'"},
      {"malformed .version", ".version 8\n.target sm_80\n.visible .entry k()\n{\n ret;\n}\n", false, 1,
       "'8'"},
  };
}

} // namespace

TEST(ParserPtxasOracle, TheParserAcceptsExactlyWhatPtxasAccepts) {
  const std::string why = toolchain::ptx_backend_unavailable_reason(toolchain::PtxBackend::ptxas);
  if (!why.empty())
    GTEST_SKIP() << why;
  for (const Case& c : cases()) {
    std::string log;
    const bool ptxas = ptxas_accepts(c.text, log);
    EXPECT_EQ(ptxas, c.valid) << c.name << ": the case's expectation disagrees with ptxas\n"
                              << log << "\n"
                              << c.text;
    try {
      ptx::parse(c.text, "oracle.ptx");
      EXPECT_TRUE(ptxas) << c.name << ": the parser accepts what ptxas rejects:\n" << log << "\n" << c.text;
    } catch (const ptx::ParseError& e) {
      EXPECT_FALSE(ptxas) << c.name << ": the parser rejects what ptxas accepts: " << e.what() << "\n"
                          << c.text;
      if (c.valid)
        continue;
      EXPECT_EQ(e.line(), c.line) << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.token), std::string::npos) << c.name << ": " << e.what();
    }
  }
}

// Without ptxas the same cases still pin the parser's verdicts (the expectations were checked against ptxas
// 13.0 by the test above).
TEST(ParserPtxasOracle, TheParserVerdictsHoldWithoutPtxas) {
  for (const Case& c : cases()) {
    bool parsed = true;
    try {
      ptx::parse(c.text, "oracle.ptx");
    } catch (const ptx::ParseError&) {
      parsed = false;
    }
    EXPECT_EQ(parsed, c.valid) << c.name;
  }
}

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_lines(const std::string& t) {
  std::vector<std::string> out;
  std::istringstream in(t);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

std::string join_lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& l : v)
    s += l + "\n";
  return s;
}

bool is_instruction_line(const std::string& l) {
  const size_t b = l.find_first_not_of(" \t");
  if (b == std::string::npos || l.back() != ';')
    return false;
  const char c = l[b];
  return std::isalpha((unsigned char)c) && l.find("//") == std::string::npos &&
         l.find(':') == std::string::npos;
}

// Mutations of a real file, each of a kind the parser must reject as ptxas does, at the middle instance.
std::vector<std::pair<std::string, std::string>> mutants(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto lines = split_lines(text);
  std::vector<size_t> inst, labels;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (is_instruction_line(lines[i]))
      inst.push_back(i);
    const std::string& l = lines[i];
    const size_t b = l.find_first_not_of(" \t");
    if (b != std::string::npos && l.back() == ':' && l.find(' ', b) == std::string::npos && l[b] != '.')
      labels.push_back(i);
  }
  if (!inst.empty()) {
    const size_t at = inst[inst.size() / 2];
    auto v = lines;
    v[at].pop_back(); // drop the ';'
    out.emplace_back("missing ';' on line " + std::to_string(at + 1), join_lines(v));
    v = lines;
    const size_t b = v[at].find_first_not_of(" \t");
    v[at].insert(b, "x"); // an unknown mnemonic
    out.emplace_back("unknown mnemonic on line " + std::to_string(at + 1), join_lines(v));
    v = lines;
    const size_t r = v[at].find('%', b);
    if (r != std::string::npos && v[at].compare(r, 4, "%tid") != 0) {
      v[at].insert(r + 1, "zz"); // an undeclared register
      out.emplace_back("undeclared register on line " + std::to_string(at + 1), join_lines(v));
    }
  }
  if (!labels.empty()) {
    auto v = lines;
    const size_t at = labels[labels.size() / 2];
    v.insert(v.begin() + long(at) + 1, v[at]); // the same label twice in one scope
    out.emplace_back("duplicate label on line " + std::to_string(at + 2), join_lines(v));
  }
  auto v = lines;
  for (size_t i = v.size(); i-- > 0;)
    if (v[i].find('}') != std::string::npos && v[i].find_first_not_of(" \t}") == std::string::npos) {
      v.erase(v.begin() + long(i)); // an unbalanced '{'
      out.emplace_back("last '}' removed", join_lines(v));
      break;
    }
  return out;
}

} // namespace

TEST(ParserPtxasOracle, MutatedCorpusFilesAreRejectedByBoth) {
  const std::string why = toolchain::ptx_backend_unavailable_reason(toolchain::PtxBackend::ptxas);
  if (!why.empty())
    GTEST_SKIP() << why;
  const std::filesystem::path dir = std::filesystem::path(ISATUNE_FIXTURES_DIR) / "ptx/parser";
  size_t checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".ptx")
      continue;
    const std::string text = read_file(e.path());
    const std::string target = ptx::parse(text, "x.ptx").target;
    for (const auto& [what, mutant] : mutants(text)) {
      toolchain::PtxCompileOptions o;
      o.target = target;
      o.backend = toolchain::PtxBackend::ptxas;
      bool ptxas = true, parser = true;
      std::string log, message;
      try {
        toolchain::compile_ptx(mutant, o);
      } catch (const toolchain::AssemblyError& ex) {
        ptxas = false;
        log = ex.what();
      }
      try {
        ptx::parse(mutant, e.path().filename().string());
      } catch (const ptx::ParseError& ex) {
        parser = false;
        message = ex.what();
      }
      EXPECT_EQ(parser, ptxas) << e.path().filename() << ", " << what << "\nparser: " << message
                               << "\nptxas: " << log;
      EXPECT_FALSE(parser) << e.path().filename() << ", " << what;
      ++checked;
    }
  }
  EXPECT_GE(checked, 30u);
}
