-- Live configuration (issue 27 item 6): a request to re-read the site config file, and each
-- worker's answer to it.
--
-- `config_reload_requests`: one row per request, numbered site-wide from 1 (`MAX(id) + 1`, like
-- the audit log). `worker` is NULL for a request every worker answers (`hostfw config reload`),
-- or the identity of the one worker that answers it (a SIGHUP to that worker, recorded by it).
--
-- `config_reload_results`: one row per request and worker identity: `outcome` is `applied`,
-- `unchanged`, `refused` (a key that needs a restart changed; `keys` names them) or `invalid`
-- (the file does not load; `problem` says why). `keys` is a JSON array of dotted keys.
--
-- `worker_presence`: when each worker identity was last seen polling for requests (by the
-- database's clock), so `hostfw config reload` knows which workers to wait for.
--
-- Portable SQL only, like 0001.
CREATE TABLE config_reload_requests (
    id              BIGINT NOT NULL PRIMARY KEY,
    actor           TEXT   NOT NULL,
    worker          TEXT,
    requested_at_ms BIGINT NOT NULL
);

CREATE TABLE config_reload_results (
    request_id      BIGINT NOT NULL,
    worker          TEXT   NOT NULL,
    outcome         TEXT   NOT NULL,
    keys            TEXT   NOT NULL,
    problem         TEXT,
    answered_at_ms  BIGINT NOT NULL,
    PRIMARY KEY (request_id, worker)
);

CREATE TABLE worker_presence (
    worker          TEXT   NOT NULL PRIMARY KEY,
    started_at_ms   BIGINT NOT NULL,
    seen_at_ms      BIGINT NOT NULL
);
