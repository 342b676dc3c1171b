#pragma once
// The one HTTP client of provkit (libcurl underneath).
//
// - Retries are a value (RetryPolicy) applied in one place: connection errors,
//   timeouts, stalls, 408, 429 (honouring Retry-After) and 5xx.
// - Redirects are followed here, not by curl, so that a bearer token is only
//   ever sent to the origin (scheme, host, port) it was given for.
// - All transfers run on one curl multi handle driven by one loop (Session):
//   requests go in, results come out through callbacks. The simple calls
//   (Client::get, Client::download_to_file) are a Session with one transfer.
// - Politeness: servers' RateLimit headers pace new requests to their origin
//   (RateLimitPacer, shared by every Session of the process), a 429 holds back
//   the whole Session, and Options::max_bytes_per_s caps its bandwidth with one
//   token bucket for all its transfers.
// - Messages never contain credentials: URLs in errors are redacted (no
//   userinfo, no query string) and the token is never part of any text.
//
// The parts, each in its own header (include just the one you need):
//   headers.hpp    header lists, raw lines, Link, Content-Range
//   ratelimit.hpp  RateLimit fields, the pacer, the bandwidth token bucket
//   retry.hpp      RetryPolicy, Retry-After
//   url.hpp        Url and origins, resolve_reference, redact_url, percent-coding
//   client.hpp     Request, Response, Options, Session, Client
#include "provkit/http/client.hpp"
#include "provkit/http/headers.hpp"
#include "provkit/http/ratelimit.hpp"
#include "provkit/http/retry.hpp"
#include "provkit/http/url.hpp"
