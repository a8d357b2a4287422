#!/bin/sh
# Runs once, when the postgresql service initialises an empty data volume
# (docker-entrypoint-initdb.d). The hostfw site database: its own role and database beside
# Temporal's `temporal` and `temporal_visibility` databases on the same server. hostfw never
# touches Temporal's databases, and Temporal's role does not own hostfw's.
# The password is the Docker secret hostfw_db_password (HOSTFW_DB_PASSWORD in .env): psql reads
# the secret file itself (\set ... `cat`), so it is in no file, argument list or log.
set -eu
: "${HOSTFW_DB_PASSWORD_FILE:?HOSTFW_DB_PASSWORD_FILE is not set}"
if [ ! -s "$HOSTFW_DB_PASSWORD_FILE" ]; then
  echo "the hostfw_db_password secret is empty (set HOSTFW_DB_PASSWORD in .env)" >&2
  exit 1
fi
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres <<'SQL'
\set pw `cat "$HOSTFW_DB_PASSWORD_FILE"`
CREATE ROLE hostfw WITH LOGIN PASSWORD :'pw';
CREATE DATABASE hostfw OWNER hostfw;
SQL
