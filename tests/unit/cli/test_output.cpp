#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>

#include "provkit/cli/output.hpp"
#include "provkit/util/log.hpp"

using namespace provkit;

TEST_CASE("output: events, then one summary with tool, exit_code and a reason on failure", "[cli]") {
  std::ostringstream out;
  cli::JsonLines lines("hf-fetch", &out);
  lines.event("file", {{"path", std::string("a\xff")}, {"event", "overridden"}});
  CHECK(lines.summary(1, cli::Reason::verification_failed, {{"files", 2}}) == 1);
  lines.summary(0, std::nullopt);  // a second summary writes nothing
  lines.event("file");
  CHECK(
      out.str() ==
      "{\"event\":\"file\",\"path\":\"a\\udcff\"}\n"
      "{\"event\":\"summary\",\"exit_code\":1,\"files\":2,\"reason\":\"verification_failed\",\"tool\":\"hf-fetch\"}\n");

  std::ostringstream ok;
  cli::JsonLines(std::string("envcheck"), &ok).summary(0, provkit::Reason::check_failed, {{"reason", "x"}});
  CHECK(ok.str() == "{\"event\":\"summary\",\"exit_code\":0,\"tool\":\"envcheck\"}\n");  // no reason when 0

  std::ostringstream failed;
  cli::JsonLines("envbuild", &failed).failure(Error(ExitCode::auth, "refused"));
  CHECK(failed.str() ==
        "{\"event\":\"summary\",\"exit_code\":4,\"message\":\"refused\",\"reason\":\"auth\",\"tool\":\"envbuild\"}\n");
  CHECK(reason_name(reason_for(ExitCode::usage)) == "invalid_input");
}

TEST_CASE("output: a domain's typed reason travels in the Error to the summary", "[cli]") {
  Error shared(provkit::Reason::network, "down");
  CHECK(shared.code() == ExitCode::network);
  CHECK(shared.is(provkit::Reason::network));
  CHECK_FALSE(shared.is(provkit::Reason::auth));
  CHECK_FALSE(shared.is(cli::Reason::differs));
  Error domain(cli::Reason::verification_failed, "wrong");
  CHECK(domain.code() == ExitCode::check_failed);
  CHECK(domain.is(cli::Reason::verification_failed));
  std::ostringstream out;
  cli::JsonLines("hf-fetch", &out).failure(domain);
  CHECK(out.str() ==
        "{\"event\":\"summary\",\"exit_code\":1,\"message\":\"wrong\",\"reason\":\"verification_failed\",\"tool\":"
        "\"hf-fetch\"}\n");
  CHECK(Error(ExitCode::usage, "x").is(provkit::Reason::invalid_input));
}

namespace {
// A domain whose refusals all go to scripts under one shared reason, each with a name of its own.
enum class Shelf { full, missing };
std::string_view reason_name(Shelf) { return reason_name(provkit::Reason::invalid_input); }
ExitCode exit_code(Shelf) { return ExitCode::usage; }
std::string_view refusal_name(Shelf s) { return s == Shelf::full ? "full" : "missing"; }
}  // namespace

TEST_CASE("output: a refusal under a shared reason is named in detail.refusal, unless the fields have a detail",
          "[cli]") {
  std::ostringstream out;
  cli::JsonLines("hf-fetch", &out).failure(Error(Shelf::full, "no room"));
  CHECK(out.str() ==
        "{\"detail\":{\"refusal\":\"full\"},\"event\":\"summary\",\"exit_code\":2,\"message\":\"no room\","
        "\"reason\":\"invalid_input\",\"tool\":\"hf-fetch\"}\n");
  std::ostringstream own;
  cli::JsonLines("hf-fetch", &own).summary(2, Shelf::missing, {{"detail", {{"needed_bytes", 1}}}});
  CHECK(own.str() ==
        "{\"detail\":{\"needed_bytes\":1},\"event\":\"summary\",\"exit_code\":2,\"reason\":\"invalid_input\","
        "\"tool\":\"hf-fetch\"}\n");
  std::ostringstream ok;
  cli::JsonLines("hf-fetch", &ok).summary(0, Shelf::full);
  CHECK(ok.str() == "{\"event\":\"summary\",\"exit_code\":0,\"tool\":\"hf-fetch\"}\n");
  CHECK(ReasonId(provkit::Reason::auth).refusal().empty());
}

TEST_CASE("output: the trace goes to stderr only when asked, its names made printable", "[cli][log]") {
  std::ostringstream err;
  ::unsetenv("PROVKIT_LOG");
  CHECK_FALSE(cli::start_trace("hf-fetch", false, &err));
  CHECK(cli::start_trace("hf-fetch", true, &err));
  util::log::debug("download", "GET a\nb");
  util::log::set_sink({});
  CHECK(err.str() == "hf-fetch: debug: download: GET a\\nb\n");
  ::setenv("PROVKIT_LOG", "debug", 1);
  CHECK(cli::start_trace("envbuild", false, &err));
  util::log::set_sink({});
  ::unsetenv("PROVKIT_LOG");
}
