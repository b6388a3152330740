// Test-only: reads samples out of the Prometheus text format, so tests
// assert on what a scraper would see rather than on the registry's objects.
//
// Header-only, test code only.
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace muster::extender::fixture {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Every sample line (comments skipped). Label values are taken verbatim
// (our label values never hold quotes or escapes).
inline std::vector<Sample> ParseMetricsText(const std::string& text) {
  std::vector<Sample> samples;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    const size_t space = line.rfind(' ');
    s.value = std::strtod(line.c_str() + space + 1, nullptr);
    const std::string series = line.substr(0, space);
    const size_t brace = series.find('{');
    s.name = series.substr(0, brace);
    if (brace != std::string::npos) {
      std::string rest = series.substr(brace + 1);
      size_t pos = 0;
      while (pos < rest.size() && rest[pos] != '}') {
        const size_t eq = rest.find('=', pos);
        const size_t close = rest.find('"', eq + 2);
        s.labels[rest.substr(pos, eq - pos)] = rest.substr(eq + 2, close - eq - 2);
        pos = close + 1;
        if (pos < rest.size() && rest[pos] == ',') ++pos;
      }
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

// The value of the one sample named `name` whose labels include `labels`;
// nullopt when there is none (or more than one).
inline std::optional<double> FindSample(const std::vector<Sample>& samples, const std::string& name,
                                        const std::map<std::string, std::string>& labels) {
  std::optional<double> found;
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      match = match && it != s.labels.end() && it->second == v;
    }
    if (!match) continue;
    if (found) return std::nullopt;
    found = s.value;
  }
  return found;
}

}  // namespace muster::extender::fixture
