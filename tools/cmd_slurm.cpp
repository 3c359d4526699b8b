// `isatune slurm submit | status | resubmit --out DIR`: distributed tuning on a Slurm cluster (docs/distributed.md).
// submit writes DIR/shard.sbatch (a job array, one task per shard, each with its own database file
// DIR/shards/shard-I.sqlite and one GPU) and DIR/merge.sbatch (`isatune db merge` of every shard, submitted with
// --dependency=afterany on the array so it runs even when a shard failed, and lists what is missing), submits
// both unless --dry-run, and keeps the job ids in DIR/submit.json. status reads the shard databases and squeue;
// resubmit sends the shards that are not done again, alone (`--array=1,3`): each resumes from its database.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits.h>
#include <map>
#include <set>
#include <sstream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/db/database.h"
#include "isatune/error.h"
#include "table.h"

namespace isatune::cli {

namespace {
namespace fs = std::filesystem;

struct SlurmOptions {
  std::string out;
  uint32_t shards = 0;
  std::string partition, time_limit, account;
  int gpus_per_task = 1;
  int max_running = 0; // %K of --array: at most K shards at once
  bool dry_run = false;
  bool json = false;
  std::string which; // resubmit: shard list, empty: every shard not done
  std::vector<std::string> tune_args;
};

std::string quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+%@")
                        == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot find the isatune executable (/proc/self/exe) for the job scripts");
  return std::string(buf, size_t(n));
}

// Runs a shell command; returns (exit status, stdout).
std::pair<int, std::string> capture(const std::string& cmd) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) throw Error("cannot run: " + cmd);
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int rc = ::pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128, out};
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string shard_db(const fs::path& out, uint32_t i) { return (out / "shards" / ("shard-" + std::to_string(i) + ".sqlite")).string(); }

std::string header(const SlurmOptions& o, const std::string& name, const std::string& log) {
  std::string h = "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --ntasks=1\n#SBATCH --output=" + log + "\n";
  if (!o.partition.empty()) h += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.time_limit.empty()) h += "#SBATCH --time=" + o.time_limit + "\n";
  if (!o.account.empty()) h += "#SBATCH --account=" + o.account + "\n";
  return h;
}

std::string shard_script(const SlurmOptions& o, const fs::path& out, const std::string& exe) {
  std::string s = header(o, "isatune-shard", (out / "logs" / "shard-%a.%A.out").string());
  if (o.gpus_per_task > 0) s += "#SBATCH --gpus-per-task=" + std::to_string(o.gpus_per_task) + "\n";
  s += "# One shard of " + std::to_string(o.shards) + " per array task; the array id is the shard index, so a\n"
       "# resubmitted id (sbatch --array=3 shard.sbatch) takes the same share and resumes from its database.\n"
       "set -euo pipefail\n"
       "export ISATUNE_SHARD_COUNT=" + std::to_string(o.shards) + "\n"
       "exec " + quote(exe) + " tune";
  for (const auto& a : o.tune_args) s += " " + quote(a);
  s += " --shard \"$SLURM_ARRAY_TASK_ID/" + std::to_string(o.shards) + "\" --db " +
       quote((out / "shards").string()) + "/shard-\"$SLURM_ARRAY_TASK_ID\".sqlite\n";
  return s;
}

std::string merge_script(const SlurmOptions& o, const fs::path& out, const std::string& exe) {
  std::string s = header(o, "isatune-merge", (out / "logs" / "merge-%j.out").string());
  s += "# Runs after the array whatever its outcome (afterany): merges what exists and lists missing shards.\n"
       "set -uo pipefail\nexec " + quote(exe) + " db merge " + quote((out / "merged.sqlite").string());
  for (uint32_t i = 0; i < o.shards; ++i) s += " " + quote(shard_db(out, i));
  s += " --expect-shards " + std::to_string(o.shards) + "\n";
  return s;
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  if (!f) throw InputError(p.string() + ": cannot write");
}

nlohmann::json read_state(const fs::path& out) {
  std::ifstream f(out / "submit.json");
  if (!f) throw InputError((out / "submit.json").string() + ": no submission here (run isatune slurm submit --out " +
                           out.string() + " first)");
  try {
    return nlohmann::json::parse(f);
  } catch (const std::exception& e) {
    throw InputError((out / "submit.json").string() + ": " + e.what());
  }
}

std::string sbatch(const std::vector<std::string>& args) {
  std::string cmd = "sbatch --parsable";
  for (const auto& a : args) cmd += " " + quote(a);
  auto [rc, text] = capture(cmd);
  text = trim(text);
  if (rc != 0) throw InputError("sbatch failed (exit " + std::to_string(rc) + "): " + text);
  const auto nl = text.find_last_of('\n');
  std::string id = nl == std::string::npos ? text : text.substr(nl + 1);
  if (const auto semi = id.find(';'); semi != std::string::npos) id = id.substr(0, semi); // "id;cluster"
  return id;
}

// The array argument for a set of shard ids, with the %K cap.
std::string array_arg(const std::vector<uint32_t>& ids, int max_running) {
  std::string a;
  for (uint32_t i : ids) a += (a.empty() ? "" : ",") + std::to_string(i);
  if (ids.size() > 1 && ids.back() - ids.front() + 1 == ids.size())
    a = std::to_string(ids.front()) + "-" + std::to_string(ids.back());
  if (max_running > 0) a += "%" + std::to_string(max_running);
  return a;
}

int submit_jobs(const SlurmOptions& o, const fs::path& out, nlohmann::json& state, const std::vector<uint32_t>& ids,
                const char* what) {
  const std::string array = array_arg(ids, o.max_running);
  const std::string shard_file = (out / "shard.sbatch").string(), merge_file = (out / "merge.sbatch").string();
  nlohmann::json entry = {{"array", array}, {"shards", ids}};
  if (o.dry_run) {
    if (o.json) {
      state["dry_run"] = true;
      state["shard_script"] = shard_script(o, out, state["isatune"]);
      state["merge_script"] = merge_script(o, out, state["isatune"]);
      std::cout << state.dump(2) << "\n";
    } else {
      std::cout << "# " << shard_file << " (sbatch --array=" << array << ")\n"
                << shard_script(o, out, state["isatune"]) << "\n# " << merge_file
                << " (sbatch --dependency=afterany:<array job>)\n" << merge_script(o, out, state["isatune"])
                << "\n(dry run: nothing submitted)\n";
    }
    return kExitOk;
  }
  const std::string array_id = sbatch({"--array=" + array, shard_file});
  const std::string merge_id = sbatch({"--dependency=afterany:" + array_id, merge_file});
  entry["array_job"] = array_id;
  entry["merge_job"] = merge_id;
  state["submissions"].push_back(entry);
  write_file(out / "submit.json", state.dump(2) + "\n");
  if (o.json) {
    std::cout << nlohmann::json{{"array_job", array_id}, {"merge_job", merge_id}, {"array", array}, {"shards", ids},
                                {"out", out.string()}}.dump(2) << "\n";
  } else {
    std::cout << what << " shards " << array << " as array job " << array_id << "; merge job " << merge_id
              << " (afterany) writes " << (out / "merged.sqlite").string() << "\n"
              << "watch: isatune slurm status --out " << out.string() << "\n";
  }
  return kExitOk;
}

int run_submit(const SlurmOptions& o) {
  if (o.shards == 0) throw InputError("slurm submit: --shards N: the number of shards must be at least 1");
  if (o.tune_args.empty())
    throw InputError("slurm submit: give the tune arguments after --, e.g. -- gemm --problems shapes.txt");
  for (const auto& a : o.tune_args)
    if (a == "--shard" || a.rfind("--shard=", 0) == 0 || a == "--db" || a.rfind("--db=", 0) == 0)
      throw InputError("slurm submit: the tune arguments may not hold " + a + ": each shard gets --shard I/N and "
                       "its own --db under --out");
  const fs::path out = fs::absolute(o.out);
  fs::create_directories(out / "shards");
  fs::create_directories(out / "logs"); // sbatch needs the log folder before a task starts
  nlohmann::json state = {{"shards", o.shards}, {"tune_args", o.tune_args}, {"isatune", self_path()},
                          {"submissions", nlohmann::json::array()}, {"gpus_per_task", o.gpus_per_task},
                          {"partition", o.partition}, {"time", o.time_limit}, {"account", o.account},
                          {"max_running", o.max_running}};
  if (!o.dry_run) {
    write_file(out / "shard.sbatch", shard_script(o, out, state["isatune"]));
    write_file(out / "merge.sbatch", merge_script(o, out, state["isatune"]));
  }
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < o.shards; ++i) ids.push_back(i);
  return submit_jobs(o, out, state, ids, "submitted");
}

struct ShardStatus {
  std::string state; // done, running, pending, failed, missing
  size_t measurements = 0;
  std::string detail;
};

// Shard states from the shard databases (a run of shard I/N that ended: done) and squeue (pending, running).
std::vector<ShardStatus> shard_states(const fs::path& out, const nlohmann::json& state) {
  const uint32_t n = state.at("shards");
  std::vector<ShardStatus> st(n);
  for (uint32_t i = 0; i < n; ++i) {
    const std::string path = shard_db(out, i);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      st[i].state = "missing";
      continue;
    }
    try {
      auto d = db::Database::open(path, {.read_only = true});
      const std::string text = std::to_string(i) + "/" + std::to_string(n);
      auto rows = d.query("SELECT count(*), ifnull(max(ended_at IS NOT NULL), 0) FROM runs WHERE shard = ?", {text});
      auto m = d.query("SELECT count(*) FROM measurements");
      st[i].measurements = size_t(std::get<int64_t>(m[0][0]));
      st[i].state = std::get<int64_t>(rows[0][1]) ? "done" : "failed";
      st[i].detail = std::to_string(std::get<int64_t>(rows[0][0])) + " run(s)";
    } catch (const Error& e) {
      st[i].state = "failed";
      st[i].detail = e.what();
    }
  }
  // What the scheduler still holds: pending or running array tasks of our jobs.
  std::string ids;
  for (const auto& s : state.at("submissions")) ids += (ids.empty() ? "" : ",") + s.at("array_job").get<std::string>();
  if (!ids.empty()) {
    auto [rc, text] = capture("squeue -h -r -o '%i %t' -j " + quote(ids));
    if (rc == 0) {
      std::istringstream in(text);
      for (std::string id, t; in >> id >> t;) {
        const auto us = id.find('_');
        if (us == std::string::npos) continue;
        uint32_t i = 0;
        try {
          i = uint32_t(std::stoul(id.substr(us + 1)));
        } catch (const std::exception&) {
          continue;
        }
        if (i >= n || st[i].state == "done") continue;
        st[i].state = t == "PD" ? "pending" : "running";
        st[i].detail = "job " + id + " " + t;
      }
    }
  }
  return st;
}

int run_status(const SlurmOptions& o) {
  const fs::path out = fs::absolute(o.out);
  const nlohmann::json state = read_state(out);
  const auto st = shard_states(out, state);
  std::map<std::string, size_t> by;
  for (const auto& s : st) by[s.state]++;
  std::string merge_job = state.at("submissions").empty() ? "" : state["submissions"].back().value("merge_job", "");
  std::string merge_state = "not submitted";
  if (!merge_job.empty()) {
    auto [rc, text] = capture("squeue -h -o '%t %r' -j " + quote(merge_job));
    text = trim(text);
    merge_state = rc == 0 && !text.empty() ? "job " + merge_job + " " + text : "job " + merge_job + " finished";
  }
  const bool merged = fs::exists(out / "merged.sqlite");
  if (o.json) {
    nlohmann::json j;
    j["out"] = out.string();
    j["shards"] = nlohmann::json::array();
    for (size_t i = 0; i < st.size(); ++i)
      j["shards"].push_back({{"index", i}, {"state", st[i].state}, {"measurements", st[i].measurements},
                             {"detail", st[i].detail}});
    for (const char* k : {"done", "running", "pending", "failed", "missing"}) j["counts"][k] = by[k];
    j["merge"] = {{"job", merge_job}, {"state", merge_state}, {"merged_db_exists", merged}};
    std::cout << j.dump(2) << "\n";
  } else {
    Table t({"shard", "state", "measurements", "detail"});
    for (size_t i = 0; i < st.size(); ++i)
      t.add({std::to_string(i), st[i].state, std::to_string(st[i].measurements), st[i].detail});
    std::cout << t.str();
    std::cout << by["done"] << " done, " << by["running"] << " running, " << by["pending"] << " pending, "
              << by["failed"] << " failed, " << by["missing"] << " missing of " << st.size() << "; merge "
              << merge_state << (merged ? ", " + (out / "merged.sqlite").string() + " exists" : "") << "\n";
    if (by["failed"] + by["missing"])
      std::cout << "resubmit the failed and missing shards alone: isatune slurm resubmit --out " << o.out << "\n";
  }
  return kExitOk;
}

int run_resubmit(const SlurmOptions& opt) {
  const fs::path out = fs::absolute(opt.out);
  nlohmann::json state = read_state(out);
  SlurmOptions o = opt;
  o.shards = state.at("shards");
  o.tune_args = state.at("tune_args").get<std::vector<std::string>>();
  o.gpus_per_task = state.value("gpus_per_task", 1);
  o.max_running = state.value("max_running", 0);
  if (o.partition.empty()) o.partition = state.value("partition", "");
  if (o.time_limit.empty()) o.time_limit = state.value("time", "");
  if (o.account.empty()) o.account = state.value("account", "");
  std::vector<uint32_t> ids;
  if (!o.which.empty()) {
    std::stringstream ss(o.which);
    for (std::string x; std::getline(ss, x, ',');) {
      unsigned long v = 0;
      try {
        size_t used = 0;
        v = std::stoul(x, &used);
        if (used != x.size()) throw std::invalid_argument(x);
      } catch (const std::exception&) {
        throw InputError("--shards-list '" + o.which + "': expected shard numbers like 1,3");
      }
      if (v >= o.shards) throw InputError("--shards-list: shard " + x + " is not below " + std::to_string(o.shards));
      ids.push_back(uint32_t(v));
    }
  } else {
    const auto st = shard_states(out, state);
    for (uint32_t i = 0; i < st.size(); ++i)
      if (st[i].state == "failed" || st[i].state == "missing") ids.push_back(i);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.empty()) {
    if (o.json) std::cout << nlohmann::json{{"resubmitted", nlohmann::json::array()}}.dump(2) << "\n";
    else std::cout << "nothing to resubmit: no shard failed or is missing\n";
    return kExitOk;
  }
  return submit_jobs(o, out, state, ids, "resubmitted");
}

} // namespace

void add_slurm_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto* slurm = app.add_subcommand("slurm", "Distributed tuning on a Slurm cluster: a job array of shards and a "
                                            "merge job (docs/distributed.md)");
  slurm->require_subcommand(1);
  auto common = [](CLI::App* c, SlurmOptions& o) {
    c->add_option("--out", o.out, "Folder of the campaign: scripts, shard databases, logs, merged.sqlite")->required();
    c->add_flag("--json", o.json, "Print JSON instead of text");
  };
  auto submit_options = [](CLI::App* c, SlurmOptions& o) {
    c->add_option("--partition", o.partition, "sbatch --partition");
    c->add_option("--time", o.time_limit, "sbatch --time per shard (e.g. 2:00:00)");
    c->add_option("--account", o.account, "sbatch --account");
    c->add_flag("--dry-run", o.dry_run, "Print the scripts, submit nothing");
  };
  {
    auto opt = std::make_shared<SlurmOptions>();
    auto* c = slurm->add_subcommand(
        "submit",
        "Write and submit a job array of N shards (one GPU each, own database) and a merge job that runs after "
        "it (afterany); prints the job ids.\nExample: isatune slurm submit --out run1 --shards 8 --partition gpu "
        "--time 2:00:00 -- gemm --target gfx942 --device hip --problems shapes.txt --budget 500");
    common(c, *opt);
    submit_options(c, *opt);
    c->add_option("--shards", opt->shards, "Number of shards (array tasks)")->required();
    c->add_option("--gpus-per-task", opt->gpus_per_task, "GPUs per shard (0: none, for the emulator); default 1");
    c->add_option("--max-running", opt->max_running, "At most K shards at once (--array=0-N%K)");
    c->add_option("tune", opt->tune_args, "After --: the arguments of isatune tune, without --shard and --db");
    c->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_submit(*opt); }); });
  }
  {
    auto opt = std::make_shared<SlurmOptions>();
    auto* c = slurm->add_subcommand(
        "status", "Shards done, running, pending, failed or missing (from the shard databases and squeue), and the "
                  "merge job.\nExample: isatune slurm status --out run1");
    common(c, *opt);
    c->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_status(*opt); }); });
  }
  {
    auto opt = std::make_shared<SlurmOptions>();
    auto* c = slurm->add_subcommand(
        "resubmit", "Submit the failed and missing shards again, alone (each resumes from its database), and a new "
                    "merge job after them.\nExample: isatune slurm resubmit --out run1 --shards-list 3");
    common(c, *opt);
    submit_options(c, *opt);
    c->add_option("--shards-list", opt->which, "Shards to resubmit, e.g. 1,3 (default: every failed or missing one)");
    c->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_resubmit(*opt); }); });
  }
}

} // namespace isatune::cli
