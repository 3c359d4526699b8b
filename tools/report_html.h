#pragma once
// The report as one self-contained HTML page: the data (report_data) as JSON in the page, Chart.js inlined, and a
// small script that turns the data into charts and tables. After drawing, the script writes an element
// #render-summary whose attributes count the charts, the points each drew, and any script errors, so a headless
// browser can check the page (tests/cli/report_test.cpp).
#include <nlohmann/json.hpp>

#include <string>

namespace isatune::cli {

// Where Debian's libjs-chart.js puts the library (chart.min.js, Chart.js 3.x).
std::string default_chartjs_path();

// chartjs: the library's source text, inlined as it is.
std::string report_html(const nlohmann::json& data, const std::string& chartjs);

} // namespace isatune::cli
