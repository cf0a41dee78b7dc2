#!/bin/sh
# Makes the compose team's secrets in ./secrets (mode 0600): the server's token, the team
# secret (64 hex digits), the Redis URL and Postgres' password (and, as an env file, the same
# password for the replicas' ledger). Run once; it keeps what exists.
set -eu
cd "$(dirname "$0")"
umask 077
mkdir -p secrets
hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }
[ -f secrets/token ] || printf 'kp-%s\n' "$(hex 24)" > secrets/token
[ -f secrets/team_secret ] || printf '%s\n' "$(hex 32)" > secrets/team_secret
[ -f secrets/redis_url ] || printf 'redis://redis:6379\n' > secrets/redis_url
[ -f secrets/postgres_password ] || printf '%s\n' "$(hex 24)" > secrets/postgres_password
# The same password for the replicas, as the config's $KEYPOOL_LEDGER_PASSWORD (an env_file).
[ -f secrets/ledger.env ] || printf 'KEYPOOL_LEDGER_PASSWORD=%s\n' "$(cat secrets/postgres_password)" > secrets/ledger.env
# The containers run as user 65532, and compose mounts the files as they are: they must be
# that user's to read (as root: theirs, mode 0600; otherwise readable by all, which the server
# warns about).
if [ "$(id -u)" -eq 0 ]; then chown 65532:65532 secrets/*; else chmod 0644 secrets/*; fi
echo "secrets/ ready"
