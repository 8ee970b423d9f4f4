#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Bearer-token gateway "g" for kco's tests: nginx (Debian's package) terminating TLS at
# https://127.0.0.1:8444 and passing to cluster b's worker (http://127.0.0.1:8085) only the
# requests that carry `Authorization: Bearer <token>`; any other gets 401, as an API gateway in
# front of Kafka Connect answers. A second, read-only token passes GET requests only: any
# other method gets 403, as for a user without write rights. Connect itself has no
# bearer-token extension: this is how bearer tokens meet a real worker.
#
# Usage: scripts/bearer-gateway.sh <command>
#   up       install nginx if missing (as root, with apt-get; its service is not started),
#            make a CA and a server certificate (openssl) and a token, start nginx, wait until
#            the worker answers through it. Harmless when already up.
#   down     stop nginx and delete the gateway's files
#   status   show nginx's pid and URL (exit 0 only when it runs)
#
# Needs `scripts/local-connect.sh up` first (cluster b's worker).
#
# Writes <state>/gateway/: ca.pem (trust it), token, token-ro (read-only), kco.yaml (a snippet
# for cluster g), and
# nginx's config, certificates and logs.
#
# Environment:
#   KCO_GATEWAY_PORT      the gateway's HTTPS port (default 8444)
#   KCO_GATEWAY_UPSTREAM  the worker behind it (default cluster b: http://127.0.0.1:8085, or KCO_TESTBED_B_PORT)
#   KCO_TESTBED_DIR       as for scripts/local-connect.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/daemon.sh
source "$ROOT/scripts/lib/daemon.sh"
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
GW="$STATE/gateway"
HOST=127.0.0.1
PORT=${KCO_GATEWAY_PORT:-8444}
UPSTREAM=${KCO_GATEWAY_UPSTREAM:-http://127.0.0.1:${KCO_TESTBED_B_PORT:-8085}}

NGINX=
find_nginx() {
  NGINX=$(command -v nginx || true)
  [[ -z $NGINX && -x /usr/sbin/nginx ]] && NGINX=/usr/sbin/nginx
  [[ -n $NGINX ]]
}

# nginx from Debian's packages. Debian starts a package's service when it installs it (it
# would listen on port 80 of every interface): a policy-rc.d that refuses keeps it stopped.
ensure_nginx() {
  find_nginx && return 0
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    die "nginx not found (Debian: apt-get install nginx-light)"
  fi
  say "installing nginx-light with apt-get (its service is not started)"
  local policy=/usr/sbin/policy-rc.d ours=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    ours=1
  fi
  local rc=0
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends nginx-light >&2 ||
    { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends nginx-light >&2; } ||
    rc=$?
  ((ours)) && rm -f "$policy"
  ((rc == 0)) || die "apt-get could not install nginx-light"
  find_nginx || die "no nginx after apt-get installed nginx-light"
}

live_pid() {
  local pid
  [[ -f $GW/nginx.pid ]] || return 1
  pid=$(<"$GW/nginx.pid")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$GW/nginx.conf" || return 1
  echo "$pid"
}

# A random token in $1 (mode 600).
new_token() {
  head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=' >"$1"
  chmod 600 "$1"
}

# A CA and a server certificate for 127.0.0.1/localhost signed by it; a random token and a
# read-only one.
make_files() {
  if [[ -s $GW/token ]]; then
    [[ -s $GW/token-ro ]] || new_token "$GW/token-ro"
    return 0
  fi
  command -v openssl >/dev/null || die "openssl not found (Debian: apt-get install openssl)"
  mkdir -p "$GW/logs" "$GW/tmp"
  chmod 700 "$GW"
  (
    cd "$GW"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days 30 \
      -subj "/CN=kco gateway test CA" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr \
      -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
      -out server.pem -days 30 -extfile server.ext 2>/dev/null
    rm -f server.csr server.ext ca.srl
  )
  new_token "$GW/token"
  new_token "$GW/token-ro"
  chmod 600 "$GW/ca-key.pem" "$GW/server-key.pem"
}

write_config() {
  local token ro
  token=$(<"$GW/token")
  ro=$(<"$GW/token-ro")
  cat >"$GW/nginx.conf" <<EOF
# The bearer-token gateway of kco's test bed (scripts/bearer-gateway.sh).
worker_processes 1;
daemon on;
pid $GW/nginx.pid;
error_log $GW/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log $GW/logs/access.log;
  client_body_temp_path $GW/tmp/body;
  proxy_temp_path $GW/tmp/proxy;
  fastcgi_temp_path $GW/tmp/fastcgi;
  uwsgi_temp_path $GW/tmp/uwsgi;
  scgi_temp_path $GW/tmp/scgi;
  # Offsets of a wide connector are megabytes: held in memory, never spooled to disk.
  client_max_body_size 256m;
  client_body_buffer_size 256m;
  proxy_buffering off;
  map \$http_authorization \$bearer_ok {
    "Bearer $token" 1;
    "Bearer $ro" 2;
    default 0;
  }
  # The read-only token may only read.
  map "\$bearer_ok:\$request_method" \$write_refused {
    "2:GET" 0;
    "~^2:" 1;
    default 0;
  }
  server {
    listen $HOST:$PORT ssl;
    ssl_certificate $GW/server.pem;
    ssl_certificate_key $GW/server-key.pem;
    location / {
      default_type application/json;
      if (\$bearer_ok = 0) {
        add_header WWW-Authenticate 'Bearer realm="kco-testbed"' always;
        return 401 '{"error_code":401,"message":"a valid bearer token is required"}';
      }
      if (\$write_refused) {
        return 403 '{"error_code":403,"message":"this token may only read (GET)"}';
      }
      proxy_set_header Authorization "";
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_read_timeout 120s;
      proxy_pass $UPSTREAM;
    }
  }
}
EOF
  cat >"$GW/kco.yaml" <<EOF
clusters:
  g:
    urls: [https://$HOST:$PORT]
    auth:
      bearer: {token: "\${env:KCO_G_TOKEN}"}
    tls: {caFile: $GW/ca.pem}
EOF
}

ready() {
  curl -fsS -m 5 -o /dev/null --cacert "$GW/ca.pem" -H "Authorization: Bearer $(<"$GW/token")" \
    "https://$HOST:$PORT/connectors" 2>/dev/null
}

cmd_up() {
  if live_pid >/dev/null && ready; then
    say "already up: https://$HOST:$PORT"
    return 0
  fi
  curl -fsS -m 5 -o /dev/null "$UPSTREAM/" 2>/dev/null ||
    die "no worker answers at $UPSTREAM: run scripts/local-connect.sh up first"
  ensure_nginx
  make_files
  write_config
  "$NGINX" -t -q -c "$GW/nginx.conf" -p "$GW/" -g "user $(id -un);" 2>&1 | grep -v "^$" >&2 || true
  without_lock "$NGINX" -c "$GW/nginx.conf" -p "$GW/" -g "user $(id -un);" ||
    die "nginx did not start; see $GW/logs/error.log"
  local _
  for _ in $(seq 100); do
    ready && break
    sleep 0.1
  done
  ready || die "the gateway does not pass requests to $UPSTREAM; see $GW/logs/error.log"
  say "up: https://$HOST:$PORT -> $UPSTREAM (bearer token in $GW/token)"
  cat "$GW/kco.yaml"
}

cmd_down() {
  local pid
  if pid=$(live_pid); then
    say "stopping nginx (pid $pid)"
    stop_daemon "$pid" QUIT
  fi
  rm -rf "$GW"
}

cmd_status() {
  local pid
  if pid=$(live_pid); then
    printf '  %-8s pid %-7s https://%s:%s -> %s  (cluster g)\n' nginx "$pid" "$HOST" "$PORT" "$UPSTREAM"
    return 0
  fi
  printf '  %-8s stopped\n' gateway
  return 1
}

service_main "$0" "${1:-}"
