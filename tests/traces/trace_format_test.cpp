// The trace-format registry: every shipped sample is detected as its own format by content, every format can
// summarise a file, and a format registered elsewhere (here, in the test binary) joins the list, the detection and
// the `format:` choices without another file changing.
#include "traces/trace_format.hpp"

#include "base/input_error.hpp"

#include <fstream>
#include <gtest/gtest.h>

namespace cs {

// A test-only format: files whose first line is "#test-trace".
CS_REGISTER_TRACE_FORMAT(test_only,
                         TraceFormat{"test-trace",
                                     "test only: a first line of #test-trace",
                                     "test-kind",
                                     1,
                                     [](const TraceSample& s) { return s.head.rfind("#test-trace", 0) == 0; },
                                     [](const std::string& p) { return p + ": a test trace\n"; },
                                     {}});

} // namespace cs

namespace {

std::string format_sample(const std::string& rel) { return std::string(CS_SOURCE_DIR) + "/traces/samples/" + rel; }

} // namespace

TEST(TraceFormats, EveryShippedSampleIsDetectedAsItsFormat)
{
  const std::pair<const char*, const char*> cases[] = {
      {"swim/FB-2009_samples_24_times_1hr_0.tsv", "swim"},
      {"hadoop/gridmix-wordcount-rumen.json", "rumen"},
      {"hadoop/job_1329348432655_0001-sleep-10m-1r.jhist", "jhist"},
      {"gpu-jobs/philly-first-3000.csv", "philly"},
      {"gpu-jobs/philly.csv.gz", "philly"},
      {"gpu-jobs/openb-pods-first-1500.csv", "openb"},
      {"gpu-jobs/60_job.csv", "tiresias"},
      {"kineto/nccl_data.json.gz", "kineto"},
      {"kineto/hf-llama-1b-step-h200.json.gz", "kineto"}, // PyTorch 2.11's profiler, recorded by us on an H200
      {"chakra/small_chakra.0.json", "chakra"},
      {"chakra/chakra.0.et.gz", "chakra"},
      {"spark/local-1422981780767", "spark"},
      {"spark/spark2-eventlog.zstd", "spark"}, // zstd, Spark 3's default event-log codec (once "truncated or corrupt")
  };
  for (const auto& [file, format] : cases) {
    EXPECT_EQ(cs::detect_any_trace_format(format_sample(file)), format) << file;
    const cs::TraceFormat* f = cs::find_trace_format(format);
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->summarise(format_sample(file)).find(format), std::string::npos) << file;
  }
}

TEST(TraceFormats, AFormatRegisteredElsewhereJoinsEveryList)
{
  EXPECT_NE(cs::find_trace_format("test-trace"), nullptr);
  EXPECT_EQ(cs::trace_format_names("test-kind"), std::vector<std::string>{"test-trace"});
  const auto mapreduce = cs::trace_format_names("mapreduce");
  EXPECT_EQ(mapreduce, (std::vector<std::string>{"jhist", "rumen", "swim"}));
  const std::string path = ::testing::TempDir() + "/cs_test_trace.txt";
  std::ofstream(path) << "#test-trace\n1 2 3\n";
  EXPECT_EQ(cs::detect_any_trace_format(path), "test-trace");
}

TEST(TraceFormats, ContentNoFormatClaimsIsRefusedNamingEveryFormat)
{
  const std::string path = ::testing::TempDir() + "/cs_not_a_trace.json";
  std::ofstream(path) << "{\"schema\": \"1.0.2\", \"nodes\": []}\n"; // a JSON object that is no rumen job
  try {
    cs::detect_any_trace_format(path);
    FAIL() << "detected";
  } catch (const cs::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rumen"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--format"), std::string::npos);
  }
}

TEST(TraceFormats, APyTorchExecutionTraceIsNamedAndPointedToItsConverter)
{
  // ExecutionTraceObserver's JSON from PyTorch 2.11 (one HF Llama step on the lent H200): once read as rumen,
  // "0 jobs" and exit 0; now recognised and refused with what to do.
  try {
    cs::detect_any_trace_format(format_sample("chakra/pytorch-et-hf-llama-1b-step-h200.json.gz"));
    FAIL() << "detected";
  } catch (const cs::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("PyTorch execution trace"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("chakra_converter"), std::string::npos) << e.what();
  }
}

TEST(TraceFormats, ZstdLogsAreReadWholeAndATruncatedOneIsRefused)
{
  const auto* spark = cs::find_trace_format("spark");
  ASSERT_NE(spark, nullptr);
  EXPECT_NE(spark->summarise(format_sample("spark/spark2-eventlog.zstd"))
                .find("6 jobs (0 failed), 6 stage attempts, 6 tasks"),
            std::string::npos);
  std::ifstream in(format_sample("spark/spark2-eventlog.zstd"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = ::testing::TempDir() + "/cs_truncated.zstd";
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    spark->summarise(path);
    FAIL() << "a truncated zstd log was read";
  } catch (const cs::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("zstd stream is truncated"), std::string::npos) << e.what();
  }
}

TEST(TraceFormats, GzipFilesCutShortOrCorruptAreRefused)
{
  // Once read 39 of 40 rows, the cut one reported as a bad row: a gzip stream that ends early ends in EOF, not an
  // error. And a corrupt check sum once hid the format ("cannot tell") instead of naming the damage.
  std::ifstream in(format_sample("gpu-jobs/philly.csv.gz"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = ::testing::TempDir() + "/cs_cut.csv.gz", bad = ::testing::TempDir() + "/cs_crc.csv.gz";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 30);
  std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() - 8) + std::string(8, '\0');
  for (const auto& path : {cut, bad}) {
    try {
      cs::find_trace_format(cs::detect_any_trace_format(path))->summarise(path);
      FAIL() << path << " was read";
    } catch (const cs::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("gzip stream is corrupt or truncated"), std::string::npos) << e.what();
    }
  }
}
