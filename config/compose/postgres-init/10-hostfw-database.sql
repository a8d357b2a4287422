-- Runs once, when the postgresql service initialises an empty data volume (docker-entrypoint-initdb.d).
-- The hostfw site database: its own role and database beside Temporal's `temporal` and
-- `temporal_visibility` databases on the same server. hostfw never touches Temporal's databases,
-- and Temporal's role does not own hostfw's. Change the password here AND in
-- config/compose/site.toml (site.database_url) before the first `docker compose up`.
CREATE ROLE hostfw WITH LOGIN PASSWORD 'hostfw';
CREATE DATABASE hostfw OWNER hostfw;
