// envcheck's pure rules: CUDA verdicts, architecture lists, sizes, the
// nvidia-smi parser, the table and JSON, profiles, KFD topology, ELF paths.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "host/rocm.hpp"
#include "host/system.hpp"
#include "host/toolchain.hpp"
#include "provkit/elf/elf.hpp"
#include "provkit/error.hpp"
#include "provkit/host/check.hpp"
#include "provkit/host/cuda_compat.hpp"
#include "provkit/host/envcheck.hpp"
#include "provkit/host/gpu.hpp"

#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;
using gpucode::Version;
using host::check::Status;

namespace {

using provkit::test::TempDir;

std::string profile_error(const std::string& yaml) {
  TempDir dir;
  auto file = dir.write("p.yaml", yaml);
  host::Request r;
  try {
    host::load_profile(file, r);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    std::string msg = e.what();
    // Report the message relative to the file, so tests read "p.yaml:3: ...".
    return msg.substr(msg.find("p.yaml"));
  }
  return "no error";
}

}  // namespace

TEST_CASE("CUDA verdict: driver new enough passes", "[envcheck]") {
  auto v = host::cudacompat::judge_cuda({"580.65.06", 13000}, {13, 0}, false);
  CHECK(v.status == Status::pass);
  CHECK(v.rule == host::check::Rule::driver_supports_runtime);
  // An older runtime on a newer driver always works.
  CHECK(host::cudacompat::judge_cuda({"580.65.06", 13000}, {12, 8}, true).status == Status::pass);
  CHECK(host::cudacompat::judge_cuda({"590.44.01", 13010}, {13, 0}, true).status == Status::pass);
}

TEST_CASE("CUDA verdict: same major above the floor is minor-version compatibility", "[envcheck]") {
  auto v = host::cudacompat::judge_cuda({"580.65.06", 13000}, {13, 2}, false);
  CHECK(v.status == Status::warn);
  CHECK(v.rule == host::check::Rule::minor_version_compatibility);
  CHECK_THAT(v.reason, Catch::Contains("PTX compiled for 13.2"));
  CHECK_THAT(v.reason, Catch::Contains("cudaErrorCallRequiresNewerDriver"));
  CHECK_THAT(v.fix, Catch::Contains("595.45.04"));
  CHECK(v.hint == host::check::Hint::none);
  auto strict = host::cudacompat::judge_cuda({"580.65.06", 13000}, {13, 2}, true);
  CHECK(strict.status == Status::fail);
  CHECK(strict.rule == host::check::Rule::minor_version_compatibility);
  // Why it fails is a hint (the strict setting) a tool names; the reason names no flag.
  CHECK(strict.hint == host::check::Hint::strict);
  CHECK_THAT(strict.reason, !Catch::Contains("--"));
  // 12.x floor is 525.60.13: a 12.0 driver runs 12.8 code under MVC.
  CHECK(host::cudacompat::judge_cuda({"525.60.13", 12000}, {12, 8}, false).status == Status::warn);
  // Below the major's floor (a pre-release 12.0 driver) it is not compatible.
  CHECK(host::cudacompat::judge_cuda({"525.1", 12000}, {12, 8}, false).status == Status::fail);
}

TEST_CASE("CUDA verdict: older major fails naming the minimum driver", "[envcheck]") {
  auto v = host::cudacompat::judge_cuda({"570.26", 12080}, {13, 0}, false);
  CHECK(v.status == Status::fail);
  CHECK(v.rule == host::check::Rule::insufficient_driver);
  CHECK_THAT(v.reason, Catch::Contains("580.65.06"));
  CHECK_THAT(v.reason, Catch::Contains("Table 3"));
  auto unknown = host::cudacompat::judge_cuda({"580.65.06", 13000}, {14, 0}, false);
  CHECK(unknown.status == Status::fail);
  CHECK_THAT(unknown.reason, Catch::Contains("not in envcheck's table"));
}

TEST_CASE("CUDA release table and driver version order", "[envcheck]") {
  CHECK(std::string(host::cudacompat::minimum_driver_for({13, 0})->driver) == "580.65.06");
  CHECK(std::string(host::cudacompat::minimum_driver_for({13, 1})->driver) == "590.44.01");
  CHECK(std::string(host::cudacompat::minimum_driver_for({12, 8})->driver) == "570.26");
  CHECK_FALSE(host::cudacompat::minimum_driver_for({12, 7}));  // there is no 12.7
  CHECK(host::cudacompat::minimum_driver_for({13, 2})->uncertain);
  CHECK(*host::cudacompat::mvc_floor(11) == "450.80.02");
  CHECK(*host::cudacompat::mvc_floor(12) == "525.60.13");
  CHECK(*host::cudacompat::mvc_floor(13) == "580.65.06");
  CHECK(host::cudacompat::compare_driver_versions("580.65.06", "580.159.04") < 0);
  CHECK(host::cudacompat::compare_driver_versions("590.44.01", "580.159.04") > 0);
  CHECK(host::cudacompat::compare_driver_versions("570.26", "570.26.0") == 0);
  CHECK(gpucode::from_cuda_int(12080) == Version{12, 8});
  CHECK_FALSE(gpucode::parse_version("13"));
  CHECK_FALSE(gpucode::parse_version("13.x"));
  CHECK(*gpucode::parse_version("13.10") == Version{13, 10});
}

TEST_CASE("nvidia-smi --query-gpu output", "[envcheck]") {
  auto q = host::gpu::parse_smi_query(
      "0, GPU-6f1c8a2e-0000-1111-2222-333344445555, NVIDIA H200, 9.0, 143771, 143187, 5, 5, 16, 16, 580.159.04\n"
      "1, GPU-deadbeef-0000-1111-2222-333344445555, NVIDIA GeForce RTX 3090, 8.6, 24576, [N/A], 1, 4, 16, 16, "
      "580.159.04\n");
  REQUIRE(q.devices.size() == 2);
  CHECK(q.driver_version == "580.159.04");
  CHECK(q.devices[0].name == "NVIDIA H200");
  CHECK(q.devices[0].cc_major == 9);
  CHECK(q.devices[0].cc_minor == 0);
  CHECK(*q.devices[0].memory_total == 143771ull << 20);
  CHECK(q.devices[0].pcie.width_max == 16);
  CHECK(q.devices[1].cc_minor == 6);
  CHECK_FALSE(q.devices[1].memory_free);  // [N/A]
  CHECK(q.devices[1].pcie.gen_current == 1);
  CHECK(q.devices[1].pcie.gen_max == 4);
  CHECK_THROWS_WITH(host::gpu::parse_smi_query("0, GPU-x, name\n"), Catch::Contains("line 1"));
  CHECK(host::gpu::parse_smi_cuda_version(
            "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0     |") == 13000);
  CHECK(host::gpu::parse_smi_cuda_version("CUDA Version: 12.8") == 12080);
  CHECK(host::gpu::parse_smi_cuda_version("no banner") == 0);
}

TEST_CASE("GPU selection by index and UUID", "[envcheck]") {
  std::vector<host::gpu::Device> ds(2);
  ds[0].index = 0;
  ds[0].uuid = "GPU-11111111-2222";
  ds[1].index = 1;
  ds[1].uuid = "GPU-aaaaaaaa-bbbb";
  CHECK(host::gpu::select_device(ds, "1")->index == 1);
  CHECK(host::gpu::select_device(ds, "GPU-aaaaaaaa-bbbb")->index == 1);
  CHECK(host::gpu::select_device(ds, "GPU-1111")->index == 0);  // unique prefix
  CHECK(host::gpu::select_device(ds, "GPU-") == nullptr);       // too short to be a prefix
  CHECK(host::gpu::select_device(ds, "7") == nullptr);
}

TEST_CASE("forward-compatibility libcuda is found under cuda*/compat", "[envcheck]") {
  TempDir dir;
  dir.write("cuda-13.1/compat/libcuda.so.590.44.01", "x");
  dir.write("cuda-13.1/compat/libcuda.so.1", "x");
  dir.write("cuda-13.1/lib64/libcuda.so.590.44.01", "x");  // not a compat directory
  auto found = host::gpu::find_compat_libraries(dir.path);
  REQUIRE(found.size() == 1);
  CHECK(found[0].driver_version == "590.44.01");
  CHECK(host::gpu::is_compat_path("/usr/local/cuda-13.1/compat/libcuda.so.1"));
  CHECK_FALSE(host::gpu::is_compat_path("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
}

TEST_CASE("check table and JSON", "[envcheck]") {
  std::vector<host::check::Result> rs = {
      {.name = "cuda 13.0",
       .status = Status::pass,
       .rule = host::check::Rule::driver_supports_runtime,
       .reason = "driver 580.65.06 supports CUDA 13.0"},
      {.name = "need fp8 gpu1",
       .status = Status::fail,
       .rule = host::check::Rule::native_fp8,
       .threshold = "8.9",
       .reason = "GPU 1 has no native FP8",
       .fix = "use a newer GPU",
       .data = {{"index", 1}}},
      {.name = "cuda 13.2",
       .status = Status::warn,
       .rule = host::check::Rule::minor_version_compatibility,
       .reason = "minor-version compatibility"},
  };
  auto table = host::check::render_table(rs);
  CHECK(table ==
        "STATUS CHECK          RESULT\n"
        "PASS   cuda 13.0      driver 580.65.06 supports CUDA 13.0\n"
        "FAIL   need fp8 gpu1  GPU 1 has no native FP8\n"
        "                      fix: use a newer GPU\n"
        "WARN   cuda 13.2      minor-version compatibility\n");
  CHECK(host::check::any_failed(rs));
  auto j = host::check::to_json(rs);
  CHECK(j["ok"] == false);
  REQUIRE(j["checks"].size() == 3);
  CHECK(j["checks"][1]["status"] == "FAIL");
  CHECK(j["checks"][1]["fix"] == "use a newer GPU");
  CHECK(j["checks"][1]["data"]["index"] == 1);
  // The rule as --json states it: its name, or its statement with what was asked.
  CHECK(j["checks"][0]["rule"] == "driver-supports-runtime");
  CHECK(j["checks"][1]["rule"] == "fp8 needs compute capability >= 8.9");
  CHECK(j["checks"][2]["rule"] == "minor-version-compatibility");
  CHECK(host::check::rule_text(host::check::Rule::disk_free, "200G") == "free space >= 200G");
  CHECK(host::check::rule_text(host::check::Rule::none).empty());
  CHECK(host::check::to_json({{.name = "driver"}})["checks"][0]["data"].is_object());
  rs.erase(rs.begin() + 1);
  CHECK_FALSE(host::check::any_failed(rs));  // a warning is not a failure
  CHECK(host::check::to_json(rs)["ok"] == true);
}

TEST_CASE("profile: every key fills the request", "[envcheck]") {
  TempDir dir;
  auto file = dir.write("p.yaml",
                        "envcheck: 1\n"
                        "description: vLLM on the workstation\n"
                        "cuda: 13.0\n"
                        "strict: true\n"
                        "gpus: [0, GPU-aaaaaaaa]\n"
                        "need: [fp8, nvfp4]\n"
                        "min_cc: 8.9\n"
                        "arch_list: [sm_80, sm_90, sm_120]\n"
                        "vram_free: 20GiB\n"
                        "cc: true\n"
                        "nvcc: true\n"
                        "python: 3.11\n"
                        "libs: [libcudart.so.13]\n"
                        "elf: /usr/bin/true\n"
                        "disk: {/var/lib/models: 200G}\n"
                        "ports_free: [8000, 8001]\n"
                        "files:\n"
                        "  /etc/hostname: ~\n"
                        "  /models/config.json: " +
                            std::string(64, 'A') +
                            "\n"
                            "rocm: false\n");
  host::Request r;
  host::load_profile(file, r);
  CHECK(*r.cuda == Version{13, 0});
  CHECK(r.strict);
  CHECK(r.gpus == std::vector<std::string>{"0", "GPU-aaaaaaaa"});
  CHECK(r.needs == std::vector<std::string>{"fp8", "nvfp4"});
  CHECK(*r.min_cc == Version{8, 9});
  CHECK(r.arch_list.size() == 3);
  CHECK(*r.vram_free == 20ull << 30);
  CHECK(r.cc);
  CHECK(r.nvcc);
  CHECK(*r.python == "3.11");
  CHECK(r.libs == std::vector<std::string>{"libcudart.so.13"});
  CHECK(r.elfs == std::vector<std::string>{"/usr/bin/true"});
  REQUIRE(r.disks.size() == 1);
  CHECK(r.disks[0].bytes == 200ull << 30);
  CHECK(r.ports == std::vector<host::PortGate>{{"0.0.0.0", 8000}, {"0.0.0.0", 8001}});
  REQUIRE(r.files.size() == 2);
  CHECK(r.files[0].sha256.empty());
  CHECK(r.files[1].sha256 == std::string(64, 'a'));
  CHECK_FALSE(r.rocm);
  CHECK(r.asks_anything());
}

TEST_CASE("profile errors name the file and line", "[envcheck]") {
  CHECK(profile_error("cuda: 13.0\nneed: [fp8, fp16]\n") == "p.yaml:2: 'need' wants fp8 or nvfp4, not 'fp16'");
  CHECK(profile_error("cuda: 13.0\n\ncudaa: 13.0\n").starts_with("p.yaml:3: unknown key 'cudaa'"));
  CHECK(profile_error("cuda: thirteen\n") ==
        "p.yaml:1: 'cuda' wants a CUDA release as X.Y (like 13.0), not 'thirteen'");
  CHECK(profile_error("cc: yes please\n") == "p.yaml:1: 'cc' wants true or false, not 'yes please'");
  CHECK(profile_error("disk:\n  /models: lots\n").starts_with("p.yaml:2: 'disk' wants a size (like 24G"));
  CHECK(profile_error("ports_free:\n  - 8000\n  - 99999\n") == "p.yaml:3: '99999' is not a TCP port (1-65535)");
  CHECK(profile_error("cuda: [13.0\n").starts_with("p.yaml:2: not valid YAML"));
  CHECK(profile_error("- cuda\n") ==
        "p.yaml:1: a profile is a mapping of check names to values (see docs/envcheck.md)");
  CHECK(profile_error("files: {/x: nothex}\n").starts_with("p.yaml:1: the sha256 for /x must be 64 hex digits"));
}

TEST_CASE("profile: a missing file is a usage error naming it", "[envcheck]") {
  host::Request r;
  CHECK_THROWS_WITH(host::load_profile("/nonexistent/p.yaml", r), "/nonexistent/p.yaml: cannot read the profile");
}

TEST_CASE("KFD topology: AMD GPUs and their gfx targets", "[envcheck]") {
  CHECK(host::rocm::gfx_target_name(90402) == "gfx942");
  CHECK(host::rocm::gfx_target_name(90010) == "gfx90a");
  CHECK(host::rocm::gfx_target_name(110000) == "gfx1100");
  CHECK(host::rocm::gfx_target_name(120001) == "gfx1201");
  TempDir dir;
  auto nodes = std::string("class/kfd/kfd/topology/nodes/");
  dir.write(nodes + "0/properties", "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n");
  dir.write(nodes + "1/properties", "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndevice_id 29857\n");
  dir.write(nodes + "2/properties", "simd_count 256\ngfx_target_version 110000\n");
  dir.write(nodes + "2/name", "gfx1100\n");
  auto gpus = host::rocm::read_kfd_topology(dir.path);
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].node == 1);
  CHECK(gpus[0].gfx_target == "gfx942");
  CHECK(gpus[0].device_id == 29857);
  CHECK(gpus[1].gfx_target == "gfx1100");
  CHECK(host::rocm::read_kfd_topology(dir.path / "absent").empty());
}

TEST_CASE("ELF: $ORIGIN and friends expand like the loader", "[envcheck]") {
  CHECK(elf::expand_dst("$ORIGIN/../lib", "/opt/app/bin") == "/opt/app/bin/../lib");
  CHECK(elf::expand_dst("${ORIGIN}/lib", "/opt/app") == "/opt/app/lib");
  CHECK(elf::expand_dst("$ORIGINAL/x", "/o") == "$ORIGINAL/x");  // not the token
  CHECK(elf::expand_dst("/usr/$LIB/x", "/o").find("$") == std::string::npos);
}

TEST_CASE("ELF: malformed and truncated files are refused naming the file", "[envcheck]") {
  TempDir dir;
  auto text = dir.write("notelf.so", "this is not an ELF object at all, just text\n");
  CHECK_THROWS_WITH(elf::read_dynamic(text), Catch::Contains("notelf.so: not an ELF file"));
  auto tiny = dir.write("tiny.so", std::string("\x7f"
                                               "ELF\x02\x01\x01",
                                               7));
  CHECK_THROWS_WITH(elf::read_dynamic(tiny), Catch::Contains("tiny.so: truncated ELF"));
  // A real object cut after its ELF header: the program headers are missing.
  auto self = elf::read_dynamic("/proc/self/exe");
  CHECK(self.has_dynamic);
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), 64);
  auto cut = dir.write("cut.so", head);
  CHECK_THROWS_WITH(elf::read_dynamic(cut), Catch::Contains("lies beyond the end of the file"));
  try {
    elf::read_dynamic(cut);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::check_failed);
  }
}

TEST_CASE("request setters refuse bad values with one sentence", "[envcheck]") {
  host::Request r;
  CHECK_THROWS_WITH(host::set_cuda(r, "13"), "'cuda' wants a CUDA release as X.Y (like 13.0), not '13'");
  CHECK_THROWS_WITH(host::add_disk_assignment(r, "/models"), Catch::Contains("PATH=SIZE"));
  host::add_disk_assignment(r, "/a=b=1G");  // split at the last '='
  CHECK(r.disks.back().path == "/a=b");
  host::add_file_assignment(r, "/etc/hostname");
  CHECK(r.files.back().sha256.empty());
  CHECK_THROWS_AS(host::add_file_assignment(r, "/etc/hostname=abc"), Error);
  CHECK_THROWS_AS(host::add_port(r, "80a"), Error);
  CHECK_THROWS_AS(host::set_python(r, "three"), Error);
  CHECK_FALSE(host::Request{}.asks_anything());
}

TEST_CASE("nvcc --version release and PATH lookup", "[envcheck]") {
  CHECK(*host::toolchain::parse_nvcc_release("nvcc: NVIDIA (R) Cuda compiler driver\n"
                                             "Cuda compilation tools, release 13.0, V13.0.88\n") == "13.0");
  CHECK(*host::toolchain::parse_nvcc_release("Cuda compilation tools, release 12.8, V12.8.93") == "12.8");
  CHECK_FALSE(host::toolchain::parse_nvcc_release("gcc (Debian 12.2.0-14) 12.2.0"));
  TempDir dir;
  auto tool = dir.write("bin/mytool", "#!/bin/sh\n");
  fs::permissions(tool, fs::perms(0755));
  dir.write("other/mytool", "not executable");
  auto path_list = (dir.path / "other").string() + "::" + (dir.path / "bin").string();
  CHECK(*host::toolchain::find_executable("mytool", path_list) == tool);
  CHECK_FALSE(host::toolchain::find_executable("absent-tool", path_list));
  CHECK(*host::toolchain::find_executable(tool.string(), "") == tool);
  // Triton's order: CC as given, else gcc, else clang.
  CHECK(host::toolchain::find_c_compiler("/opt/x/cc", "")->origin == "CC");
  CHECK_FALSE(host::toolchain::find_c_compiler("/opt/x/cc", "")->path);
  CHECK_FALSE(host::toolchain::find_c_compiler("", (dir.path / "bin").string()));
}

TEST_CASE("profile: a key given twice, a second document, control bytes", "[envcheck]") {
  CHECK(profile_error("cuda: \"12.4\"\nstrict: true\ncuda: \"13.0\"\n") ==
        "p.yaml:3: 'cuda' is given twice (first at line 1)");
  CHECK(profile_error("disk:\n  /tmp: 1G\n  /tmp: 2G\n") == "p.yaml:3: 'disk: /tmp' is given twice (first at line 2)");
  CHECK(profile_error("cuda: \"12.4\"\n---\ncuda: \"13.0\"\n") ==
        "p.yaml:2: more YAML after the first document (a second document after '---', or a stray character) starts "
        "here; the file must be one document");
  std::string esc = profile_error("\"bad\\e]0;x\\akey\": 1\n");
  CHECK(esc.find('\x1b') == std::string::npos);
  CHECK(esc.starts_with("p.yaml:1: unknown key 'bad\\x1b]0;x\\x07key'"));
}

TEST_CASE("a bad value names the request field as data, never a command-line flag", "[envcheck]") {
  host::Request r;
  auto invalid = [&](auto&& set) -> host::InvalidValue {
    try {
      set();
    } catch (const host::InvalidValue& e) {
      CHECK(e.code() == ExitCode::usage);
      CHECK(std::string(e.what()).find("--") == std::string::npos);
      return e;
    }
    FAIL("no InvalidValue");
    throw;
  };
  auto cuda = invalid([&] { host::set_cuda(r, "thirteen"); });
  CHECK(cuda.field == host::Field::cuda);
  CHECK(cuda.value == "thirteen");
  CHECK(cuda.sentence("--cuda") == "--cuda wants a CUDA release as X.Y (like 13.0), not 'thirteen'");
  CHECK(invalid([&] { host::add_need(r, "fp16"); }).field == host::Field::need);
  CHECK(invalid([&] { host::set_min_cc(r, "eight"); }).field == host::Field::min_cc);
  CHECK(invalid([&] { host::set_python(r, "three"); }).field == host::Field::python);
  auto disk = invalid([&] { host::add_disk_assignment(r, "=1G"); });
  CHECK(disk.field == host::Field::disk);
  CHECK(disk.sentence("--disk") == "--disk wants PATH=SIZE (like /models=200G), not '=1G'");
  CHECK(invalid([&] { host::add_file_assignment(r, "=abc"); }).field == host::Field::file);
  CHECK(host::field_key(host::Field::min_cc) == "min_cc");
  // A profile names the key it read the value under, with its place.
  CHECK(profile_error("min_cc: eight\n") ==
        "p.yaml:1: 'min_cc' wants a compute capability as X.Y (like 8.9), not 'eight'");
  CHECK(profile_error("python: three\n") ==
        "p.yaml:1: 'python' wants a version as X.Y (like 3.11) or an interpreter's path, not 'three'");
  CHECK(profile_error("disk:\n  \"\": 1G\n") == "p.yaml:2: 'disk' wants a path, not ''");
}

TEST_CASE("one run: checks when something is asked, and its JSON says the mode and exit code", "[envcheck]") {
  provkit::test::TempDir t;
  host::Request r;
  host::add_file_assignment(r, (t.path / "absent").string());
  host::Environment env;  // nothing of the process: no driver, no PATH
  auto report = host::run(r, env);
  CHECK_FALSE(report.inventory);
  REQUIRE(report.results.size() == 1);
  CHECK(report.failed());
  auto j = host::to_json(report);
  CHECK(j["mode"] == "checks");
  CHECK(j["exit_code"] == 1);
  CHECK(j["envcheck"] == PROVKIT_VERSION);
  host::add_file_assignment(r, t.write("here", "x").string());
  r.files.erase(r.files.begin());
  report = host::run(r, env);
  CHECK_FALSE(report.failed());
  CHECK(host::to_json(report)["exit_code"] == 0);
}

namespace {

// A box with no driver and no sysfs: only what a test puts there answers.
host::Environment bare_box(const provkit::test::TempDir& t) {
  host::Environment env;
  env.driver.nvml_library = (t.path / "no-libnvidia-ml.so.1").string();
  env.driver.cuda_library = (t.path / "no-libcuda.so.1").string();
  env.driver.nvidia_smi = (t.path / "no-nvidia-smi").string();
  env.sysfs_root = t.path / "sys";
  env.cuda_root = t.path / "cuda";
  env.tmpdir = t.path;
  return env;
}

const host::check::Result& row_named(const std::vector<host::check::Result>& rows, const std::string& name) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.name == name; });
  REQUIRE(it != rows.end());
  return *it;
}

}  // namespace

TEST_CASE("rows name no flag: the setting their words point to is a hint for the tool", "[envcheck]") {
  provkit::test::TempDir t;
  auto env = bare_box(t);
  SECTION("a libnccl given that is no file") {
    host::Request r;
    host::set_nccl(r, host::Field::nccl_lib, (t.path / "nothing" / "libnccl.so.2").string());
    auto rows = host::run_checks(r, env);
    const auto& row = row_named(rows, "nccl all-reduce");
    CHECK(row.status == Status::fail);
    CHECK(row.reason == (t.path / "nothing" / "libnccl.so.2").string() + " is not a file");
    CHECK(row.hint == host::check::Hint::nccl_lib_given);
    CHECK_THAT(row.fix, !Catch::Contains("--"));
  }
  SECTION("the inventory's compiler, which the compiler check would build with") {
    auto gcc = t.write("bin/gcc", "#!/bin/sh\n");
    fs::permissions(gcc, fs::perms::owner_all);
    env.path_env = gcc.parent_path().string();
    auto rows = host::inventory(env);
    const auto& row = row_named(rows, "cc");
    CHECK(row.reason == "gcc at " + gcc.string() + " (from PATH)");
    CHECK(row.hint == host::check::Hint::cc);
  }
}
