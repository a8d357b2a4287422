-- The runtime layer of the host firmware catalog (`hostfw firmware-config set`), versioned.
--
-- Portable SQL only, like 0001: BIGINT/TEXT, times as unix milliseconds, no autoincrement (the
-- store assigns version = MAX + 1 and retries on a unique violation). Rows are never updated or
-- deleted: the latest version is the one in effect, older ones are the history.
CREATE TABLE firmware_config_versions (
    version  BIGINT  PRIMARY KEY,
    at_ms    BIGINT  NOT NULL,
    actor    TEXT    NOT NULL,
    document TEXT    NOT NULL,   -- the TOML document as submitted
    sha256   TEXT    NOT NULL    -- lowercase hex SHA-256 of `document`
);
