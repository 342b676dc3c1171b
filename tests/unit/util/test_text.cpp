#include <catch2/catch.hpp>

#include "provkit/util/text.hpp"

using namespace provkit;

TEST_CASE("text: printable keeps UTF-8 and escapes controls and invalid bytes", "[util]") {
  CHECK(util::printable("caf\xc3\xa9 ok") == "caf\xc3\xa9 ok");
  CHECK(util::printable("a\nOK b") == "a\\nOK b");
  CHECK(util::printable("\x1b[2J\r\t") == "\\x1b[2J\\r\\t");
  CHECK(util::printable("x\xff") == "x\\xff");
  CHECK(util::printable("\xc2\x9b"
                        "2J") == "\\xc2\\x9b2J");  // C1 CSI
  CHECK(util::printable("a\xe2\x80\xa8"
                        "b") == "a\\xe2\\x80\\xa8b");           // U+2028
  CHECK(util::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
  // Well-formed UTF-8 as RFC 3629 has it: no overlong forms, nothing past U+10FFFF.
  CHECK(util::printable("\xf0\x9f\x98\x80") == "\xf0\x9f\x98\x80");
  CHECK(util::printable("\xc0\xaf") == "\\xc0\\xaf");  // overlong
  CHECK(util::printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");
}

TEST_CASE("text: json_dump never throws and escapes bytes that are not UTF-8 reversibly", "[util]") {
  nlohmann::json j = {{"name", std::string("a\xff\n\"\\\x01\xc3\xa9")},
                      {"n", 3},
                      {std::string("k\xfe"), {true, nullptr}}};
  CHECK_THROWS(j.dump());  // what the tools used to call
  std::string line = util::json_dump(j);
  CHECK(line == R"({"k\udcfe":[true,null],"n":3,"name":"a\udcff\n\"\\\u0001)"
                "\xc3\xa9"
                R"("})");
  CHECK(line.find('\n') == std::string::npos);
}
