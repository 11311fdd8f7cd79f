#include "calibrate/fit/measurements.hpp"

#include "base/json_input.hpp"

#include <cmath>

namespace cs {

Measurements parse_measurements(const std::string& text, const std::string& file)
{
  nlohmann::json j = parse_json_input(text, file);
  JsonReader r(j, file, "", &text);
  if (r.string("schema") != Measurements::kSchema)
    r.item(r.at("schema"), "schema").fail(std::string("unsupported schema, expected ") + Measurements::kSchema);
  Measurements m;
  m.device = r.string("device");
  if (r.has("host"))
    for (const auto& [k, v] : r.at("host").items())
      m.host[k] = v.is_string() ? v.get<std::string>() : v.dump();
  const auto& items = r.at("measurements");
  if (!items.is_array())
    r.item(items, "measurements").fail("expected a list");
  for (std::size_t i = 0; i < items.size(); ++i) {
    JsonReader it = r.item(items[i], "measurements/" + std::to_string(i));
    Measurement x;
    x.family = it.string("kernel");
    const auto& args = it.at("args");
    if (!args.is_object())
      it.item(args, "args").fail("expected an object of argument: value");
    for (const auto& [k, v] : args.items())
      x.args[k] = v.is_string() ? v.get<std::string>() : v.dump();
    x.seconds = it.positive("seconds");
    if (x.seconds > 3600) // a kernel that takes an hour is a unit mistake, and would swamp the fit
      it.item(it.at("seconds"), "seconds").fail("a kernel of more than an hour: give its time in seconds");
    const double repeats = it.has("repeats") ? it.number("repeats") : 1;
    if (!(repeats >= 1 && repeats <= 1e9 && repeats == std::floor(repeats))) // the cast below must be defined
      it.item(it.at("repeats"), "repeats").fail("expected a whole number of repeats from 1 to 1e9");
    x.repeats = static_cast<int>(repeats);
    x.spread = it.has("spread") ? it.number("spread") : 0;
    x.median = it.has("median") ? it.number("median") : 0;
    try {
      (void)x.kernel();
    } catch (const std::invalid_argument& e) {
      it.fail(e.what());
    }
    m.items.push_back(std::move(x));
  }
  if (m.items.empty())
    r.item(items, "measurements").fail("no measurements");
  return m;
}

Measurements load_measurements(const std::string& path)
{
  return parse_measurements(read_text_file(path, "measurement file"), path);
}

std::string measurements_to_json(const Measurements& m)
{
  nlohmann::ordered_json j;
  j["schema"] = Measurements::kSchema;
  j["device"] = m.device;
  j["host"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m.host)
    j["host"][k] = v;
  j["measurements"] = nlohmann::ordered_json::array();
  for (const auto& x : m.items) {
    nlohmann::ordered_json args = nlohmann::ordered_json::object();
    for (const auto& [k, v] : x.args)
      args[k] = v;
    nlohmann::ordered_json item{
        {"kernel", x.family}, {"args", args}, {"seconds", x.seconds}, {"repeats", x.repeats}, {"spread", x.spread}};
    if (x.median > 0)
      item["median"] = x.median;
    j["measurements"].push_back(item);
  }
  return j.dump(1) + "\n";
}

} // namespace cs
