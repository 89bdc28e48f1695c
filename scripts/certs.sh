#!/usr/bin/env bash
# Makes a local CA and one certificate per gateway process for gRPC over mutual TLS
# (docs/decisions/0230), with openssl. Safe to run again: what exists is kept.
set -euo pipefail
NAMES_DEFAULT="edge ledger managed-ai jobs messaging files"
usage() {
  cat <<'USAGE'
Usage: ./scripts/certs.sh [--dir DIR] [--namespace NS] [--force]

Writes a local certificate authority and, for each gateway process (edge, ledger,
managed-ai, jobs, messaging, files), a certificate it signed, for gRPC over mutual
TLS between them (docs/decisions/0230):
  DIR/ca.crt, DIR/ca.key          the CA (its key signs nothing else)
  DIR/<name>.crt, DIR/<name>.key  each process's certificate and key, for both its
                                  server and its clients; names: <name>,
                                  <name>.<NS>.svc, <name>.<NS>.svc.cluster.local,
                                  localhost, 127.0.0.1, ::1
Point GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY of each process at them.
What exists is kept (a run on a set that exists does nothing); a missing or
expiring certificate is made again; a new CA makes every certificate again.
The directory is 0700; generated files stay out of git (.certs/, .stack/).

  ./scripts/stack.sh and the test kit run it themselves.
  docker compose:          ./scripts/certs.sh                (writes .certs/)
  kubectl (overlays/dev):  ./scripts/certs.sh --dir deploy/overlays/dev/tls

Options:
  --dir DIR        where (default .certs in the repository)
  --namespace NS   the Kubernetes namespace in the names (default ai-gateway)
  --force          make a new CA and every certificate
Needs openssl (Debian: apt-get install openssl).
USAGE
}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$ROOT/.certs"
namespace="ai-gateway"
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --dir) dir="${2:?--dir needs a value}"; shift 2 ;;
    --namespace) namespace="${2:?--namespace needs a value}"; shift 2 ;;
    --force) force=1; shift ;;
    *) echo "certs.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! command -v openssl >/dev/null 2>&1; then
  echo "certs.sh: openssl is missing (Debian: apt-get install openssl)" >&2
  exit 1
fi

mkdir -p "$dir"
chmod 0700 "$dir"
cd "$dir"
umask 077
DAYS=825
# Valid for at least another 30 days.
fresh() { [ -s "$1" ] && openssl x509 -in "$1" -noout -checkend $((30 * 86400)) >/dev/null 2>&1; }
ec_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

made_ca=0
if [ "$force" = 1 ] || ! fresh ca.crt || [ ! -s ca.key ]; then
  ec_key ca.key
  openssl req -x509 -new -key ca.key -out ca.crt -days "$DAYS" -sha256 -subj "/CN=AI gateway gRPC CA (local $(date -u +%Y%m%d%H%M%S))" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  made_ca=1
fi

made=()
for name in $NAMES_DEFAULT; do
  if [ "$made_ca" = 0 ] && fresh "$name.crt" && [ -s "$name.key" ] && openssl verify -CAfile ca.crt "$name.crt" >/dev/null 2>&1; then continue; fi
  ec_key "$name.key"
  openssl req -new -key "$name.key" -out "$name.csr" -subj "/CN=$name" 2>/dev/null
  cat >"$name.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:$name,DNS:$name.$namespace.svc,DNS:$name.$namespace.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:::1
EXT
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" -days "$DAYS" -sha256 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
  made+=("$name")
done
# Readable by the container user a bind mount hands them to (compose); the 0700
# directory keeps other users of this machine out.
chmod 0644 ./*.crt ./*.key
chmod 0600 ca.key
if [ "$made_ca" = 1 ] || [ ${#made[@]} -gt 0 ]; then
  echo "certs.sh: ${made_ca/1/new CA and }certificates for ${made[*]:-nothing} in $dir" | sed 's/ 0 / /' >&2
fi
