#include "reconciler/plugin_args.h"

#include <charconv>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/status.h"
#include "model/time.h"

namespace muster::reconciler {
namespace {

struct Flag {
  std::string_view name;
  std::variant<bool*, std::string*, int32_t*> target;
};

// strconv.ParseBool.
std::optional<bool> ParseGoBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

std::optional<int32_t> ParseInt32(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

const Flag* FindFlag(std::span<const Flag> flags, std::string_view name) {
  for (const Flag& f : flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Go's flag.FlagSet.Parse with ContinueOnError, except that it goes on after
// a bad or unknown flag (see the header).
void ParseFlags(const std::vector<std::string>& args, std::span<const Flag> flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') continue;  // a word, or "-"
    if (arg == "--") return;
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body.empty() || body[0] == '-' || body[0] == '=') continue;  // Go: bad flag syntax
    const size_t eq = body.find('=');
    std::optional<std::string_view> value;
    if (eq != std::string_view::npos) value = body.substr(eq + 1);
    const Flag* flag = FindFlag(flags, body.substr(0, eq));
    if (flag == nullptr) continue;
    if (auto* b = std::get_if<bool*>(&flag->target)) {
      // A bare boolean flag means true; "--flag false" is not a value in Go.
      std::optional<bool> parsed = value ? ParseGoBool(*value) : std::optional<bool>(true);
      if (parsed) **b = *parsed;
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) return;  // Go: flag needs an argument
      value = args[++i];
    }
    if (auto* s = std::get_if<std::string*>(&flag->target)) {
      **s = std::string(*value);
    } else if (std::optional<int32_t> n = ParseInt32(*value)) {
      *std::get<int32_t*>(flag->target) = *n;
    }
  }
}

int32_t ValidPort(int32_t port, int32_t fallback) {
  return port >= 1 && port <= 65535 ? port : fallback;
}

}  // namespace

SvcArgs ParseSvcArgs(const std::vector<std::string>& args) {
  SvcArgs out;
  const Flag flags[] = {{"publish-not-ready-addresses", &out.publish_not_ready_addresses},
                        {"disable-network-policy", &out.disable_network_policy},
                        {"inject-hosts-env", &out.inject_hosts_env}};
  ParseFlags(args, flags);
  return out;
}

SshArgs ParseSshArgs(const std::vector<std::string>& args) {
  SshArgs out;
  const Flag flags[] = {{"ssh-key-file-path", &out.key_file_path},
                        {"ssh-private-key", &out.private_key},
                        {"ssh-public-key", &out.public_key},
                        {"ssh-port", &out.port}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, SshArgs{}.port);
  if (out.key_file_path.empty()) out.key_file_path = std::string(kSshDefaultKeyPath);
  return out;
}

MpiArgs ParseMpiArgs(const std::vector<std::string>& args) {
  MpiArgs out;
  const Flag flags[] = {{"master", &out.master}, {"worker", &out.worker}, {"port", &out.port}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, MpiArgs{}.port);
  return out;
}

PyTorchArgs ParsePyTorchArgs(const std::vector<std::string>& args) {
  PyTorchArgs out;
  std::string timeout;
  const Flag flags[] = {{"master", &out.master},
                        {"worker", &out.worker},
                        {"port", &out.port},
                        {"wait-master-enabled", &out.wait_master_enabled},
                        {"wait-master-timeout", &timeout},
                        {"wait-master-image", &out.wait_master_image}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, PyTorchArgs{}.port);
  // Whole seconds ("600") or a Go duration ("10m").
  if (std::optional<int32_t> seconds = ParseInt32(timeout); seconds && *seconds > 0) {
    out.wait_master_timeout_seconds = *seconds;
  } else if (StatusOr<Duration> d = ParseGoDuration(timeout); !timeout.empty() && d.ok()) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
    if (s > 0 && s <= INT32_MAX) out.wait_master_timeout_seconds = static_cast<int32_t>(s);
  }
  if (out.wait_master_image.empty()) out.wait_master_image = PyTorchArgs{}.wait_master_image;
  return out;
}

TensorFlowArgs ParseTensorFlowArgs(const std::vector<std::string>& args) {
  TensorFlowArgs out;
  const Flag flags[] = {{"ps", &out.ps},
                        {"worker", &out.worker},
                        {"chief", &out.chief},
                        {"evaluator", &out.evaluator},
                        {"port", &out.port}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, TensorFlowArgs{}.port);
  return out;
}

RayArgs ParseRayArgs(const std::vector<std::string>& args) {
  RayArgs out;
  const Flag flags[] = {{"head", &out.head},
                        {"headContainer", &out.head_container},
                        {"worker", &out.worker},
                        {"workerContainer", &out.worker_container},
                        {"port", &out.port},
                        {"dashboardPort", &out.dashboard_port},
                        {"clientPort", &out.client_port}};
  ParseFlags(args, flags);
  const RayArgs defaults;
  out.port = ValidPort(out.port, defaults.port);
  out.dashboard_port = ValidPort(out.dashboard_port, defaults.dashboard_port);
  out.client_port = ValidPort(out.client_port, defaults.client_port);
  return out;
}

}  // namespace muster::reconciler
