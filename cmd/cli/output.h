// How `muster job|queue|why` print: kubectl's table layout, its ages, and
// the objects themselves as JSON or YAML (-o json|yaml).
//
// Pure; thread-compatible.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "model/status.h"
#include "model/time.h"

namespace muster::cli {

enum class OutputFormat { kTable, kWide, kJson, kYaml };

// "" -> kTable; "wide", "json", "yaml"; anything else InvalidArgument naming
// the accepted formats.
StatusOr<OutputFormat> ParseOutputFormat(std::string_view text);

// kubectl's table: upper-case headers, left-aligned columns three spaces or
// more apart, no trailing spaces. A cell that is empty prints as "<none>".
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  // REQUIRES: cells.size() == number of headers.
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// kubectl's age (k8s.io/apimachinery/pkg/util/duration HumanDuration): "45s",
// "12m", "5h", "3d", "5y" and, in between, "5m30s", "2h3m", "3d4h", "2y30d";
// "<unknown>" for a zero time, "0s" for times after `now`.
std::string Age(Time created, Time now);

// A creation time as a describe screen shows it: "<RFC 3339> (<Age> ago)".
std::string CreatedText(Time created, Time now);

// One "label:  value" line of a describe screen (kubectl describe): the value
// starts at column `width` + 1, or one space after a longer label.
// REQUIRES: width >= 1.
void DescribeField(std::ostream& out, std::string_view label, std::string_view value, size_t width);

// `table` nested under a section heading: each rendered line indented two
// spaces.
void WriteIndented(std::ostream& out, const Table& table);

// The same JSON, indented by two spaces (as kubectl -o json).
// InvalidArgument for text that is not JSON.
StatusOr<std::string> PrettyJson(std::string_view json);

// The same document as YAML (block style, keys in document order; as kubectl
// -o yaml). InvalidArgument for text that is not JSON.
StatusOr<std::string> JsonToYaml(std::string_view json);

// A YAML or JSON document (a manifest a user wrote) as compact JSON, for the
// API. InvalidArgument naming the line for malformed YAML, or for a stream of
// several documents.
StatusOr<std::string> YamlToJson(std::string_view yaml);

// A list answer's items wrapped as kubectl prints several objects:
// {"apiVersion":"v1","kind":"List","items":[...]} (each item compact JSON).
std::string JsonList(const std::vector<std::string>& items);

}  // namespace muster::cli
