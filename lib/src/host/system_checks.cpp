// envcheck's host gates: free disk space (--disk), a free TCP port
// (--port-free), a file present with its sha256 (--file).
#include "detail.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/host/system.hpp"
#include "provkit/util/size.hpp"

namespace provkit::host::detail {

Result disk_check(const DiskGate& g) {
  Result r{.name = "disk " + g.path,
           .status = Status::fail,
           .rule = Rule::disk_free,
           .threshold = g.size_text,
           .data = {{"path", g.path}, {"need", g.bytes}}};
  std::string why;
  auto free = host::disk_free(g.path, why);
  if (!free) {
    r.reason = "cannot read the free space: " + why;
    return r;
  }
  r.data["free"] = *free;
  if (*free >= g.bytes) {
    r.status = Status::pass;
    r.reason = util::format_size(*free) + " free >= " + util::format_size(g.bytes);
  } else {
    r.reason = "only " + util::format_size(*free) + " free < " + util::format_size(g.bytes) + " needed";
    r.fix = "free space on that file system or use another one";
  }
  return r;
}

Result port_check(int port) {
  const std::string p = std::to_string(port);
  std::string why;
  if (host::port_free(port, why))
    return {.name = "port-free " + p, .status = Status::pass, .rule = Rule::port_bindable,
            .reason = "port " + p + " is free", .data = {{"port", port}}};
  return {.name = "port-free " + p,
          .status = Status::fail,
          .rule = Rule::port_bindable,
          .reason = "port " + p + " cannot be bound: " + why,
          .fix = "stop what listens there (ss -ltnp 'sport = :" + p + "') or choose another port",
          .data = {{"port", port}}};
}

Result file_check(const FileGate& g) {
  Result r{.name = "file " + g.path,
           .status = Status::fail,
           .rule = g.sha256.empty() ? Rule::file_exists : Rule::file_sha256,
           .data = {{"path", g.path}, {"expected_sha256", g.sha256}}};
  std::error_code ec;
  if (!fs::is_regular_file(g.path, ec)) {
    r.reason = g.path + " does not exist (or is not a regular file)";
    r.fix = "put the file in place (e.g. fetch it with hf-fetch)";
    return r;
  }
  if (g.sha256.empty()) {
    r.status = Status::pass;
    r.reason = g.path + " exists";
    return r;
  }
  std::string got;
  try {
    got = util::sha256_file(g.path);
  } catch (const Error& e) {
    r.reason = e.what();
    return r;
  }
  r.data["sha256"] = got;
  if (got == g.sha256) {
    r.status = Status::pass;
    r.reason = g.path + " has sha256 " + got;
  } else {
    r.reason = g.path + " has sha256 " + got + ", expected " + g.sha256;
    r.fix = "fetch the file again; it is not the expected content";
  }
  return r;
}

}  // namespace provkit::host::detail
