// The JSON of the download domain's results (downloader.hpp).
#include "provkit/download/downloader.hpp"

namespace provkit::download {

std::string mismatch_name(Mismatch m) {
  switch (m) {
    case Mismatch::size: return state_name(FileState::size_mismatch);
    case Mismatch::sha256: return state_name(FileState::sha256_mismatch);
    case Mismatch::git_oid: return state_name(FileState::git_oid_mismatch);
    case Mismatch::none: break;
  }
  return "?";
}

std::string_view reason_name(FileFailure f) {
  switch (exit_code(f)) {
    case ExitCode::auth: return reason_name(Reason::auth);
    case ExitCode::check_failed: return reason_name(Reason::check_failed);
    default: break;
  }
  return reason_name(Reason::network);
}

ExitCode exit_code(FileFailure f) {
  switch (f) {
    case FileFailure::network:
    case FileFailure::server_error:
    case FileFailure::no_size: return ExitCode::network;
    case FileFailure::access_refused: return ExitCode::auth;
    case FileFailure::not_found:
    case FileFailure::wrong_size:
    case FileFailure::mismatch:
    case FileFailure::replaced:
    case FileFailure::not_verified: break;
  }
  return ExitCode::check_failed;
}

nlohmann::json to_json(const Job& job, const JobResult& r) {
  nlohmann::json f = {{"size", job.spec.size}, {"bytes_transferred", r.bytes_transferred}};
  if (!r.sha256.empty()) f["sha256"] = r.sha256;
  switch (r.outcome) {
    case Outcome::present: f["verified_by"] = r.from_stamp ? "stamp" : "hash"; break;
    case Outcome::downloaded: break;
    case Outcome::mismatch:
      f["rejected"] = r.rejected.string();
      if (job.spec.sha256) f["expected_sha256"] = *job.spec.sha256;
      break;
    case Outcome::failed: f["exit_code"] = static_cast<int>(r.reason ? r.reason->code() : ExitCode::network); break;
  }
  return f;
}

nlohmann::json to_json(const AssembleResult& r) {
  nlohmann::json f = {{"size", r.size}, {"sha256", r.sha256}};
  if (r.outcome == AssembleOutcome::mismatch) f["rejected"] = r.rejected.string();
  return f;
}

}  // namespace provkit::download
