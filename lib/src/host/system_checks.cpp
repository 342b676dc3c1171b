// envcheck's host gates: free disk space (--disk), a free TCP port
// (--port-free), a file present with its sha256 (--file).
#include "detail.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/size.hpp"
#include "system.hpp"

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

Result port_check(const PortGate& gate) {
  const int port = gate.port;
  const std::string p = std::to_string(port);
  const bool any = gate.host == "0.0.0.0";
  const std::string where = any ? "port " + p : gate.host + " port " + p;
  const std::string name = "port-free " +
                           (any ? p
                                : (gate.host.find(':') != std::string::npos ? "[" + gate.host + "]" : gate.host) + ":" +
                                      p);
  std::string why;
  if (host::port_free(gate.host, port, why))
    return {.name = name,
            .status = Status::pass,
            .rule = Rule::port_bindable,
            .reason = where + " is free",
            .data = {{"port", port}, {"host", gate.host}}};
  Result r{.name = name,
           .status = Status::fail,
           .rule = Rule::port_bindable,
           .reason = where + " cannot be bound: " + why,
           .fix = "stop what listens there (ss -ltnp 'sport = :" + p + "') or choose another port",
           .data = {{"port", port}, {"host", gate.host}}};
  if (auto h = host::port_holder(port)) {
    r.data["holder_address"] = h->address;
    if (h->pid) {
      r.reason += "; held by PID " + std::to_string(h->pid) + " (" + h->command + ") listening on " + h->address;
      r.fix = "stop PID " + std::to_string(h->pid) + " (" + h->command + "; ss -ltnp 'sport = :" + p +
              "' shows it), or choose another port";
      r.data["holder_pid"] = h->pid;
      r.data["holder_command"] = h->command;
    } else {
      r.reason += "; a socket listens on " + h->address + ", its process is not visible to this user (root sees it)";
    }
  }
  return r;
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
