#include <catch2/catch.hpp>

#include <sstream>

#include "provkit/cli/output.hpp"

using namespace provkit;

TEST_CASE("output: events, then one summary with tool, exit_code and a reason on failure", "[cli]") {
  std::ostringstream out;
  cli::JsonLines lines("hf-fetch", &out);
  lines.event("file", {{"path", std::string("a\xff")}, {"event", "overridden"}});
  CHECK(lines.summary(1, cli::Reason::verification_failed, {{"files", 2}}) == 1);
  lines.summary(0, std::nullopt);  // a second summary writes nothing
  lines.event("file");
  CHECK(out.str() == "{\"event\":\"file\",\"path\":\"a\\udcff\"}\n"
                     "{\"event\":\"summary\",\"exit_code\":1,\"files\":2,\"reason\":\"verification_failed\",\"tool\":\"hf-fetch\"}\n");

  std::ostringstream ok;
  cli::JsonLines(std::string("envcheck"), &ok).summary(0, cli::Reason::check_failed, {{"reason", "x"}});
  CHECK(ok.str() == "{\"event\":\"summary\",\"exit_code\":0,\"tool\":\"envcheck\"}\n");  // no reason when 0

  std::ostringstream failed;
  cli::JsonLines("envbuild", &failed).failure(Error(ExitCode::auth, "refused"));
  CHECK(failed.str() == "{\"event\":\"summary\",\"exit_code\":4,\"message\":\"refused\",\"reason\":\"auth\",\"tool\":\"envbuild\"}\n");
  CHECK(cli::reason_name(cli::reason_for(ExitCode::usage)) == "invalid_input");
}
