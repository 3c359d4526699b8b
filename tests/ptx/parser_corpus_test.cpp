// The parser on whole modules: every builder form, nvcc output of the CUDA fixtures, a Triton-style file, and
// whatever tests/fixtures/ptx/cuda/ holds. Statement counts are checked against a separate scanner that knows
// only that instructions end in ';' and directives start with '.'; ptxas, where present, must accept each
// file.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "forms.h"
#include "isatune/ptx/module.h"
#include "isatune/ptx/parser.h"
#include "isatune/toolchain/ptx_compiler.h"

using namespace isatune;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Counts instructions without parsing: drop comments, drop line directives (.loc/.file), drop `.section {..}`
// blocks, split at ';', strip leading braces and `label:` prefixes; what is left and does not start with '.'
// is an instruction.
size_t count_instructions(const std::string& text) {
  std::string s;
  s.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t e = text.find("*/", i + 2);
      i = e == std::string::npos ? text.size() : e + 2;
    } else {
      s += text[i++];
    }
  }
  std::string t;
  std::istringstream lines(s);
  for (std::string line; std::getline(lines, line);) {
    const size_t b = line.find_first_not_of(" \t");
    if (b != std::string::npos && (line.compare(b, 4, ".loc") == 0 || line.compare(b, 5, ".file") == 0))
      continue;
    t += line + "\n";
  }
  for (size_t at; (at = t.find(".section")) != std::string::npos;) {
    const size_t open = t.find('{', at), close = t.find('}', open);
    t.erase(at, close + 1 - at);
  }
  size_t n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= t.size(); ++i) {
    if (i < t.size() && t[i] != ';')
      continue;
    std::string chunk = t.substr(start, i - start);
    start = i + 1;
    if (i == t.size())
      break;
    for (bool again = true; again;) {
      again = false;
      const size_t b = chunk.find_first_not_of(" \t\r\n");
      if (b == std::string::npos) {
        chunk.clear();
        break;
      }
      chunk.erase(0, b);
      // A function header runs up to the '{' of its body (an initialiser's '{' follows an '=').
      const size_t brace = chunk.find('{');
      if (chunk[0] == '.' && brace != std::string::npos && chunk.rfind('=', brace) == std::string::npos) {
        chunk.erase(0, brace + 1);
        again = true;
        continue;
      }
      if (chunk[0] == '{' || chunk[0] == '}') {
        chunk.erase(0, 1);
        again = true;
        continue;
      }
      size_t k = 0;
      while (k < chunk.size() && (isalnum((unsigned char)chunk[k]) || chunk[k] == '_' || chunk[k] == '$'))
        ++k;
      if (k > 0 && k < chunk.size() && chunk[k] == ':' && (k + 1 >= chunk.size() || chunk[k + 1] != ':')) {
        chunk.erase(0, k + 1);
        again = true;
      }
    }
    if (!chunk.empty() && chunk[0] != '.')
      ++n;
  }
  return n;
}

size_t count_parsed(const ptx::ast::Module& m) {
  size_t n = 0;
  for (const auto& f : m.functions)
    for (const auto& s : f.body)
      n += s.inst.mnemonic.empty() ? 0 : 1;
  return n;
}

std::vector<fs::path> corpus_files() {
  std::vector<fs::path> out;
  for (const char* dir : {"ptx/parser", "ptx/cuda"}) {
    const fs::path d = fs::path(ISATUNE_FIXTURES_DIR) / dir;
    if (!fs::is_directory(d))
      continue;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".ptx")
        out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string forms_module(const std::string& target, bool sm90) {
  ptx::Module m(target);
  for (const auto& f : ptx::test_forms::all_forms())
    if (sm90 || !f.sm90a_only)
      f.build(m.add_kernel(f.name));
  return ptx::print(m);
}

} // namespace

TEST(ParserCorpus, TheIndependentCounterCountsWhatItShould) {
  // The scanner must not be trivially right: a known text with labels, scopes, directives, a multi-line call.
  const std::string t = ".version 8.0\n.target sm_80\n.address_size 64\n.func f(.param .b32 a)\n{ ret; }\n"
                        ".visible .entry k() /* c; */ {\n .reg .b32 %r<2>; // x;\n L1: mov.u32 %r1, 1;\n"
                        " { .param .b32 p; st.param.b32 [p], %r1;\n call.uni\n f,\n (\n p\n );\n }\n"
                        " .loc 1 2 3\n L2:\n ret;\n}\n";
  EXPECT_EQ(count_instructions(t), 5u);
  EXPECT_EQ(count_parsed(ptx::parse(t, "t.ptx")), 5u);
}

TEST(ParserCorpus, EveryBuilderFormParses) {
  for (const auto& form : ptx::test_forms::all_forms()) {
    const std::string target = form.sm90a_only ? "sm_90a" : "sm_80";
    ptx::Module m(target);
    form.build(m.add_kernel(form.name));
    const std::string text = ptx::print(m);
    ptx::ast::Module a;
    try {
      a = ptx::parse(text, form.name + ".ptx");
    } catch (const ptx::ParseError& e) {
      ADD_FAILURE() << form.name << ": " << e.what() << "\n" << text;
      continue;
    }
    ASSERT_EQ(a.functions.size(), 1u) << form.name;
    EXPECT_EQ(a.functions[0].name, form.name);
    EXPECT_TRUE(a.functions[0].entry);
    EXPECT_EQ(a.target, target);
    EXPECT_EQ(count_parsed(a), count_instructions(text)) << form.name;
    EXPECT_EQ(
        count_parsed(a), m.kernels()[0].body().size() -
                             [&] {
                               size_t labels = 0;
                               for (const auto& in : m.kernels()[0].body())
                                 labels += in.opcode.empty() ? 1 : 0;
                               return labels;
                             }())
        << form.name;
  }
  // All forms in one module too (kernels share the dynamic shared variable declared once).
  const ptx::ast::Module all = ptx::parse(forms_module("sm_90a", true), "forms.ptx");
  EXPECT_EQ(all.functions.size(), ptx::test_forms::all_forms().size());
}

TEST(ParserCorpus, FixtureFilesParseWithTheIndependentCount) {
  const auto files = corpus_files();
  ASSERT_GE(files.size(), 7u) << "the parser fixtures are missing from " << ISATUNE_FIXTURES_DIR;
  for (const fs::path& p : files) {
    const std::string text = read(p);
    ptx::ast::Module m;
    try {
      m = ptx::parse(text, p.filename().string());
    } catch (const ptx::ParseError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_FALSE(m.functions.empty()) << p;
    EXPECT_EQ(count_parsed(m), count_instructions(text)) << p;
  }
}

TEST(ParserCorpus, PtxasAcceptsEveryCorpusFile) {
  const std::string why = toolchain::ptx_backend_unavailable_reason(toolchain::PtxBackend::ptxas);
  if (!why.empty())
    GTEST_SKIP() << why;
  std::vector<std::pair<std::string, std::string>> inputs; // name, text
  for (const fs::path& p : corpus_files())
    inputs.emplace_back(p.filename().string(), read(p));
  inputs.emplace_back("forms_sm80.ptx", forms_module("sm_80", false));
  inputs.emplace_back("forms_sm90a.ptx", forms_module("sm_90a", true));
  for (const auto& [name, text] : inputs) {
    const ptx::ast::Module m = ptx::parse(text, name); // parser accepts (a throw fails the test)
    toolchain::PtxCompileOptions o;
    o.target = m.target;
    o.backend = toolchain::PtxBackend::ptxas;
    o.file_name = name;
    EXPECT_NO_THROW(toolchain::compile_ptx(text, o)) << name;
  }
}

// Not a timed test (speed is measured by benchmarks): prints the figure for the report and checks the count.
TEST(ParserCorpus, ALargeGeneratedModuleParsesCompletely) {
  std::string body;
  const int n = 12000;
  for (int i = 0; i < n / 4; ++i) {
    body += "  add.s32 %r" + std::to_string(i % 90) + ", %r" + std::to_string((i + 1) % 90) + ", " +
            std::to_string(i) + ";\n";
    body += "  @%p1 ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1+" + std::to_string(16 * (i % 64)) + "];\n";
    body += "L" + std::to_string(i) + ":\n  setp.lt.u32 %p1, %r5, 0x" + std::to_string(i) + ";\n";
    body += "  @!%p1 bra L" + std::to_string(i) + ";\n";
  }
  const std::string text =
      ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry big(.param .u64 p)\n{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<100>;\n  .reg .b64 %rd<4>;\n" +
      body + "  ret;\n}\n";
  const auto t0 = std::chrono::steady_clock::now();
  const ptx::ast::Module m = ptx::parse(text, "big.ptx");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(count_parsed(m), count_instructions(text));
  std::cout << "[ parser  ] " << std::count(text.begin(), text.end(), '\n') << " lines, " << text.size()
            << " bytes parsed in " << ms << " ms\n";
  for (const fs::path& p : corpus_files()) {
    const std::string t = read(p);
    const auto s = std::chrono::steady_clock::now();
    (void)ptx::parse(t, p.filename().string());
    std::cout << "[ parser  ] " << p.filename().string() << ": "
              << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count()
              << " ms\n";
  }
}
