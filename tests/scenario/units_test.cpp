#include "base/units.hpp"

#include <gtest/gtest.h>

using namespace cs::units;

TEST(Units, BytesDecimalAndBinary)
{
  EXPECT_DOUBLE_EQ(*parse_bytes("123"), 123);
  EXPECT_DOUBLE_EQ(*parse_bytes("4KB"), 4e3);
  EXPECT_DOUBLE_EQ(*parse_bytes("1.5 GB"), 1.5e9);
  EXPECT_DOUBLE_EQ(*parse_bytes("80GiB"), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(*parse_bytes("2MiB"), 2097152.0);
  EXPECT_DOUBLE_EQ(*parse_bytes("1TiB"), 1099511627776.0);
  EXPECT_DOUBLE_EQ(*parse_bytes("3B"), 3);
}

TEST(Units, RatesBytesAndBits)
{
  EXPECT_DOUBLE_EQ(*parse_rate("900GB/s"), 900e9);
  EXPECT_DOUBLE_EQ(*parse_rate("400Gb/s"), 50e9);
  EXPECT_DOUBLE_EQ(*parse_rate("25Gbps"), 25e9 / 8);
  EXPECT_DOUBLE_EQ(*parse_rate("1 GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(*parse_rate("8b/s"), 1.0);
}

TEST(Units, Times)
{
  EXPECT_DOUBLE_EQ(*parse_time("1.5us"), 1.5e-6);
  EXPECT_DOUBLE_EQ(*parse_time("2ms"), 2e-3);
  EXPECT_DOUBLE_EQ(*parse_time("10ns"), 10e-9);
  EXPECT_DOUBLE_EQ(*parse_time("3s"), 3);
  EXPECT_DOUBLE_EQ(*parse_time("0.5"), 0.5);
}

TEST(Units, MalformedInputIsRejectedWithAReason)
{
  std::string error;
  EXPECT_FALSE(parse_bytes("GiB", &error));
  EXPECT_NE(error.find("expected a number"), std::string::npos);
  EXPECT_FALSE(parse_bytes("12 parsecs", &error));
  EXPECT_NE(error.find("unknown unit 'parsecs'"), std::string::npos);
  EXPECT_FALSE(parse_rate("400Gb", &error));
  EXPECT_NE(error.find("not a rate"), std::string::npos);
  EXPECT_FALSE(parse_rate("4Gib/s", &error));
  EXPECT_FALSE(parse_time("5 fortnights", &error));
  EXPECT_FALSE(parse_time("", &error));
  EXPECT_FALSE(parse_bytes("nan", &error));
  // strtod reads hexadecimal: 0x10GiB was 16 GiB, 0x1p4s 16 s. Sizes are decimal.
  EXPECT_FALSE(parse_bytes("0x10GiB", &error));
  EXPECT_NE(error.find("expected a number with a unit, got '0x10GiB'"), std::string::npos) << error;
  EXPECT_FALSE(parse_time("0x1p4s", &error));
  EXPECT_FALSE(parse_rate("0X10Gb/s", &error));
  EXPECT_TRUE(parse_rate("1.6e2Gb/s", &error)); // exponents are decimal
}

TEST(Units, FormattingIsReadable)
{
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_time(2.5e-3), "2.5 ms");
  EXPECT_EQ(format_time(3e-6), "3 us");
  // Money and counts with thousands separators, not 1.032e+05.
  EXPECT_EQ(format_money(103200), "$103,200");
  EXPECT_EQ(format_money(1.13e6), "$1,130,000");
  EXPECT_EQ(format_money(14.75), "$14.75");
  EXPECT_EQ(format_count(999.6), "1,000");
  EXPECT_EQ(format_count(-1234567), "-1,234,567");
  EXPECT_EQ(format_count(12), "12");
}

TEST(Units, ValuesPastTheBoundsAreRefusedAfterTheUnit)
{
  // 1e308 is finite, 1e308 GiB is not: the bound applies to the value in SI units.
  std::string error;
  EXPECT_FALSE(parse_bytes("1e308GiB", &error));
  EXPECT_NE(error.find("beyond the largest size"), std::string::npos) << error;
  EXPECT_FALSE(parse_bytes("2EB", &error)); // no such unit; and 2e18 B would be past 1 EiB
  EXPECT_FALSE(parse_bytes("2e18", &error));
  EXPECT_TRUE(parse_bytes("1024TiB"));
  EXPECT_FALSE(parse_rate("1e308Gb/s", &error));
  EXPECT_FALSE(parse_rate("2e15B/s", &error));
  EXPECT_TRUE(parse_rate("900TB/s"));
  EXPECT_FALSE(parse_time("1e308h", &error));
  EXPECT_FALSE(parse_time("-1e10", &error));
  EXPECT_TRUE(parse_time("1000h"));
  EXPECT_FALSE(parse_bytes("inf", &error));
}
