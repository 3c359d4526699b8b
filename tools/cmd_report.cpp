// `isatune report --db FILE [-o report.html] [--json] [--chartjs PATH]`: the tuning database as one
// self-contained HTML page (Chart.js inlined; opens offline) or as the same data in JSON (docs/report.md).
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "file_io.h"
#include "isatune/db/database.h"
#include "isatune/error.h"
#include "report_data.h"
#include "report_html.h"

namespace isatune::cli {

namespace {

struct ReportOptions {
  std::string db;
  std::string output;
  std::string chartjs; // empty: $ISATUNE_CHARTJS, else Debian's libjs-chart.js
  bool json = false;
};

std::string chartjs_path(const ReportOptions& o) {
  if (!o.chartjs.empty()) return o.chartjs;
  if (const char* env = std::getenv("ISATUNE_CHARTJS"); env && *env) return env;
  return default_chartjs_path();
}

void write_text(const std::string& path, const std::string& text) {
  write_binary_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

int run_report(const ReportOptions& o) {
  if (o.output.empty() && !o.json) throw InputError("report: give -o FILE.html (or --json for the data)");
  // The library first: without it no page can be written, whatever the database holds.
  const std::string lib = o.json ? "" : chartjs_path(o);
  struct stat st {};
  if (!o.json && stat(lib.c_str(), &st) != 0)
    throw UnavailableError("report: Chart.js not found at " + lib +
                           " (install Debian's libjs-chart.js, or give --chartjs PATH to chart.min.js)");
  auto db = db::Database::open(o.db, {.read_only = true});
  const nlohmann::json data = report_data(db);
  if (o.json) {
    const std::string text = data.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (o.output.empty()) {
      std::cout << text;
    } else {
      write_text(o.output, text);
      std::cout << "wrote " << o.output << " (" << data["runs"].size() << " run series, " << data["best"].size()
                << " best variants)\n";
    }
    return kExitOk;
  }
  write_text(o.output, report_html(data, read_text_file(lib)));
  std::cout << "wrote " << o.output << ": " << data["measurements"] << " measurements, " << data["runs"].size()
            << " run series, " << data["best"].size() << " best variants, " << data["rooflines"].size()
            << " rooflines, " << data["importance"].size() << " importance charts\n";
  return kExitOk;
}

} // namespace

void add_report_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Write the tuning database as a self-contained HTML report (or JSON)");
  cmd->add_option("--db", o->db, "Tuning database to read (opened read-only)")->required();
  cmd->add_option("-o,--output", o->output, "HTML file to write (with --json: the JSON file; default stdout)");
  cmd->add_flag("--json", o->json, "Write the report's data as JSON instead of the page");
  cmd->add_option("--chartjs", o->chartjs,
                  "Chart.js to inline (default $ISATUNE_CHARTJS, else " + default_chartjs_path() + ")");
  cmd->footer("Per run: best so far over evaluations and over time, the distribution of times, evaluations by\n"
              "status; per generator and device: the best variant per problem with parameters, resources and\n"
              "occupancy; rooflines; parameter importance. Emulated times are labelled and never share an axis\n"
              "with measurements.\n\n"
              "Example:\n"
              "  isatune report --db t.db -o report.html     # open report.html in any browser, offline\n"
              "  isatune report --db t.db --json | jq '.best[0].parameters'\n"
              "  (t.db from e.g. isatune tune softmax --device emu:gfx942 --problem rows=5,N=100 --budget 24 --db t.db)");
  cmd->callback([o, &global, &status] { status = run_guarded(global, [&] { return run_report(*o); }); });
}

} // namespace isatune::cli
