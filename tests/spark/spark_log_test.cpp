// The Spark event-log reader on Apache Spark's own test logs (Spark 1.x to 3.3, local, standalone and YARN),
// rolling and gzip logs, malformed lines, and the applications rebuilt from logs for replay.
#include "base/input_error.hpp"
#include "traces/spark_event_log.hpp"
#include "workloads/spark/spark_apps.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <zlib.h>

namespace fs = std::filesystem;

namespace {

std::string spark_sample(const std::string& name)
{
  return std::string(CS_SOURCE_DIR) + "/traces/samples/spark/" + name;
}

fs::path scratch(const std::string& tag)
{
  auto dir = fs::temp_directory_path() / ("cs_sparklog_" + std::to_string(::getpid()) + "_" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read(const std::string& path)
{
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(SparkEventLog, ReadsDynamicAllocationOnYarn)
{
  const auto log = cs::read_spark_event_log(spark_sample("application_1628109047826_1317105"));
  EXPECT_EQ(log.spark_version, "3.1.1.119");
  EXPECT_EQ(log.executors.size(), 10u);
  int removed = 0;
  for (const auto& e : log.executors)
    removed += e.removed_s >= 0;
  EXPECT_EQ(removed, 6);
  EXPECT_EQ(log.tasks.size(), 5u);
  int speculative = 0, killed = 0;
  for (const auto& t : log.tasks) {
    speculative += t.speculative;
    killed += t.killed;
  }
  EXPECT_EQ(speculative, 1);
  EXPECT_EQ(killed, 1);
  EXPECT_EQ(log.unknown_by_type.at("SparkListenerBlockManagerRemoved"), 6);
  EXPECT_NEAR(log.end_s, 274.9, 0.1);
}

TEST(SparkEventLog, ReadsCacheReadsAndLocalModeSlots)
{
  const auto cached = cs::read_spark_event_log(spark_sample("local-1422981780767"));
  int memory_reads = 0, stored = 0;
  for (const auto& t : cached.tasks) {
    memory_reads += t.read_method == "Memory";
    stored += t.blocks_cached;
  }
  EXPECT_EQ(memory_reads, 8);
  EXPECT_EQ(stored, 8);
  bool persisted = false;
  for (const auto& s : cached.stages)
    for (const auto& r : s.rdds)
      persisted = persisted || r.use_memory;
  EXPECT_TRUE(persisted);
  const auto local = cs::read_spark_event_log(spark_sample("local-1430917381534"));
  ASSERT_EQ(local.executors.size(), 1u); // the driver's block manager, 8 slots (its largest first wave)
  EXPECT_EQ(local.executors[0].cores, 8);
  const auto newest = cs::read_spark_event_log(spark_sample("local-1642039451826"));
  EXPECT_EQ(newest.jobs.size(), 6u);
  EXPECT_GT(newest.unknown_events, 0);
}

TEST(SparkEventLog, ReadsRollingAndCompressedLogs)
{
  const auto dir = scratch("rolling");
  const std::string text = read(spark_sample("local-1430917381534"));
  const auto cut = text.find('\n', text.size() / 2) + 1;
  const auto roll = dir / "eventlog_v2_local-1430917381534";
  fs::create_directories(roll);
  write(roll / "events_2_local-1430917381534", text.substr(cut));
  write(roll / "events_1_local-1430917381534", text.substr(0, cut));
  write(roll / "appstatus_local-1430917381534", "");
  const auto rolled = cs::read_spark_event_log(roll.string());
  EXPECT_EQ(rolled.tasks.size(), 110u);
  const auto gz = dir / "log.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  EXPECT_EQ(cs::read_spark_event_log(gz.string()).tasks.size(), 110u);
  fs::remove_all(dir);
}

/** The InputError a log with `text` raises. */
cs::InputError spark_error_of(const std::string& text)
{
  const auto dir = scratch("bad");
  write(dir / "log", text);
  try {
    cs::read_spark_event_log((dir / "log").string());
  } catch (const cs::InputError& e) {
    fs::remove_all(dir);
    return e;
  }
  fs::remove_all(dir);
  ADD_FAILURE() << "no error for: " << text.substr(0, 80);
  return cs::InputError("", 0, 0, "");
}

TEST(SparkEventLog, MalformedLinesAreErrorsAtTheirLine)
{
  const std::string start = R"({"Event":"SparkListenerApplicationStart","App Name":"a","Timestamp":1000})";
  const std::string text = read(spark_sample("local-1430917381534"));
  auto e = spark_error_of(text.substr(0, text.size() - 40)); // truncated last line
  EXPECT_EQ(e.line(), static_cast<int>(std::count(text.begin(), text.end(), '\n')));
  EXPECT_NE(std::string(e.what()).find("not a JSON event"), std::string::npos);
  e = spark_error_of(start + "\n{\"NoEvent\":1}\n");
  EXPECT_EQ(e.line(), 2);
  e = spark_error_of(start + "\n" + R"({"Event":"SparkListenerTaskEnd","Stage ID":"zero","Task Info":{}})" + "\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(std::string(e.what()).find("Stage ID"), std::string::npos);
  e = spark_error_of(start + "\n" + R"({"Event":"SparkListenerTaskEnd","Stage ID":0,"Task Info":{"Launch Time":-5}})");
  EXPECT_NE(std::string(e.what()).find("Launch Time"), std::string::npos);
  e = spark_error_of(R"({"Event":"SparkListenerLogStart","Spark Version":"3.3"})"
                     "\n");
  EXPECT_NE(std::string(e.what()).find("SparkListenerApplicationStart"), std::string::npos);
  e = spark_error_of(start + "\n");
  EXPECT_NE(std::string(e.what()).find("no task"), std::string::npos);
  e = spark_error_of("");
  EXPECT_EQ(e.line(), 1);
}

TEST(SparkEventLog, ImpossibleLogsAreRefusedAtTheirLine)
{
  // Times past any real clock, tasks ending before they start, parents that are not earlier or that no job lists,
  // and tasks on executors the log never added were once replayed (a 1e300 ms task gave a 1e297 s stage).
  const std::string start = R"({"Event":"SparkListenerApplicationStart","App Name":"a","Timestamp":1000})"
                            "\n"
                            R"({"Event":"SparkListenerBlockManagerAdded","Block Manager ID":{"Executor ID":"driver"}})"
                            "\n";
  auto task = [](const std::string& executor, const std::string& launch, const std::string& finish,
                 const std::string& metrics) {
    return R"({"Event":"SparkListenerTaskEnd","Stage ID":0,"Task Info":{"Executor ID":")" + executor +
           R"(","Launch Time":)" + launch + R"(,"Finish Time":)" + finish + R"(},"Task Metrics":{)" + metrics + "}}\n";
  };
  const auto fine = scratch("fine") / "log";
  write(fine, start + task("driver", "2000", "3000", ""));
  EXPECT_EQ(cs::read_spark_event_log(fine.string()).tasks.size(), 1u);
  // An executor added before the application's start event (Spark 3 writes it first) is dated from that start.
  const auto early = scratch("early") / "log";
  write(early, R"({"Event":"SparkListenerExecutorAdded","Timestamp":1500,"Executor ID":"1","Executor Info":{}})"
               "\n" +
                   start + task("1", "2000", "3000", ""));
  const auto early_log = cs::read_spark_event_log(early.string());
  ASSERT_EQ(early_log.executors.size(), 1u);
  EXPECT_DOUBLE_EQ(early_log.executors[0].added_s, 0.5);
  auto e = spark_error_of(start + task("driver", "2000", "1e300", ""));
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("Finish Time"), std::string::npos) << e.what();
  e = spark_error_of(start + task("driver", "2000", "3000", R"("Executor Run Time":1e300)"));
  EXPECT_NE(std::string(e.what()).find("Executor Run Time"), std::string::npos) << e.what();
  e = spark_error_of(start + task("driver", "3000", "2000", ""));
  EXPECT_NE(std::string(e.what()).find("finishes before it launches"), std::string::npos) << e.what();
  e = spark_error_of(start + task("7", "2000", "3000", ""));
  EXPECT_NE(std::string(e.what()).find("executor '7'"), std::string::npos) << e.what();
  const std::string stage = R"({"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":1,"Parent IDs":[)";
  e = spark_error_of(start + stage + "1]}}\n" + task("driver", "2000", "3000", ""));
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("as its parent"), std::string::npos) << e.what();
  e = spark_error_of(start + stage + "0]}}\n" + task("driver", "2000", "3000", ""));
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("no job lists"), std::string::npos) << e.what();
  // A rolling log whose index appears twice would count its events twice.
  const auto dir = scratch("twice") / "eventlog_v2_a";
  fs::create_directories(dir);
  write(dir / "events_1_a", start);
  write(dir / "events_1_a.zstd.copy", task("driver", "2000", "3000", ""));
  EXPECT_THROW(cs::read_spark_event_log(dir.string()), cs::InputError);
}

TEST(SparkLogReplay, RebuildsStagesTheirDependenciesAndRecordedTimes)
{
  const auto app = cs::application_from_log(cs::read_spark_event_log(spark_sample("local-1430917381534")), 0);
  ASSERT_EQ(app.stages.size(), 2u);
  ASSERT_EQ(app.jobs.size(), 1u);
  EXPECT_EQ(app.rdds[app.stages[0].rdd].partitions, 100);
  EXPECT_GT(app.stages[0].shuffle_write_bytes, 0);
  // Spark 1.4 records no stage parents: the shuffle reader depends on the earlier writer of its job.
  EXPECT_EQ(app.rdds[app.stages[1].rdd].shuffle_stages, std::vector<int>{0});
  EXPECT_NEAR(app.stages[0].task_seconds[0], 0.4312, 0.0005); // 435 ms launch to finish, less 3.8 ms of shuffle write
  EXPECT_EQ(app.max_executors, 1);
  const auto yarn =
      cs::application_from_log(cs::read_spark_event_log(spark_sample("application_1553914137147_0018")), 0);
  EXPECT_EQ(yarn.max_executors, 3);
  EXPECT_EQ(yarn.jobs.size(), 3u);
}

TEST(SparkLogReplay, Spark12LocalShuffleReadsFailuresAndUndatedJobs)
{
  // Spark 1.2 records neither a job's submission nor its end, nor local shuffle bytes: stage 2 reads 8 local blocks
  // and 0 bytes, and its task 3 fails once, which aborts job 1 (JobFailed).
  const auto log = cs::read_spark_event_log(spark_sample("local-1422981780767"));
  ASSERT_EQ(log.jobs.size(), 3u);
  for (const auto& j : log.jobs)
    EXPECT_TRUE(j.ended) << j.id;
  EXPECT_TRUE(log.jobs[1].failed);
  EXPECT_FALSE(log.jobs[0].failed);
  EXPECT_NEAR(log.jobs[0].submit_s, 4.508, 1e-9); // its stage's submission, from the application's start
  EXPECT_NEAR(log.jobs[1].end_s, 6.627, 1e-9);    // its last stage's completion
  long blocks = 0;
  for (const auto& t : log.tasks)
    blocks += t.stage == 2 ? t.shuffle_blocks : 0;
  EXPECT_EQ(blocks, 64);
  const auto app = cs::application_from_log(log, 0);
  ASSERT_EQ(app.stages.size(), 4u); // the failed stage is replayed up to its failure
  EXPECT_EQ(app.rdds[app.stages[2].rdd].shuffle_stages, std::vector<int>{1});
  ASSERT_EQ(app.stages[2].gives_up.size(), 8u);
  EXPECT_TRUE(app.stages[2].gives_up[3]);
  ASSERT_EQ(app.stages[2].failed_attempt_s[3].size(), 1u);
  EXPECT_NEAR(app.stages[2].failed_attempt_s[3][0], 0.046, 1e-9);
  EXPECT_NEAR(app.jobs[0].driver_s, 4.508, 1e-9);
  EXPECT_NEAR(app.driver_tail_s, 9.011 - 7.506, 1e-9);
  EXPECT_TRUE(app.left_out.empty()); // nothing is "still running": every job ended
}

TEST(SparkLogReplay, FailedAttemptsConcurrentJobsAndExecutorWaits)
{
  const auto failing = cs::application_from_log(cs::read_spark_event_log(spark_sample("app-20161115172038-0000")), 0);
  long attempts = 0;
  for (const auto& per_task : failing.stages[0].failed_attempt_s)
    attempts += static_cast<long>(per_task.size());
  EXPECT_EQ(attempts, 10);                         // tasks 11 and 15 failed twice
  EXPECT_TRUE(failing.stages[0].gives_up.empty()); // every task succeeded in the end
  const auto yarn = cs::read_spark_event_log(spark_sample("application_1553914137147_0018"));
  const auto app = cs::application_from_log(yarn, 0);
  ASSERT_EQ(app.jobs.size(), 3u);
  EXPECT_FALSE(app.jobs[1].with_previous);
  EXPECT_TRUE(app.jobs[2].with_previous); // submitted 15 ms after job 1, which ran 14.8 s
  EXPECT_NEAR(app.jobs[2].driver_s, 0.015, 1e-9);
  ASSERT_EQ(app.executor_waits_s.size(), 3u);
  EXPECT_NEAR(app.executor_waits_s[0], 10.310, 1e-9);
  EXPECT_TRUE(cs::application_from_log(yarn, 0, false).executor_waits_s.empty());
  // Its DISK_ONLY RDD, stored by stage 0, is read by the two tasks of each later stage (once reported as "hit rate
  // 0.0% of 0 reads"); the Spark 1.2 log reads its MEMORY_ONLY RDD 8 times, from memory as it marks them.
  EXPECT_EQ(app.recorded_cache_reads, 4);
  EXPECT_EQ(app.recorded_memory_reads, 0);
  const auto cached = cs::application_from_log(cs::read_spark_event_log(spark_sample("local-1422981780767")), 0);
  EXPECT_EQ(cached.recorded_cache_reads, 8);
  EXPECT_EQ(cached.recorded_memory_reads, 8);
  // A speculative copy that lost is not replayed, and the warning says so (the dynamic-allocation log has one).
  const auto speculative =
      cs::application_from_log(cs::read_spark_event_log(spark_sample("application_1628109047826_1317105")), 0);
  ASSERT_EQ(speculative.left_out.size(), 1u);
  EXPECT_NE(speculative.left_out[0].find("1 killed task attempt(s)"), std::string::npos) << speculative.left_out[0];
  // Executors dated years after the tasks they ran (spark-rapids-tools' test log) registered by their first task.
  const auto skewed = cs::application_from_log(cs::read_spark_event_log(spark_sample("eventlog_2nodes_8cores")), 0);
  for (double w : skewed.executor_waits_s)
    EXPECT_LT(w, 10.0);
}

} // namespace
