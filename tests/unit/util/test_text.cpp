#include <catch2/catch.hpp>

#include "provkit/error.hpp"
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

TEST_CASE("text: printable escapes the format characters that reorder or hide text (Cf)", "[util]") {
  // U+202E (right-to-left override): "model\u202Efdp.exe" shows as "modelexe.pdf".
  CHECK(util::printable("model\xe2\x80\xae"
                        "fdp.exe") == "model\\xe2\\x80\\xaefdp.exe");
  CHECK(util::printable("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad") ==
        "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad");                     // U+202A..202D
  CHECK(util::printable("\xe2\x81\xa6x\xe2\x81\xa9") == "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9");  // U+2066 .. U+2069
  CHECK(util::printable("a\xe2\x80\x8f"
                        "b") == "a\\xe2\\x80\\x8fb");  // U+200F right-to-left mark
  CHECK(util::printable("\xd8\x9c") == "\\xd8\\x9c");  // U+061C Arabic letter mark
  CHECK(util::printable("a\xe2\x80\x8b"
                        "b") == "a\\xe2\\x80\\x8bb");             // U+200B zero width space
  CHECK(util::printable("\xef\xbb\xbfx") == "\\xef\\xbb\\xbfx");  // U+FEFF
  CHECK(util::printable("a\xc2\xad"
                        "b") == "a\\xc2\\xadb");                         // U+00AD soft hyphen
  CHECK(util::printable("\xf3\xa0\x81\x81") == "\\xf3\\xa0\\x81\\x81");  // U+E0041 tag A
  // Letters and symbols of any script stay as they are, next to an escaped one too.
  CHECK(util::printable("\xd8\xa7\xe4\xb8\xad\xf0\x9f\x98\x80\xe2\x80\x90") ==
        "\xd8\xa7\xe4\xb8\xad\xf0\x9f\x98\x80\xe2\x80\x90");                         // alef, CJK, emoji, U+2010 hyphen
  CHECK(util::printable("\xe2\x80\xaf\xe2\x81\xb0") == "\xe2\x80\xaf\xe2\x81\xb0");  // U+202F, U+2070: not Cf
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

TEST_CASE("text: an input file's error quotes the file and the input through printable, the one escaper", "[util]") {
  // A name or line from a lock or manifest that reorders the terminal (U+202E) or is not UTF-8 is escaped in
  // the sentence as everywhere else, not only its C0 controls.
  Error e = input_error("lock\xe2\x80\xae.txt", 3, "bad \xff line\n");
  CHECK(std::string(e.what()) == "lock\\xe2\\x80\\xae.txt:3: bad \\xff line\\n");
  CHECK(e.code() == ExitCode::usage);
}
