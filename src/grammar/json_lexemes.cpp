#include "grammar/json_lexemes.h"

#include <vector>

#include "base/error.h"

namespace skiff::grammar {
namespace {

// A non-negative decimal: integer digits without leading zeros ("0" for
// zero) and fraction digits without trailing zeros.
struct Decimal {
  bool negative = false;
  std::string whole, fraction;
  bool zero() const { return whole == "0" && fraction.empty(); }
};

Decimal parse_decimal(const std::string& text) {
  Decimal d;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') d.negative = true, ++i;
  size_t begin = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  d.whole = text.substr(begin, i - begin);
  if (i < text.size() && text[i] == '.') {
    size_t f = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    d.fraction = text.substr(f, i - f);
  }
  if (d.whole.empty() || i != text.size())
    fail("JSON Schema: bound {} is not a plain decimal number (exponents are not supported in bounds)", text);
  d.whole.erase(0, std::min(d.whole.find_first_not_of('0'), d.whole.size() - 1));
  while (!d.fraction.empty() && d.fraction.back() == '0') d.fraction.pop_back();
  if (d.zero()) d.negative = false;
  return d;
}

std::string digit_range(char lo, char hi) {
  if (lo == hi) return std::string(1, lo);
  return std::string("[") + lo + "-" + hi + "]";
}

std::string any_of(const std::vector<std::string>& alternatives) {
  if (alternatives.empty()) return "[^\\s\\S]";  // matches nothing
  std::string out = "(?:";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? "|" : "") + alternatives[i];
  return out + ")";
}

// Integers (canonical digits) greater / less than n.
std::string whole_greater(const std::string& n) {
  if (n == "0") return "[1-9][0-9]*";  // every positive integer, one digit long included
  std::vector<std::string> alts{"[1-9][0-9]{" + std::to_string(n.size()) + ",}"};
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] < '9' && !(n == "0"))
      alts.push_back(n.substr(0, i) + digit_range(n[i] + 1, '9') + "[0-9]{" + std::to_string(n.size() - 1 - i) + "}");
  return any_of(alts);
}

std::string whole_less(const std::string& n) {
  std::vector<std::string> alts;
  if (n.size() >= 2) alts.push_back("0|[1-9][0-9]{0," + std::to_string(n.size() - 2) + "}");
  for (size_t i = 0; i < n.size(); ++i) {
    char lo = (i == 0 && n.size() > 1) ? '1' : '0';
    if (n[i] > lo)
      alts.push_back(n.substr(0, i) + digit_range(lo, n[i] - 1) + "[0-9]{" + std::to_string(n.size() - 1 - i) + "}");
  }
  return any_of(alts);
}

// Fractions (what follows the integer part: nothing, or '.' and digits)
// compared with f, zeros padding the shorter.
std::string fraction_any() { return "(?:\\.[0-9]+)?"; }

std::string fraction_at_least(const std::string& f, bool strict) {
  if (f.empty()) return strict ? "\\.[0-9]*[1-9][0-9]*" : fraction_any();
  std::vector<std::string> alts;
  for (size_t i = 0; i < f.size(); ++i)
    if (f[i] < '9') alts.push_back(f.substr(0, i) + digit_range(f[i] + 1, '9') + "[0-9]*");
  alts.push_back(f + (strict ? "[0-9]*[1-9][0-9]*" : "[0-9]*"));
  return "\\." + any_of(alts);
}

std::string fraction_at_most(const std::string& f, bool strict) {
  if (f.empty()) return strict ? any_of({}) : "(?:\\.0+)?";
  std::vector<std::string> alts;
  for (size_t i = 1; i < f.size(); ++i) alts.push_back(f.substr(0, i));  // shorter: the rest of f is not all zeros
  for (size_t i = 0; i < f.size(); ++i)
    if (f[i] > '0') alts.push_back(f.substr(0, i) + digit_range('0', f[i] - 1) + "[0-9]*");
  if (!strict) alts.push_back(f + "0*");
  return "(?:\\." + any_of(alts) + ")?";
}

// Unsigned decimals x with x >= d (x > d when strict).
std::string unsigned_at_least(const Decimal& d, bool strict) {
  return any_of({whole_greater(d.whole) + fraction_any(), d.whole + fraction_at_least(d.fraction, strict)});
}
std::string unsigned_at_most(const Decimal& d, bool strict) {
  return any_of({whole_less(d.whole) + fraction_any(), d.whole + fraction_at_most(d.fraction, strict)});
}
const char* kUnsigned = "(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?";

}  // namespace

std::string json_number_regex(bool integer) {
  if (integer) return "-?(?:0|[1-9][0-9]*)";
  return "-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?";
}

std::string at_least_regex(const NumberBound& lower) {
  Decimal d = parse_decimal(lower.value);
  if (!d.negative) {
    // x >= 0 also holds for "-0"; leaving negative zero out keeps this simple and sound.
    return unsigned_at_least(d, lower.exclusive);
  }
  // Every non-negative number, and negatives whose magnitude is at most |d|.
  return any_of({kUnsigned, "-" + unsigned_at_most(d, lower.exclusive)});
}

std::string at_most_regex(const NumberBound& upper) {
  Decimal d = parse_decimal(upper.value);
  if (d.negative) return "-" + unsigned_at_least(d, upper.exclusive);
  if (d.zero() && upper.exclusive) return "-" + unsigned_at_least(d, true);
  return any_of({unsigned_at_most(d, upper.exclusive), std::string("-") + kUnsigned});
}

std::optional<std::string> format_regex(const std::string& format) {
  static const std::string kDate =
      "(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
      "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
      "|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)";
  static const std::string kTime =
      "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
  static const std::string kLabel = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
  static const std::string kOctet = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  static const std::string kIpv4 = kOctet + "(?:\\." + kOctet + "){3}";
  static const std::string kH16 = "[0-9A-Fa-f]{1,4}";
  static const std::string kLs32 = "(?:" + kH16 + ":" + kH16 + "|" + kIpv4 + ")";
  if (format == "date") return kDate;
  if (format == "time") return kTime;
  if (format == "date-time") return kDate + "[Tt]" + kTime;
  if (format == "duration") {
    std::string t = "T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)";
    return "P(?:[0-9]+W|(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)(?:" + t + ")?|" + t + ")";
  }
  if (format == "uuid")
    return "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
  if (format == "email") {
    std::string atom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
    return atom + "(?:\\." + atom + ")*@" + kLabel + "(?:\\." + kLabel + ")*";
  }
  if (format == "hostname") return kLabel + "(?:\\." + kLabel + ")*";
  if (format == "ipv4") return kIpv4;
  if (format == "ipv6") {
    // RFC 3986's IPv6address, each of its nine forms.
    auto h = [&](int n) { return n == 0 ? std::string() : "(?:" + kH16 + ":){" + std::to_string(n) + "}"; };
    auto upto = [&](int n) {  // [ *n( h16 ":" ) h16 ]
      return "(?:(?:" + kH16 + ":){0," + std::to_string(n) + "}" + kH16 + ")?";
    };
    std::vector<std::string> forms{h(6) + kLs32, "::" + h(5) + kLs32};
    for (int k = 0; k <= 4; ++k) forms.push_back(upto(k) + "::" + h(4 - k) + kLs32);
    forms.push_back(upto(5) + "::" + kH16);
    forms.push_back(upto(6) + "::");
    return any_of(forms);
  }
  if (format == "uri")
    return "[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9._~!$&'()*+,;=:@/?#\\[\\]-]|%[0-9A-Fa-f]{2})*";
  return std::nullopt;
}

}  // namespace skiff::grammar
