#include "help_examples.h"

#include <map>
#include <string>

namespace isatune::cli {

namespace {

// Command path ("db best") -> example lines. Each runs as written from the repository root (the emulator stands
// in for a GPU), except where a file of yours is named.
const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> table = {
      {"targets", "isatune targets --json"},
      {"asm", "isatune asm tests/fixtures/vector_add.s --target gfx942 -o vadd.hsaco\n"
              "isatune asm tests/fixtures/add_one.ptx --backend ptxas -o add_one.cubin"},
      {"inspect", "isatune inspect vadd.hsaco --workgroup-size 256 --disasm"},
      {"db", "isatune db best --db tuning.db --generator softmax --json"},
      {"db ls", "isatune db ls --db tuning.db"},
      {"db show", "isatune db show --db tuning.db 1"},
      {"db best", "isatune db best --db tuning.db --generator softmax --json"},
      {"db verify", "isatune db verify --db tuning.db"},
      {"db export", "isatune db export --db tuning.db exported/"},
      {"db import", "isatune db import --db other.db exported/"},
      {"db merge", "isatune db merge all.db shard-0.db shard-1.db --expect-shards 2\n"
                    "isatune db merge --db tuning.db node2.db"},
      {"db gc", "isatune db gc --db tuning.db"},
      {"db vendor-time", "isatune db vendor-time --db tuning.db --sig a=f16,b=f16,cd=f32,layout=NT --problem "
                         "M=4096,N=4096,K=4096 --target sm_90a --cus 132 --ms 0.173 --library 'cublas 13.0'"},
      {"db migrate", "isatune db migrate --db old.db"},
      {"devices", "isatune devices --json"},
      {"run", "isatune run tests/fixtures/vector_add.s --kernel vadd --grid 4 --block 256 \\\n"
              "    --arg buf:f32:1000:random --arg buf:f32:1000:random --arg buf:f32:1000:zero:out=c.bin --arg u32:1000\n"
              "isatune run softmax --target gfx942 --problem rows=5,N=100 --device emu --json"},
      {"tune", "isatune tune softmax --device emu:gfx942 --problem rows=64,N=1000 --budget 50 --db tuning.db\n"
               "isatune tune --replay ../shared/datasets/gemm-rtx3090/RTX_3090.json.gz --strategy random --budget 100"},
      {"score", "isatune score --strategy all --repeats 5 ../shared/datasets/gemm-rtx3090/RTX_3090.json.gz"},
      {"gen", "isatune gen softmax --target sm_80 --param vec=4 --problem rows=64,N=1000 --json"},
      {"space", "isatune space gemm --target gfx942 --sig a=bf16,b=bf16 --list 5"},
      {"emu-coverage", "isatune emu-coverage tests/fixtures --unsupported"},
      {"report", "isatune report --db tuning.db -o report.html"},
      {"model", "isatune model check --aiter-csv tests/fixtures/aiter/bf16_tuned_gemm_gfx950_asm.csv \\\n"
                "    --co-dir tests/fixtures/aiter_timing"},
      {"model check", "isatune model check --aiter-csv tests/fixtures/aiter/bf16_tuned_gemm_gfx950_asm.csv \\\n"
                      "    --co-dir tests/fixtures/aiter_timing --json"},
      {"model attention", "isatune model attention --target gfx942 --problem B=1,Hq=16,Sq=4096 --cu-subset 1 \\\n"
                          "    --co-dir tests/fixtures/aiter --point waves=8,block_n=64,mfma=32x32x8,p_round=rtz"},
      {"advise", "isatune advise --target gfx942 --model Llama-3-8B --tokens 8192"},
      {"slurm", "isatune slurm submit --out run1 --shards 8 --partition gpu --dry-run \\\n"
                "    -- rmsnorm --target gfx942 --device hip --problems shapes.txt --strategy exhaustive\n"
                "isatune slurm status --out run1"},
  };
  return table;
}

void visit(CLI::App& app, const std::string& path) {
  for (CLI::App* sub : app.get_subcommands({})) {
    const std::string name = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    if (auto it = examples().find(name); it != examples().end()) {
      std::string lines;
      for (size_t b = 0; b < it->second.size();) {
        size_t e = it->second.find('\n', b);
        if (e == std::string::npos) e = it->second.size();
        lines += "  " + it->second.substr(b, e - b) + "\n";
        b = e + 1;
      }
      const std::string footer = sub->get_footer();
      // A command whose own footer already ends with an example keeps it.
      if (footer.find("Example") == std::string::npos)
        sub->footer(footer + (footer.empty() ? "" : "\n\n") + "Example:\n" + lines);
    }
    visit(*sub, name);
  }
}

} // namespace

void add_help_examples(CLI::App& app) { visit(app, ""); }

} // namespace isatune::cli
