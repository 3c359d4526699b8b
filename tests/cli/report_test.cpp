// `isatune report` end to end: a small tuning database made by tuning on the emulators (a softmax on gfx942 and on
// sm_80, and the selftest generator's failing variants), its JSON checked against the database, and the HTML page
// opened in headless Chromium: no console errors, every chart drawn with points, a screenshot that is not blank.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#ifdef ISATUNE_TEST_HAVE_ZLIB
#include <zlib.h>
#endif

#include "run_cli.h"

namespace {

using nlohmann::json;

struct Captured {
  int exit_code = -1;
  std::string out, err;
};

// Runs a shell command, stdout and stderr to files.
Captured shell(const std::string& dir, const std::string& cmd) {
  const std::string out = dir + "/sh.out", err = dir + "/sh.err";
  const int rc = std::system((cmd + " >" + out + " 2>" + err).c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file(out), read_file(err)};
}

std::string chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    struct stat st {};
    if (stat(p, &st) == 0) return p;
  }
  return "";
}

// The tuning database of the test and the tuner's summaries of its three runs.
struct TunedDb {
  std::string dir, db;
  std::vector<json> tunes;
  ~TunedDb() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

// Random search over softmax on both emulators (ok variants with several parameters), and the selftest generator,
// whose variants hang, fault, answer wrong or do not fit (failures by status).
void make_tuned_db(TunedDb& t) {
  t.dir = make_temp_dir();
  t.db = t.dir + "/tuning.db";
  for (const std::string cmd :
       {"tune softmax --device emu:gfx942 --problem rows=5,N=100 --strategy random --budget 24 -j 1 --no-isolation",
        "tune softmax --device emu:sm_80 --problem rows=3,N=70 --strategy random --budget 10 -j 1 --no-isolation",
        "tune selftest --device emu:gfx942 --problem N=300 --strategy exhaustive --budget 100 --timeout 1 -j 1"}) {
    CliResult r = run_isatune(cmd + " --db " + t.db + " --json");
    ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.err;
    t.tunes.push_back(json::parse(r.out));
  }
}

const json* run_of(const json& report, const std::string& generator, const std::string& isa) {
  for (const auto& r : report["runs"])
    if (r["generator"] == generator && r["device"]["isa"] == isa) return &r;
  return nullptr;
}

void check_json(const TunedDb& t) {
  const std::vector<json>* tunes_ = &t.tunes;
  CliResult r = run_isatune("report --db " + t.db + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["measurements"], 24 + 10 + tunes_->at(2)["evaluations"].get<int>());

  for (size_t t = 0; t < tunes_->size(); ++t) {
    const json& tune = tunes_->at(t);
    const json* run = run_of(j, tune["generator"], tune["target"]);
    ASSERT_NE(run, nullptr) << tune["generator"] << " " << tune["target"];
    EXPECT_EQ((*run)["device"]["kind"], "emulated");
    EXPECT_NE((*run)["time_label"].get<std::string>().find("emulated"), std::string::npos);
    EXPECT_EQ((*run)["guid"], tune["run_guid"]);
    EXPECT_EQ((*run)["evaluations"], tune["evaluations"]);
    // Failures by status are the tuner's own counts.
    EXPECT_EQ((*run)["by_status"], tune["by_status"]);
    // The curve never rises and ends at the tuner's best.
    double last = INFINITY;
    for (const auto& p : (*run)["best_so_far"]) {
      if (p["best_ms"].is_null()) continue;
      EXPECT_LE(p["best_ms"].get<double>(), last);
      last = p["best_ms"].get<double>();
      EXPECT_GE(p["seconds"].get<double>(), 0);
    }
    EXPECT_NEAR(last, tune["best"]["time_ms"].get<double>(), 1e-12);
    int histogram_total = 0;
    for (const auto& c : (*run)["histogram"]["counts"]) histogram_total += c.get<int>();
    EXPECT_EQ(histogram_total, tune["by_status"]["ok"].get<int>());
  }

  // Best variants with the vendor's resource names, occupancy and work.
  int amd = 0, nvidia = 0;
  for (const auto& b : j["best"]) {
    const bool nv = b["device"]["vendor"] == "nvidia";
    ASSERT_TRUE(b.contains("resources")) << b.dump();
    if (nv) {
      ++nvidia;
      EXPECT_TRUE(b["resources"].contains("shared_bytes")) << b.dump();
      EXPECT_TRUE(b["resources"].contains("registers")) << b.dump();
      EXPECT_FALSE(b["resources"].contains("vgprs")) << b.dump();
      EXPECT_FALSE(b["resources"].contains("lds_bytes")) << b.dump();
      EXPECT_GT(b["occupancy"]["blocks_per_sm"].get<int>(), 0);
    } else {
      ++amd;
      EXPECT_GT(b["resources"]["vgprs"].get<int>(), 0);
      EXPECT_TRUE(b["resources"].contains("lds_bytes"));
      EXPECT_FALSE(b["resources"].contains("shared_bytes"));
      EXPECT_GT(b["occupancy"]["waves_per_simd"].get<int>(), 0);
    }
    if (b["generator"] == "softmax") {
      EXPECT_GT(b["flops"].get<double>(), 0);
      EXPECT_NEAR(b["tflops"].get<double>(), b["flops"].get<double>() / (b["median_ms"].get<double>() * 1e9),
                  1e-9 * b["tflops"].get<double>());
    }
  }
  EXPECT_EQ(amd, 2);    // softmax and selftest on gfx942
  EXPECT_EQ(nvidia, 1); // softmax on sm_80

  // Rooflines: every ok softmax variant under positive peaks, the best per problem marked once.
  int roofline_points = 0;
  for (const auto& roof : j["rooflines"]) {
    EXPECT_GT(roof["peak_tflops"].get<double>(), 0);
    EXPECT_GT(roof["peak_tbps"].get<double>(), 0);
    int best = 0;
    for (const auto& p : roof["points"]) best += p["best"].get<bool>();
    EXPECT_EQ(best, 1);
    if (roof["generator"] == "softmax") roofline_points += int(roof["points"].size());
  }
  EXPECT_EQ(roofline_points, 24 + tunes_->at(1)["by_status"]["ok"].get<int>());

  // Importance: a share per parameter, in [0, 1], sorted.
  ASSERT_FALSE(j["importance"].empty());
  for (const auto& m : j["importance"]) {
    double prev = 2;
    for (const auto& p : m["parameters"]) {
      const double v = p["variance_explained"].get<double>();
      EXPECT_GE(v, 0);
      EXPECT_LE(v, 1 + 1e-12);
      EXPECT_LE(v, prev);
      prev = v;
    }
  }
}

TEST(CliReport, BadInputAndMissingChartJs) {
  const std::string dir = make_temp_dir();
  CliResult none = run_isatune("report --db " + dir + "/absent.db --json");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("absent.db"), std::string::npos) << none.err;
  CliResult no_out = run_isatune("report --db " + dir + "/absent.db");
  EXPECT_EQ(no_out.exit_code, 1);
  EXPECT_NE(no_out.err.find("-o"), std::string::npos) << no_out.err;
  // Checked before the database is read: a missing library is a missing toolkit (3), whatever the database.
  CliResult no_lib = run_isatune("report --db " + dir + "/absent.db -o " + dir + "/x.html --chartjs " + dir + "/no.js");
  EXPECT_EQ(no_lib.exit_code, 3);
  EXPECT_NE(no_lib.err.find("libjs-chart.js"), std::string::npos) << no_lib.err;
  std::filesystem::remove_all(dir);
}

#ifdef ISATUNE_TEST_HAVE_ZLIB
// Luminance of every pixel of an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium's --screenshot writes).
std::vector<double> png_luminance(const std::string& png, std::string& why) {
  std::vector<double> out;
  if (png.size() < 8 || png.compare(1, 3, "PNG") != 0) return why = "not a PNG", out;
  size_t pos = 8;
  uint32_t width = 0, height = 0;
  int channels = 0;
  std::string idat;
  auto be32 = [&](size_t p) {
    return uint32_t(uint8_t(png[p])) << 24 | uint32_t(uint8_t(png[p + 1])) << 16 | uint32_t(uint8_t(png[p + 2])) << 8 |
           uint32_t(uint8_t(png[p + 3]));
  };
  while (pos + 8 <= png.size()) {
    const uint32_t len = be32(pos);
    const std::string type = png.substr(pos + 4, 4);
    if (pos + 12 + len > png.size()) return why = "truncated chunk", out;
    if (type == "IHDR") {
      width = be32(pos + 8), height = be32(pos + 12);
      const int depth = uint8_t(png[pos + 16]), color = uint8_t(png[pos + 17]), interlace = uint8_t(png[pos + 20]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6)) return why = "unsupported PNG format", out;
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += png.substr(pos + 8, len);
    }
    pos += 12 + len;
  }
  const size_t stride = size_t(width) * channels;
  std::vector<uint8_t> raw((stride + 1) * height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_len != raw.size())
    return why = "bad image data", out;
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t* line = raw.data() + y * (stride + 1);
    const int filter = line[0];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= size_t(channels) ? cur[x - channels] : 0, b = prev[x],
                c = x >= size_t(channels) ? prev[x - channels] : 0;
      int v = line[1 + x];
      if (filter == 1) v += a;
      else if (filter == 2) v += b;
      else if (filter == 3) v += (a + b) / 2;
      else if (filter == 4) {
        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[x] = uint8_t(v);
    }
    for (uint32_t x = 0; x < width; ++x)
      out.push_back(0.299 * cur[x * channels] + 0.587 * cur[x * channels + 1] + 0.114 * cur[x * channels + 2]);
    prev.swap(cur);
  }
  return out;
}
#endif

// The page in headless Chromium; returns early (skipped) without Chart.js or chromium.
void check_page(const TunedDb& t) {
  const std::string* dir_ = &t.dir;
  const std::string* db_ = &t.db;
  const std::string html = *dir_ + "/report.html";
  CliResult r = run_isatune("report --db " + *db_ + " -o " + html);
  if (r.exit_code == 3) GTEST_SKIP() << "Chart.js is absent (Debian: libjs-chart.js): " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = read_file(html);
  // Self-contained: the library is inside, nothing is fetched.
  EXPECT_NE(page.find("Chart.js v"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);

  const std::string chromium = chromium_path();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (Debian: chromium): the page is not checked in a browser";
  const json data = json::parse(run_isatune("report --db " + *db_ + " --json").out);
  const size_t expected_charts = 4 * data["runs"].size() + data["rooflines"].size() + data["importance"].size();

  const std::string flags = " --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir=" + *dir_ +
                            "/chromium-profile ";
  Captured dom = shell(*dir_, "timeout 120 " + chromium + flags + "--enable-logging=stderr --v=0 --dump-dom file://" + html);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  // Console messages (errors included) are logged as INFO:CONSOLE lines; the page logs none.
  std::regex console_line("CONSOLE[^\\n]*");
  std::smatch m;
  EXPECT_FALSE(std::regex_search(dom.err, m, console_line)) << "console: " << m.str();

  std::smatch summary;
  ASSERT_TRUE(std::regex_search(dom.out, summary, std::regex("<div id=\"render-summary\"[^>]*>"))) << dom.out.substr(0, 2000);
  const std::string tag = summary.str();
  auto attr = [&](const std::string& name) {
    std::smatch a;
    return std::regex_search(tag, a, std::regex(name + "=\"([^\"]*)\"")) ? a[1].str() : std::string("<absent>");
  };
  EXPECT_EQ(attr("data-done"), "1") << tag;
  EXPECT_EQ(attr("data-errors"), "0") << attr("data-error-text");
  EXPECT_EQ(attr("data-charts"), std::to_string(expected_charts));
  EXPECT_EQ(attr("data-empty-charts"), "0") << tag;
  // Each chart's drawn points, from Chart.js's own element lists.
  std::map<std::string, int> points_by_kind;
  size_t charts = 0;
  std::regex li("<li data-chart=\"([^\"]+)\" data-kind=\"([^\"]+)\" data-points=\"([0-9]+)\"");
  for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), li); it != std::sregex_iterator(); ++it) {
    ++charts;
    EXPECT_GT(std::stoi((*it)[3]), 0) << (*it)[1];
    points_by_kind[(*it)[2]] += std::stoi((*it)[3]);
  }
  EXPECT_EQ(charts, expected_charts);
  for (const char* kind : {"best-so-far-evaluations", "best-so-far-time", "distribution", "status", "roofline",
                           "importance"})
    EXPECT_GT(points_by_kind[kind], 0) << kind;
  // The roofline draws every variant and the three points of each roof.
  size_t roof_points = 0;
  for (const auto& roof : data["rooflines"]) roof_points += roof["points"].size() + 3;
  EXPECT_EQ(points_by_kind["roofline"], int(roof_points));
  // The best-variant tables are in the DOM with the NVIDIA names for sm_80.
  EXPECT_NE(dom.out.find("shared_bytes="), std::string::npos);
  EXPECT_NE(dom.out.find("lds_bytes="), std::string::npos);

  const std::string png = *dir_ + "/report.png";
  Captured shot = shell(*dir_, "timeout 120 " + chromium + flags + "--window-size=1280,1600 --screenshot=" + png +
                                   " file://" + html);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  const std::string bytes = read_file(png);
  ASSERT_GT(bytes.size(), 1000u);
#ifdef ISATUNE_TEST_HAVE_ZLIB
  std::string why;
  const std::vector<double> lum = png_luminance(bytes, why);
  ASSERT_EQ(lum.size(), 1280u * 1600u) << why;
  double mean = 0, var = 0;
  size_t ink = 0;
  for (double v : lum) mean += v, ink += v < 200;
  mean /= double(lum.size());
  for (double v : lum) var += (v - mean) * (v - mean);
  var /= double(lum.size());
  // A page of charts: clearly not one colour, with a few percent of the pixels drawn dark.
  EXPECT_GT(var, 100) << "mean " << mean;
  EXPECT_GT(double(ink) / double(lum.size()), 0.01);
#else
  std::printf("report_test: zlib headers absent: the screenshot's pixels are not checked, only its size\n");
#endif
}

TEST(CliReport, JsonAndPageOfATunedDatabase) {
  TunedDb t;
  make_tuned_db(t);
  if (HasFatalFailure()) return;
  {
    SCOPED_TRACE("report --json");
    check_json(t);
  }
  SCOPED_TRACE("report -o report.html in headless Chromium");
  check_page(t);
}

} // namespace
