// The trace readers on the real traces in traces/samples and on malformed input.
#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "traces/trace_format.hpp"
#include "traces/trace_job.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace {

std::string shared(const std::string& rel) { return std::string(CS_SOURCE_DIR) + "/traces/samples/" + rel; }

std::string temp_file(const std::string& name, const std::string& text)
{
  auto path = std::filesystem::temp_directory_path() / ("cs_trace_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

std::vector<cs::TraceJob> read_all(const std::string& format, const std::string& path,
                                   cs::TraceSummary* summary = nullptr)
{
  std::vector<cs::TraceJob> jobs;
  auto s = cs::read_trace(format, path, [&](cs::TraceJob&& j) { jobs.push_back(std::move(j)); });
  if (summary)
    *summary = s;
  return jobs;
}

TEST(SwimReader, ReadsTheFacebook2009Sample)
{
  cs::TraceSummary s;
  auto jobs = read_all("swim", shared("swim/FB-2009_samples_24_times_1hr_0.tsv"), &s);
  EXPECT_EQ(s.jobs_read + s.skipped, 5894);
  EXPECT_EQ(static_cast<long>(jobs.size()), s.jobs_read);
  ASSERT_FALSE(jobs.empty());
  // job0	49	49	740773	2339561	627471
  EXPECT_EQ(jobs[0].id, "job0");
  EXPECT_DOUBLE_EQ(jobs[0].submit_s, 49);
  EXPECT_DOUBLE_EQ(jobs[0].input_bytes, 740773);
  EXPECT_DOUBLE_EQ(jobs[0].shuffle_bytes, 2339561);
  EXPECT_DOUBLE_EQ(jobs[0].output_bytes, 627471);
  EXPECT_EQ(jobs[0].reduces, -1); // derived later from the shuffle size
}

TEST(SwimReader, InputPathsNameDatasets)
{
  auto jobs = read_all("swim", shared("swim/FB-2010_samples_24_times_1hr_withInputPaths_0.tsv"));
  ASSERT_GT(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].input_path, "inputPath1");
}

TEST(SwimReader, MalformedRowsAreSkippedWithTheirLines)
{
  const std::string path = temp_file("bad.tsv", "job0\t1\t1\t100\t10\t5\n"
                                                "job1\t2\t1\n"             // too few fields
                                                "job2\tx\t1\t100\t10\t5\n" // not a number
                                                "job3\t3\t1\t-5\t10\t5\n"  // negative
                                                "job4\t4\t1\t0\t10\t5\n"   // no input, but shuffle and output: a job
                                                "job5\t5\t1\t200\t0\t0\tp\tq\n"
                                                "job6\t6\t1\t0\t0\t0\n"); // no bytes at all
  cs::TraceSummary s;
  auto jobs = read_all("swim", path, &s);
  EXPECT_EQ(s.jobs_read, 3);
  EXPECT_EQ(s.skipped, 4);
  EXPECT_EQ(s.skip_reasons["empty job (no input, shuffle or output bytes)"], 1);
  ASSERT_EQ(s.problems.size(), 4u);
  EXPECT_NE(s.problems[0].find(":2: wrong field count"), std::string::npos) << s.problems[0];
  EXPECT_NE(s.problems[1].find(":3: non-numeric field"), std::string::npos) << s.problems[1];
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[1].id, "job4");
  EXPECT_EQ(jobs[1].input_bytes, 0);
  EXPECT_EQ(jobs[1].shuffle_bytes, 10);
  EXPECT_EQ(jobs[2].input_path, "p");
  EXPECT_NE(cs::describe(s).find("3 jobs read, 4 skipped"), std::string::npos);
}

TEST(SwimReader, AnOverlongLineIsSkippedAndTheReadGoesOn)
{
  // A 2.5 GiB line once ended the read silently after 40 of 80 rows; now a line past 1 MiB is skipped and counted
  // without being held, and the rows after it are read (2 MiB here).
  std::string text;
  for (int i = 0; i < 3; ++i)
    text += "job" + std::to_string(i) + "\t1\t1\t100\t10\t5\n";
  text += std::string(2 << 20, 'x') + "\n";
  for (int i = 3; i < 6; ++i)
    text += "job" + std::to_string(i) + "\t1\t1\t100\t10\t5\n";
  cs::TraceSummary s;
  const auto jobs = read_all("swim", temp_file("long.tsv", text), &s);
  EXPECT_EQ(jobs.size(), 6u);
  EXPECT_EQ(s.skip_reasons["line longer than 1 MiB"], 1);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find(":4: line longer than 1 MiB"), std::string::npos) << s.problems[0];
  // The bounded line reader itself: lines kept up to the bound, the last line without a newline, then the end.
  std::istringstream in("ab\ncdefgh\nij");
  std::string line;
  bool too_long = false;
  ASSERT_TRUE(cs::read_bounded_line(in, line, 4, too_long));
  EXPECT_EQ(line, "ab");
  ASSERT_TRUE(cs::read_bounded_line(in, line, 4, too_long));
  EXPECT_TRUE(too_long);
  EXPECT_EQ(line, "");
  ASSERT_TRUE(cs::read_bounded_line(in, line, 4, too_long));
  EXPECT_FALSE(too_long);
  EXPECT_EQ(line, "ij");
  EXPECT_FALSE(cs::read_bounded_line(in, line, 4, too_long));
}

TEST(TraceReaders, MissingFileIsAnInputError)
{
  for (const char* format : {"swim", "rumen", "jhist"})
    EXPECT_THROW(read_all(format, "/nonexistent/trace"), cs::InputError) << format;
  EXPECT_THROW(read_all("parquet", shared("swim/FB-2009_samples_24_times_1hr_0.tsv")), cs::InputError);
}

TEST(RumenReader, ReadsTheGridmixWordCountWithLocations)
{
  auto jobs = read_all("rumen", shared("hadoop/gridmix-wordcount-rumen.json"));
  ASSERT_EQ(jobs.size(), 1u);
  const auto& j = jobs[0];
  EXPECT_EQ(j.id, "job_201009241532_0001");
  EXPECT_EQ(j.maps, 3);
  EXPECT_EQ(j.reduces, 1);
  ASSERT_EQ(j.map_hosts.size(), 3u);
  ASSERT_FALSE(j.map_hosts[0].empty());
  EXPECT_EQ(j.map_hosts[0][0], "foo.example.com");
  EXPECT_DOUBLE_EQ(j.map_input_bytes[0], 704270);
  EXPECT_DOUBLE_EQ(j.shuffle_bytes, 127823); // the reducer's reduceShuffleBytes
  ASSERT_EQ(j.map_seconds.size(), 3u);
  EXPECT_NEAR(j.map_seconds[0], 6.896, 1e-9); // 1285322658262 - 1285322651366 ms
  EXPECT_GT(j.submit_s, 0);                   // no submitTime: the earliest map start stands in
  EXPECT_NEAR(j.commit_s, 5.078, 1e-3);       // the last attempt's end to the job's finishTime
}

TEST(RumenReader, ReadsTheSlsSample)
{
  cs::TraceSummary s;
  auto jobs = read_all("rumen", shared("hadoop/2jobs2min-rumen-jh.json"), &s);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(s.skipped, 0);
  for (const auto& j : jobs) {
    EXPECT_EQ(j.maps, 96);
    EXPECT_EQ(j.reduces, 0);
    EXPECT_EQ(j.queue, "sls_queue_1");
    EXPECT_EQ(j.map_hosts.size(), 96u);
  }
  EXPECT_EQ(jobs[1].line, 5115);
}

TEST(RumenReader, RecordsWithImpossibleValuesAreSkippedAndCountedNotTaken)
{
  const auto job = [](const std::string& id, const std::string& fields, const std::string& attempt) {
    return "{\"jobID\": \"" + id + "\", \"submitTime\": 1000, \"finishTime\": 9000, " + fields +
           "\"totalReduces\": 0, \"mapTasks\": [{\"inputBytes\": 10, \"attempts\": [{\"result\": \"SUCCESS\", " +
           attempt + "}]}]}\n";
  };
  const std::string ok_attempt = "\"startTime\": 2000, \"finishTime\": 3000";
  cs::TraceSummary s;
  auto jobs = read_all(
      "rumen",
      temp_file("r-bad.json", job("good", "\"totalMaps\": 1, ", ok_attempt) +
                                  job("str", "\"totalMaps\": \"1\", ", ok_attempt) +
                                  job("half", "\"totalMaps\": 1.5, ", ok_attempt) +
                                  job("neg", "\"totalMaps\": 1, ", ok_attempt + ", \"hdfsBytesWritten\": -500") +
                                  job("back", "\"totalMaps\": 1, ", "\"startTime\": 3000, \"finishTime\": 2000")),
      &s);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "good");
  EXPECT_EQ(s.skipped, 4);
  EXPECT_EQ(s.skip_reasons["'totalMaps' is not a number"], 1);
  EXPECT_EQ(s.skip_reasons["'totalMaps' is not a whole count"], 1);
  EXPECT_EQ(s.skip_reasons["a negative byte count"], 1);
  EXPECT_EQ(s.skip_reasons["an attempt finishes before it starts"], 1);
}

TEST(RumenReader, MalformedObjectsAreSkippedAndBrokenFramingIsAnError)
{
  const std::string ok = R"({"jobID": "job_1", "submitTime": 1000, "totalMaps": 1, "totalReduces": 0,
  "mapTasks": [{"inputBytes": 10, "attempts": []}]})";
  cs::TraceSummary s;
  auto jobs = read_all("rumen",
                       temp_file("r1.json", ok +
                                                "\n{\"jobID\": }\n{\"jobID\": \"job_2\", \"totalMaps\": 0, "
                                                "\"submitTime\": 5}\n" +
                                                ok),
                       &s);
  EXPECT_EQ(jobs.size(), 2u);
  EXPECT_EQ(s.skip_reasons["malformed JSON"], 1);
  EXPECT_EQ(s.skip_reasons["zero maps"], 1);
  EXPECT_NE(s.problems[0].find(":3: malformed JSON"), std::string::npos) << s.problems[0];
  try {
    read_all("rumen", temp_file("r2.json", ok + "\n{\"jobID\": \"x\",\n \"mapTasks\": ["));
    FAIL() << "a truncated object must be an error";
  } catch (const cs::InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("not closed"), std::string::npos);
  }
  try {
    read_all("rumen", temp_file("r3.json", ok + "\n  oops"));
    FAIL() << "text between objects must be an error";
  } catch (const cs::InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 3);
  }
}

TEST(JhistReader, ReadsTheSleepJob)
{
  auto jobs = read_all("jhist", shared("hadoop/job_1329348432655_0001-sleep-10m-1r.jhist"));
  ASSERT_EQ(jobs.size(), 1u);
  const auto& j = jobs[0];
  EXPECT_EQ(j.id, "job_1329348432655_0001");
  EXPECT_EQ(j.queue, "default");
  EXPECT_DOUBLE_EQ(j.submit_s, 1329348443.227);
  EXPECT_EQ(j.maps, 10);
  EXPECT_EQ(j.reduces, 1);
  ASSERT_EQ(j.map_seconds.size(), 10u);
  for (double t : j.map_seconds)
    EXPECT_GT(t, 0);
  // Attempt launch to task end: the last three maps were scheduled with the first seven but waited ~12 s for
  // containers, which is not their run time (task start to end would be 15-17 s).
  EXPECT_NEAR(*std::max_element(j.map_seconds.begin(), j.map_seconds.end()), 12.077, 1e-3);
  EXPECT_GT(j.shuffle_bytes, 0);
  EXPECT_NEAR(j.startup_s, 7.258, 1e-3); // submitted 43.227 s, first attempt 50.485 s
  EXPECT_NEAR(j.commit_s, 0.001, 1e-3);  // last task 68.600 s, job finished 68.601 s
}

TEST(JhistReader, BadEventsAreSkippedAndAMissingHeaderIsAnError)
{
  EXPECT_THROW(read_all("jhist", temp_file("h1.jhist", "{\"type\":\"JOB_SUBMITTED\"}\n")), cs::InputError);
  const std::string text =
      "Avro-Json\n"
      R"({"type":"JOB_SUBMITTED","event":{"x.JobSubmitted":{"jobid":"job_9","jobName":"n","submitTime":2000,)"
      R"("jobQueueName":"q"}}})"
      "\n{broken\n"
      R"({"type":"JOB_INITED","event":{"x.JobInited":{"jobid":"job_9","totalMaps":2,"totalReduces":0}}})"
      "\n";
  cs::TraceSummary s;
  auto jobs = read_all("jhist", temp_file("h2.jhist", text), &s);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].maps, 2);
  EXPECT_EQ(s.skip_reasons["malformed JSON event"], 1);
  EXPECT_NE(s.problems[0].find(":3:"), std::string::npos);
  // No JOB_INITED: the job is skipped, not invented.
  auto none = read_all("jhist", temp_file("h3.jhist", "Avro-Json\n"), &s);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(s.skipped, 1);
}

TEST(JhistReader, ImpossibleValuesAreSkippedAndCountedNotTaken)
{
  const std::string submitted =
      R"({"type":"JOB_SUBMITTED","event":{"x.JobSubmitted":{"jobid":"job_9","jobName":"n","submitTime":2000}}})"
      "\n";
  const auto inited = [](const std::string& maps) {
    return R"({"type":"JOB_INITED","event":{"x.JobInited":{"jobid":"job_9","totalMaps":)" + maps +
           R"(,"totalReduces":0}}})" + std::string("\n");
  };
  const auto task = [](const std::string& event, const std::string& fields) {
    return R"({"type":")" + event + R"(","event":{"x.T":{"taskid":"t1","taskType":"MAP",)" + fields + "}}}\n";
  };
  cs::TraceSummary s;
  // A fractional map count (once truncated to 2).
  auto jobs = read_all("jhist", temp_file("f.jhist", "Avro-Json\n" + submitted + inited("2.5")), &s);
  EXPECT_TRUE(jobs.empty());
  EXPECT_EQ(s.skip_reasons["a fractional totalMaps"], 1);
  // A task that finishes before it starts (once a job with that task's time unknown).
  jobs = read_all("jhist",
                  temp_file("b.jhist", "Avro-Json\n" + submitted + inited("1") +
                                           task("TASK_STARTED", R"("startTime":5000)") +
                                           task("TASK_FINISHED", R"("finishTime":4000,"status":"SUCCEEDED")")),
                  &s);
  EXPECT_TRUE(jobs.empty());
  EXPECT_EQ(s.skip_reasons["a task finishes before it starts"], 1);
  // A negative byte counter (once clamped to 0).
  jobs = read_all("jhist",
                  temp_file("n.jhist", "Avro-Json\n" + submitted + inited("1") +
                                           task("TASK_STARTED", R"("startTime":3000)") +
                                           task("TASK_FINISHED", R"("finishTime":4000,"status":"SUCCEEDED","counters":)"
                                                                 R"({"groups":[{"counts":[{"name":"HDFS_BYTES_READ",)"
                                                                 R"("value":-500}]}]})")),
                  &s);
  EXPECT_EQ(s.skip_reasons["a negative byte count"], 1);
}

} // namespace

TEST(TraceReaders, NonFiniteAndOutOfBoundsRecordsAreSkippedAndCounted)
{
  // Once: nan gave null metrics, inf or 1e18 bytes a run that never ended, 2e9 maps an int overflow.
  cs::TraceSummary s;
  auto jobs = read_all("swim",
                       temp_file("bounds.tsv", "j1\t0\t1\t1000\t10\t10\n"
                                               "j2\t0\t1\tnan\t10\t10\n"
                                               "j3\t0\t1\tinf\t10\t10\n"
                                               "j4\t0\t1\t1e18\t10\t10\n"),
                       &s);
  EXPECT_EQ(jobs.size(), 1u);
  EXPECT_EQ(s.skip_reasons["non-numeric field"], 2);
  EXPECT_EQ(s.skip_reasons["size beyond bounds (1 PiB per job)"], 1);
  const std::string rumen = "{\"jobID\": \"a\", \"submitTime\": 1, \"totalMaps\": 2000000000}\n"
                            "{\"jobID\": 7, \"submitTime\": 1}\n"
                            "{\"jobID\": \"b\", \"submitTime\": 1e400}\n";
  read_all("rumen", temp_file("bounds.json", rumen), &s);
  EXPECT_EQ(s.jobs_read, 0);
  EXPECT_EQ(s.skip_reasons["task count beyond bounds (1,000,000 per job)"], 1);
  EXPECT_EQ(s.skip_reasons["field of the wrong type"], 1);
  EXPECT_EQ(s.skip_reasons["malformed JSON"], 1);
}

TEST(TraceReaders, FormatIsDetectedFromTheFirstBytes)
{
  EXPECT_EQ(cs::detect_any_trace_format(shared("hadoop/2jobs2min-rumen-jh.json")), "rumen");
  EXPECT_EQ(cs::detect_any_trace_format(shared("hadoop/job_1329348432655_0001-sleep-10m-1r.jhist")), "jhist");
  EXPECT_EQ(cs::detect_any_trace_format(shared("swim/FB-2010_samples_24_times_1hr_0.tsv")), "swim");
  EXPECT_THROW(cs::detect_any_trace_format(temp_file("x.txt", "hello\n")), cs::InputError);
}
