-- API tokens (issue 27): bearer tokens of the hostfw API. A token is shown once, when it is
-- created, as `hfw_<id>_<secret>`; only the SHA-256 of its secret is kept. `role` is viewer,
-- operator, admin or tenant; a tenant token names the instances it may act for (`instances`, a
-- JSON list of instance ids). Revoked tokens are kept (the audit trail names them); a revoked or
-- expired token authenticates nothing.
--
-- Portable SQL only, like 0001.
CREATE TABLE api_tokens (
    id            TEXT   NOT NULL PRIMARY KEY,
    name          TEXT   NOT NULL,
    role          TEXT   NOT NULL,
    instances     TEXT   NOT NULL,
    secret_sha256 TEXT   NOT NULL,
    created_at_ms BIGINT NOT NULL,
    created_by    TEXT   NOT NULL,
    expires_at_ms BIGINT,
    revoked_at_ms BIGINT,
    revoked_by    TEXT
);
CREATE INDEX api_tokens_name ON api_tokens (name);
