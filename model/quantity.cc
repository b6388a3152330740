#include "model/quantity.h"

#include <algorithm>
#include <limits>

namespace muster {
namespace {

using Int128 = __int128;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// Parsed quantities are held in nanos (Kubernetes rounds finer values up to
// 1n). The largest magnitude accepted is one whose milli-value fits int64.
constexpr Int128 kMaxNanos = Int128{kInt64Max} * 1'000'000;
// 10^25 > kMaxNanos: a digit string longer than this is out of range.
constexpr size_t kMaxNanoDigits = 25;
// Exponents are clamped here; anything larger over- or underflows anyway
// (input text would have to be ~10^12 characters long to compensate).
constexpr int64_t kMaxExponent = 1'000'000'000'000;

constexpr std::string_view kSuffixHelp =
    "expected one of Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e<exponent>";

Int128 Pow10(int n) {
  Int128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// Division rounding towards +infinity. REQUIRES: b > 0.
Int128 CeilDiv(Int128 a, Int128 b) {
  Int128 q = a / b;  // truncates towards zero, which is the ceiling for a < 0
  if (a % b != 0 && a > 0) ++q;
  return q;
}

int64_t Saturate(Int128 v) {
  if (v > kInt64Max) return kInt64Max;
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? 0 - static_cast<unsigned __int128>(v) : v;
  std::string out;
  for (; u > 0; u /= 10) out.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
  if (negative) out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The multiplier a suffix stands for: value * 2^binary * 10^decimal.
struct Multiplier {
  int binary = 0;
  int64_t decimal = 0;
};

// Reads the integer of an "e<int>" suffix; false when it is not an integer.
bool ParseExponent(std::string_view text, int64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  if (i == text.size()) return false;
  int64_t value = 0;
  for (; i < text.size(); ++i) {
    if (!IsDigit(text[i])) return false;
    value = std::min(kMaxExponent, value * 10 + (text[i] - '0'));
  }
  *out = negative ? -value : value;
  return true;
}

// Interprets a suffix; returns the reason on failure, "" on success.
std::string InterpretSuffix(std::string_view suffix, Multiplier* m) {
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
      {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (const auto& [name, exponent] : kDecimal) {
    if (suffix == name) {
      m->decimal = exponent;
      return "";
    }
  }
  for (const auto& [name, bits] : kBinary) {
    if (suffix == name) {
      m->binary = bits;
      return "";
    }
  }
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    if (ParseExponent(suffix.substr(1), &m->decimal)) return "";
    return "the exponent \"" + std::string(suffix.substr(1)) + "\" is not an integer";
  }
  if (suffix[0] == '.') return "it has more than one decimal point";
  return "unknown suffix \"" + std::string(suffix) + "\" (" + std::string(kSuffixHelp) + ")";
}

// Multiplies a big-endian decimal digit string by 2^bits (bits % 10 == 0).
void MultiplyByPowerOfTwo(std::string* digits, int bits) {
  for (; bits > 0; bits -= 10) {
    int carry = 0;
    for (auto it = digits->rbegin(); it != digits->rend(); ++it) {
      const int v = (*it - '0') * 1024 + carry;
      *it = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    for (; carry > 0; carry /= 10)
      digits->insert(digits->begin(), static_cast<char>('0' + carry % 10));
  }
}

// REQUIRES: digits.size() <= kMaxNanoDigits.
Int128 DigitsToInt(std::string_view digits) {
  Int128 v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

// Exact ceil(digits * 10^exponent), or -1 when that exceeds kMaxNanos.
// REQUIRES: digits has no leading zero and is not empty.
Int128 CeilScaled(std::string_view digits, int64_t exponent) {
  const auto length = static_cast<int64_t>(digits.size());
  if (exponent >= 0) {
    if (length + exponent > static_cast<int64_t>(kMaxNanoDigits)) return -1;
    const Int128 v = DigitsToInt(digits) * Pow10(static_cast<int>(exponent));
    return v > kMaxNanos ? -1 : v;
  }
  const int64_t dropped = -exponent;
  if (length <= dropped) return 1;  // a positive value below 1 rounds up to 1
  const std::string_view kept = digits.substr(0, static_cast<size_t>(length - dropped));
  if (kept.size() > kMaxNanoDigits) return -1;
  const std::string_view rest = digits.substr(kept.size());
  const bool inexact = rest.find_first_not_of('0') != std::string_view::npos;
  const Int128 v = DigitsToInt(kept) + (inexact ? 1 : 0);
  return v > kMaxNanos ? -1 : v;
}

// Parses `text` into a signed count of nanos (magnitude rounded up to 1n
// like Kubernetes). Returns the reason on failure, "" on success.
std::string ParseNanos(std::string_view text, Int128* nanos) {
  if (text.empty()) return "it is empty";
  if (text.find_first_of(" \t\r\n") != std::string_view::npos) {
    return "it must not contain spaces";
  }
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') negative = text[i++] == '-';
  const size_t int_start = i;
  while (i < text.size() && IsDigit(text[i])) ++i;
  std::string digits(text.substr(int_start, i - int_start));
  size_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    const size_t frac_start = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    fraction_digits = i - frac_start;
    digits.append(text.substr(frac_start, fraction_digits));
  }
  if (digits.empty()) return "expected a number such as \"1\", \"0.5\" or \"500m\"";
  Multiplier m;
  if (std::string why = InterpretSuffix(text.substr(i), &m); !why.empty()) return why;

  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  *nanos = 0;
  if (digits.empty()) return "";
  int64_t exponent = m.decimal - static_cast<int64_t>(fraction_digits) + 9;  // in nanos
  while (digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  MultiplyByPowerOfTwo(&digits, m.binary);
  const Int128 magnitude = CeilScaled(digits, exponent);
  if (magnitude < 0) {
    return "it is too large (the largest quantity muster accepts is " + std::to_string(kInt64Max) +
           "m, about 9.2e15)";
  }
  *nanos = negative ? -magnitude : magnitude;
  return "";
}

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// ResourceQuota-style names ("requests.cpu", "limits.memory", used by
// Volcano's PodGroup minResources) take the unit of their base resource.
std::string_view BaseResource(std::string_view resource) {
  for (std::string_view prefix : {"requests.", "limits."}) {
    if (resource.starts_with(prefix)) return resource.substr(prefix.size());
  }
  return resource;
}

// Huge pages are "hugepages-<size>" with no domain: a name with a "/" is an
// extended resource whatever its start ("hugepages-x.io/y"), which the API
// server counts in whole units (k8s.io/kubernetes pkg/apis/core/helper
// IsNativeResource, IsExtendedResourceName).
bool IsByteResource(std::string_view name) {
  std::string_view resource = BaseResource(name);
  return resource == "memory" || resource == "ephemeral-storage" || resource == "storage" ||
         (resource.starts_with("hugepages-") && resource.find('/') == std::string_view::npos);
}

// A decimal number of thousandths, without trailing zeros: 500 -> "0.5",
// 2250 -> "2.25", 8000 -> "8" (a valid quantity too; GPUs read better so
// than "500m").
std::string FormatDecimalMilli(int64_t milli) {
  const bool negative = milli < 0;
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(milli) : static_cast<uint64_t>(milli);
  std::string out = (negative ? "-" : "") + std::to_string(magnitude / 1000);
  uint64_t fraction = magnitude % 1000;
  if (fraction == 0) return out;
  std::string digits = std::to_string(fraction);
  digits.insert(0, 3 - digits.size(), '0');
  while (digits.back() == '0') digits.pop_back();
  return out + "." + digits;
}

}  // namespace

std::string Quantity::ParseInto(std::string_view text, Quantity* out) {
  Int128 nanos = 0;
  if (std::string why = ParseNanos(text, &nanos); !why.empty()) return why;
  *out = Quantity(nanos, 9);
  while (out->scale_ > 0 && out->unscaled_ % 10 == 0) {
    out->unscaled_ /= 10;
    --out->scale_;
  }
  return "";
}

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  Quantity q;
  if (std::string why = ParseInto(text, &q); !why.empty()) {
    return InvalidArgumentError("quantity " + Quoted(text) + " is invalid: " + why);
  }
  return q;
}

bool Quantity::is_integer() const { return unscaled_ % Pow10(scale_) == 0; }

int64_t Quantity::MilliValueCeil() const {
  if (scale_ <= 3) return Saturate(unscaled_ * Pow10(3 - scale_));
  return Saturate(CeilDiv(unscaled_, Pow10(scale_ - 3)));
}

int64_t Quantity::ValueCeil() const { return Saturate(CeilDiv(unscaled_, Pow10(scale_))); }

std::string Quantity::ToString() const {
  if (unscaled_ == 0) return "0";
  // value = mantissa * 10^power with the mantissa free of trailing zeros.
  Int128 mantissa = unscaled_;
  int power = -scale_;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++power;
  }
  // The largest SI exponent (a multiple of 3) that keeps the mantissa whole.
  int exponent = power >= 0 ? power / 3 * 3 : -((-power + 2) / 3 * 3);
  exponent = std::clamp(exponent, -9, 18);
  mantissa *= Pow10(power - exponent);
  static constexpr std::string_view kSuffixes[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  return Int128ToString(mantissa) + std::string(kSuffixes[(exponent + 9) / 3]);
}

bool operator==(const Quantity& a, const Quantity& b) {
  const int scale = std::max(a.scale_, b.scale_);
  return a.unscaled_ * Pow10(scale - a.scale_) == b.unscaled_ * Pow10(scale - b.scale_);
}

StatusOr<int64_t> ParseResourceQuantity(std::string_view resource, std::string_view text) {
  const std::string subject = "quantity " + Quoted(text) + " of " + std::string(resource);
  Quantity q;
  if (std::string why = Quantity::ParseInto(text, &q); !why.empty()) {
    return InvalidArgumentError(subject + " is invalid: " + why);
  }
  if (q.is_negative()) return InvalidArgumentError(subject + " is negative");
  if (IsMilliResource(resource)) return q.MilliValueCeil();
  if (IsIntegerResource(resource) && !q.is_integer()) {
    return InvalidArgumentError(subject + " is not a whole number");
  }
  return q.ValueCeil();
}

std::string FormatResourceQuantity(std::string_view resource, int64_t value) {
  if (BaseResource(resource) == "nvidia.com/gpu") return FormatDecimalMilli(value);
  if (IsMilliResource(resource)) return Quantity::FromMilli(value).ToString();
  if (!IsByteResource(resource) || value == 0) return std::to_string(value);
  static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  size_t suffix = 0;
  while (suffix + 1 < std::size(kBinary) && magnitude % 1024 == 0) {
    magnitude /= 1024;
    ++suffix;
  }
  if (suffix == 0) return std::to_string(value);
  return (value < 0 ? "-" : "") + std::to_string(magnitude) + std::string(kBinary[suffix]);
}

bool IsMilliResource(std::string_view resource) {
  const std::string_view base = BaseResource(resource);
  return base == "cpu" || base == "nvidia.com/gpu";
}

bool IsIntegerResource(std::string_view resource) {
  return !IsMilliResource(resource) && !IsByteResource(resource);
}

}  // namespace muster
