#include "cmd/cli/output.h"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <sstream>

namespace muster::cli {
namespace {

StatusOr<rapidjson::Document> ParseJson(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError("not JSON (at byte " + std::to_string(doc.GetErrorOffset()) + ")");
  }
  return doc;
}

// A string YAML would read back as something else (a number, a boolean,
// null) or could not read plain: written double-quoted, as kubectl does.
// "100Mi" stays plain; "8", "1e3", "0x1f", "true", "" are quoted.
bool NeedsQuotes(std::string_view s) {
  static const std::regex kNotPlain(
      R"(^$|^(true|false|True|False|TRUE|FALSE|yes|no|Yes|No|on|off|On|Off|y|n|null|Null|NULL|~)$|)"
      R"(^[-+]?([0-9][0-9_]*(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$|^0[xo][0-9a-fA-F]+$|)"
      R"(^[-+]?\.(inf|Inf|INF|nan|NaN|NAN)$|^[-?:,\[\]{}#&*!|>'"%@` ].*|.*(: | #).*|.*[: ]$)");
  return std::regex_match(s.begin(), s.end(), kNotPlain);
}

void EmitYaml(YAML::Emitter& out, const rapidjson::Value& v) {
  if ((v.IsObject() && v.MemberCount() == 0) || (v.IsArray() && v.Empty())) {
    out << YAML::Flow << (v.IsObject() ? YAML::BeginMap : YAML::BeginSeq)
        << (v.IsObject() ? YAML::EndMap : YAML::EndSeq);  // "{}" / "[]", as kubectl
  } else if (v.IsObject()) {
    out << YAML::BeginMap;
    for (const auto& m : v.GetObject()) {
      out << YAML::Key << std::string(m.name.GetString(), m.name.GetStringLength()) << YAML::Value;
      EmitYaml(out, m.value);
    }
    out << YAML::EndMap;
  } else if (v.IsArray()) {
    out << YAML::BeginSeq;
    for (const auto& e : v.GetArray()) EmitYaml(out, e);
    out << YAML::EndSeq;
  } else if (v.IsString()) {
    const std::string s(v.GetString(), v.GetStringLength());
    if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
    out << s;
  } else if (v.IsBool()) {
    out << (v.GetBool() ? "true" : "false");
  } else if (v.IsNull()) {
    out << YAML::Null;  // "null": JsonToYaml sets LowerNull (yaml-cpp's default is "~")
  } else if (v.IsInt64()) {
    out << v.GetInt64();
  } else if (v.IsUint64()) {
    out << v.GetUint64();
  } else {
    out << v.GetDouble();
  }
}

// A plain YAML scalar as JSON, with YAML 1.2's core schema (what kubectl's
// sigs.k8s.io/yaml reads): null, booleans, integers, floats, else a string.
void ScalarToJson(const YAML::Node& node, rapidjson::Value* out,
                  rapidjson::Document::AllocatorType& alloc) {
  const std::string& s = node.Scalar();
  if (node.Tag() != "!") {  // "!" marks a quoted scalar: always a string
    static const std::regex kInt(R"(^[-+]?[0-9]+$)");
    static const std::regex kFloat(R"(^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$)");
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
      out->SetNull();
      return;
    }
    if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
      out->SetBool(s[0] == 't' || s[0] == 'T');
      return;
    }
    if (std::regex_match(s, kInt)) {
      try {
        out->SetInt64(std::stoll(s));
        return;
      } catch (const std::exception&) {  // out of range: keep it as text
      }
    } else if (std::regex_match(s, kFloat)) {
      out->SetDouble(std::stod(s));
      return;
    }
  }
  out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
}

void NodeToJson(const YAML::Node& node, rapidjson::Value* out,
                rapidjson::Document::AllocatorType& alloc) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      out->SetObject();
      for (const auto& kv : node) {
        rapidjson::Value key(kv.first.as<std::string>().c_str(), alloc);
        rapidjson::Value value;
        NodeToJson(kv.second, &value, alloc);
        out->AddMember(key, value, alloc);
      }
      return;
    case YAML::NodeType::Sequence:
      out->SetArray();
      for (const auto& e : node) {
        rapidjson::Value value;
        NodeToJson(e, &value, alloc);
        out->PushBack(value, alloc);
      }
      return;
    case YAML::NodeType::Scalar:
      ScalarToJson(node, out, alloc);
      return;
    default:
      out->SetNull();
  }
}

}  // namespace

StatusOr<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text.empty()) return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  return InvalidArgumentError("flag -o: unknown output format \"" + std::string(text) +
                              "\" (one of: wide, json, yaml)");
}

std::string Table::Render() const {
  std::vector<size_t> width(headers_.size(), 0);
  auto shown = [](const std::string& cell) -> const std::string& {
    static const std::string kNone = "<none>";
    return cell.empty() ? kNone : cell;
  };
  for (size_t c = 0; c < headers_.size(); ++c) {
    width[c] = headers_[c].size();
    for (const auto& row : rows_) width[c] = std::max(width[c], shown(row[c]).size());
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string cell = header ? cells[c] : shown(cells[c]);
      if (header) std::transform(cell.begin(), cell.end(), cell.begin(), ::toupper);
      out += cell;
      if (c + 1 < cells.size()) out += std::string(width[c] - cell.size() + 3, ' ');
    }
    return out + "\n";
  };
  std::string out = line(headers_, true);
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

std::string Age(Time created, Time now) {
  if (created == Time()) return "<unknown>";
  const int64_t s = std::chrono::duration_cast<std::chrono::seconds>(now - created).count();
  if (s < 0) return "0s";
  auto two = [](int64_t big, const char* bu, int64_t small, const char* su) {
    std::string out = std::to_string(big) + bu;
    if (small != 0) out += std::to_string(small) + su;
    return out;
  };
  if (s < 120) return std::to_string(s) + "s";
  const int64_t m = s / 60;
  if (m < 10) return two(m, "m", s % 60, "s");
  if (m < 180) return std::to_string(m) + "m";
  const int64_t h = m / 60;
  if (h < 8) return two(h, "h", m % 60, "m");
  if (h < 48) return std::to_string(h) + "h";
  const int64_t d = h / 24;
  if (d < 8) return two(d, "d", h % 24, "h");
  if (d < 365 * 2) return std::to_string(d) + "d";
  if (d < 365 * 8) return two(d / 365, "y", d % 365, "d");
  return std::to_string(d / 365) + "y";
}

StatusOr<std::string> PrettyJson(std::string_view json) {
  MUSTER_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json));
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  doc.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

StatusOr<std::string> JsonToYaml(std::string_view json) {
  MUSTER_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json));
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  out.SetNullFormat(YAML::LowerNull);
  EmitYaml(out, doc);
  return std::string(out.c_str()) + "\n";
}

StatusOr<std::string> YamlToJson(std::string_view yaml) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("not YAML: line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  std::erase_if(docs, [](const YAML::Node& d) { return d.IsNull(); });
  if (docs.size() != 1) {
    return InvalidArgumentError("expected one document, found " + std::to_string(docs.size()));
  }
  rapidjson::Document doc;
  NodeToJson(docs[0], &doc, doc.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",";
    out += items[i];
  }
  return out + "]}";
}

std::string CreatedText(Time created, Time now) {
  return FormatRfc3339(created) + " (" + Age(created, now) + " ago)";
}

void DescribeField(std::ostream& out, std::string_view label, std::string_view value,
                   size_t width) {
  out << label << ":" << std::string(width - std::min(width - 1, label.size()), ' ') << value
      << "\n";
}

void WriteIndented(std::ostream& out, const Table& table) {
  std::istringstream lines(table.Render());
  for (std::string line; std::getline(lines, line);) out << "  " << line << "\n";
}

}  // namespace muster::cli
