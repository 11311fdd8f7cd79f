// Parsing of quantities with units ("80GiB", "900GB/s", "400Gb/s", "1.5us") into SI base values.
#pragma once

#include <optional>
#include <string>

namespace cs::units {

/** Largest quantities accepted, so that every later product stays finite: sizes, rates and times beyond them are
 *  input errors, not infinities. */
inline constexpr double kMaxBytes = 1152921504606846976.0; // 1 EiB
inline constexpr double kMaxRate = 1e15;                   // 1 PB/s
inline constexpr double kMaxSeconds = 1e9;                 // ~32 years

/** Bytes from "123", "4KB", "1.5 GiB", "80GiB" (B, KB/MB/GB/TB decimal, KiB/MiB/GiB/TiB binary).
 *  Returns nullopt with `error` set when the text is not a size. */
std::optional<double> parse_bytes(const std::string& text, std::string* error = nullptr);

/** Bytes per second from "900GB/s", "400Gb/s", "25Gbps", "1.5 GiB/s" (lower-case b = bits). */
std::optional<double> parse_rate(const std::string& text, std::string* error = nullptr);

/** Seconds from "1.5us", "2ms", "10ns", "3s", "0.5" (bare numbers are seconds). */
std::optional<double> parse_time(const std::string& text, std::string* error = nullptr);

/** Human-readable forms for summaries (not for report.json, which holds raw SI numbers). */
std::string format_bytes(double bytes);
std::string format_time(double seconds);
std::string format_rate(double bytes_per_second);
/** A whole number with thousands separators: 1,032,000 (rounded; numbers past 1e15 in scientific form). */
std::string format_count(double value);
/** US dollars: $103,200 (whole dollars from $100, cents below). */
std::string format_money(double usd);

} // namespace cs::units
