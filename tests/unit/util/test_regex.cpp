// util::Regex judged by Python's re: every (pattern, name) pair below is matched by python3's re.match in the
// test itself, and our answer must be the same; a pattern Python refuses must be refused as syntax. Then the
// inputs that made std::regex hang or overflow its stack, which must cost linear work.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "provkit/util/process.hpp"
#include "provkit/util/regex.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;

namespace {

// compressed-tensors ignore lists and targets as published checkpoints write them (Llama, Qwen MoE,
// DeepSeek, Mixtral and the vision models' config.json), then the syntax the matcher takes, edge by edge.
const std::vector<std::string> kPatterns = {".*lm_head",
                                            ".*mlp.gate$",
                                            R"(model.layers.\d+.mlp.gate)",
                                            ".*self_attn.*",
                                            R"(.*mlp\.shared$)",
                                            R"(.*\.mlp\.gate$)",
                                            "visual.*",
                                            ".*vision_tower.*",
                                            ".*multi_modal_projector.*",
                                            R"(model\.layers\.([0-9]|1[0-5])\.)",
                                            ".*(q|k|v)_proj$",
                                            ".*block_sparse_moe.gate",
                                            ".*shared_expert_gate$",
                                            R"(.*\.experts\.\d+\.(gate|up)_proj$)",
                                            R"(re:.*)",
                                            "",
                                            "a|b",
                                            "(a|aa)*c",
                                            "a{2,3}",
                                            "a{,2}b",
                                            "a{}",
                                            "a{2,}",
                                            "a{x}",
                                            "{",
                                            "a{1",
                                            "x{2,1}",
                                            "[^a-c]+$",
                                            R"([\d-])",
                                            "[a-]",
                                            "[]a]",
                                            R"(\bfoo\b)",
                                            R"(\Bo)",
                                            "^abc",
                                            "abc$",
                                            R"(abc\Z)",
                                            R"(\Aab)",
                                            "a.c",
                                            "(?:ab)+",
                                            "(?P<n>a)b",
                                            "(?#c)ab",
                                            R"(\x41)",
                                            R"(\u00e9)",
                                            R"(\t)",
                                            "a*?b",
                                            "a+?",
                                            "a??",
                                            R"(\.)",
                                            R"(\\)",
                                            R"([\]])",
                                            R"([\\])",
                                            "a**",
                                            "*a",
                                            "(",
                                            ")",
                                            "[a",
                                            R"(\q)",
                                            R"(\s+)",
                                            R"(\w+\W)",
                                            R"(\D)",
                                            R"(\S\S)",
                                            "[z-a]",
                                            "()*",
                                            "(a*)*b",
                                            "(|a)+$",
                                            R"([\d-z])",
                                            R"(\0)",
                                            R"([\b])",
                                            "^*",
                                            R"(\b*)",
                                            "a{3}",
                                            "(ab|a)(bc|c)?$",
                                            ".*\\.weight$",
                                            "[.]",
                                            "é+",
                                            "a.{2}c",
                                            R"(\$)",
                                            "a$b",
                                            "(?P<1>a)",
                                            "(?P<n",
                                            "a|*",
                                            "(a|b|)+c",
                                            "[^\\n]+",
                                            ".",
                                            "\\n"};

const std::vector<std::string> kNames = {"",
                                         "a",
                                         "aa",
                                         "aaac",
                                         "ab",
                                         "abc",
                                         "abc\n",
                                         "a\n",
                                         "model.layers.12.mlp.gate",
                                         "model.layers.3.mlp.gate_proj",
                                         "lm_head",
                                         "model.lm_head",
                                         "model.layers.0.mlp.shared",
                                         "model.layers.15.self_attn.q_proj",
                                         "model.layers.16.self_attn.k_proj",
                                         "visual.blocks.0.attn",
                                         "model.vision_tower.encoder.layers.0",
                                         "model.layers.2.block_sparse_moe.gate",
                                         "model.layers.1.mlp.shared_expert_gate",
                                         "model.layers.4.mlp.experts.17.up_proj",
                                         "model.layers.4.mlp.experts.x.up_proj",
                                         "foo bar",
                                         "x.foo-bar",
                                         "foo",
                                         "A",
                                         "é",
                                         "aéc",
                                         "]a",
                                         "\\",
                                         "a-b",
                                         "{}",
                                         "a{}",
                                         "{",
                                         "\t",
                                         "-",
                                         "5",
                                         "b",
                                         "aab",
                                         "abcbc",
                                         "abbc",
                                         "lm_head.weight",
                                         "\x08",
                                         "$",
                                         "a{1",
                                         "\n",
                                         "x\ny",
                                         "ééé",
                                         "aaaaaaaaaaaaaaaaaaaaaaaac",
                                         "ac",
                                         "c"};

// Python's verdicts: per pattern, "E" when re.compile refuses it, else one '1' or '0' per name.
std::vector<std::string> python_verdicts(const test::TempDir& tmp) {
  nlohmann::json cases = {{"patterns", kPatterns}, {"names", kNames}};
  auto file = tmp.write("cases.json", cases.dump());
  const char* script = R"(
import json, re, sys, warnings
warnings.simplefilter("ignore")
c = json.load(open(sys.argv[1]))
out = []
for p in c["patterns"]:
    try:
        r = re.compile(p)
    except re.error:
        out.append("E")
        continue
    out.append("".join("1" if r.match(n) else "0" for n in c["names"]))
print(json.dumps(out))
)";
  auto ran = util::run({"python3", "-I", "-c", script, file.string()});
  REQUIRE(ran.exit_status == 0);
  return nlohmann::json::parse(ran.output).get<std::vector<std::string>>();
}

}  // namespace

TEST_CASE("regex: re.match's answer on every pattern and name, as python3 gives it", "[regex]") {
  test::TempDir tmp("regex");
  const auto python = python_verdicts(tmp);
  REQUIRE(python.size() == kPatterns.size());
  std::size_t compared = 0;
  for (std::size_t p = 0; p < kPatterns.size(); ++p) {
    INFO("pattern " << kPatterns[p]);
    auto compiled = util::Regex::compile(kPatterns[p]);
    if (python[p] == "E") {
      REQUIRE(std::holds_alternative<util::RegexError>(compiled));
      CHECK(std::get<util::RegexError>(compiled).reason == util::RegexRefusal::syntax);
      continue;
    }
    REQUIRE(std::holds_alternative<util::Regex>(compiled));
    const auto& re = std::get<util::Regex>(compiled);
    for (std::size_t n = 0; n < kNames.size(); ++n) {
      INFO("name " << kNames[n]);
      CHECK(re.match_prefix(kNames[n]) == (python[p][n] == '1'));
      ++compared;
    }
  }
  CHECK(compared >= 3500);
}

TEST_CASE("regex: what Python takes but a linear matcher does not is refused with its reason", "[regex]") {
  for (const char* p :
       {R"((a)\1)", "(?P<x>a)(?P=x)", "(?=a)", "(?!a)", "(?<=a)b", "(?i)a", "(?(1)a|b)", "a*+", R"(\N{DIGIT ONE})"}) {
    INFO(p);
    auto compiled = util::Regex::compile(p);
    REQUIRE(std::holds_alternative<util::RegexError>(compiled));
    CHECK(std::get<util::RegexError>(compiled).reason == util::RegexRefusal::unsupported);
  }
  auto backref = std::get<util::RegexError>(util::Regex::compile(R"(x(a)\1)"));
  CHECK(backref.why.find("backreference") != std::string::npos);
  CHECK(backref.at == 4);
  // Too long, and too large once counted repeats are unrolled.
  CHECK(std::get<util::RegexError>(util::Regex::compile(std::string(2000, 'a'))).reason ==
        util::RegexRefusal::too_long);
  CHECK(std::get<util::RegexError>(util::Regex::compile("(a{1000}){1000}")).reason == util::RegexRefusal::too_large);
  CHECK(std::get<util::RegexError>(util::Regex::compile(std::string(100, '(') + std::string(100, ')'))).reason ==
        util::RegexRefusal::too_large);
}

TEST_CASE("regex: catastrophic patterns and a 400 KB name cost linear work", "[regex]") {
  // (a|aa)*c on a run of a's: std::regex backtracks through every split of the run and never ends.
  auto r = std::get<util::Regex>(util::Regex::compile("(a|aa)*c"));
  std::uint64_t steps = 0;
  CHECK_FALSE(r.match_prefix(std::string(5000, 'a'), &steps));
  CHECK(steps <= 5000 * 4 * r.program_size());
  CHECK(r.match_prefix(std::string(5000, 'a') + "c"));
  // .*x on a 400 KB name: std::regex recursed once per character and overflowed the stack.
  auto dotstar = std::get<util::Regex>(util::Regex::compile(".*x"));
  const std::string name(400 * 1024, 'a');
  steps = 0;
  CHECK_FALSE(dotstar.match_prefix(name, &steps));
  CHECK(steps <= name.size() * 4 * dotstar.program_size());
  CHECK(dotstar.match_prefix(name + "x"));
  // Nested stars over empty matches end too.
  auto empty_loops = std::get<util::Regex>(util::Regex::compile("((a*)*|b*)*c"));
  steps = 0;
  CHECK_FALSE(empty_loops.match_prefix(std::string(10000, 'a') + "b", &steps));
  CHECK(steps <= 10001 * 4 * empty_loops.program_size());
}
