# Sourced by benchmarks: start_nginx ROOT [LIMIT_RATE] -> sets NGINX_URL, NGINX_PID.
# nginx from Debian (nginx-light) serves ROOT on an ephemeral loopback port,
# with sendfile, Range support, and an optional per-connection limit_rate
# (e.g. 40m) so that parallel connections matter as they do on a real CDN.
# NGINX_HOST: the loopback address to listen on (default 127.0.0.1; 127.0.0.2 for a CDN on another host).
start_nginx() {
  local root=$1 rate=${2:-0}
  local dir; dir=$(mktemp -d /tmp/provkit-nginx.XXXXXX)
  local host=${NGINX_HOST:-127.0.0.1}
  local port; port=$(python3 -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$host")
  mkdir -p "$dir/logs"
  cat >"$dir/nginx.conf" <<CONF
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections 1024; }
http {
  access_log $dir/logs/access.log;
  sendfile on; tcp_nopush on;
  types { application/octet-stream bin; }
  default_type application/octet-stream;
  client_body_temp_path $dir/body; proxy_temp_path $dir/proxy; fastcgi_temp_path $dir/fcgi;
  uwsgi_temp_path $dir/uwsgi; scgi_temp_path $dir/scgi;
  server {
    listen $host:$port;
    root $root;
    limit_rate $rate;
    location / { }
  }
}
CONF
  nginx -c "$dir/nginx.conf" -p "$dir" -g 'daemon off;' &
  NGINX_PID=$!
  NGINX_URL="http://$host:$port"
  NGINX_DIR=$dir
  for _ in $(seq 50); do curl -s -o /dev/null "$NGINX_URL/" && return 0; sleep 0.1; done
  echo "nginx did not start (see $dir/logs/error.log)" >&2; return 1
}
stop_nginx() { [[ -n ${NGINX_PID:-} ]] || return 0; kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null || true; }

# An origin blob of MIB pseudo-random bytes (AES-CTR keystream of SEED), written to
# $work/origin/blobs under its sha256, the name nginx serves it by; prints the sha256.
make_blob() {  # make_blob MIB SEED -> prints the sha256
  local tmp=$work/origin/blobs/tmp.$2 sha
  sha=$(head -c $(($1 * 1048576)) < <(openssl enc -aes-128-ctr -nosalt -pass "pass:provkit-$2" -in /dev/zero 2>/dev/null) |
    tee "$tmp" | openssl dgst -sha256 -r | cut -d' ' -f1)
  mv "$tmp" "$work/origin/blobs/$sha"
  echo "$sha"
}
