-- A change marker on the rows the scheduler's view is built from, so a reader holding those rows
-- in memory (the scheduler's SiteViewCache) re-reads only the rows changed since its last read,
-- through an index, instead of every row.
--
-- `view_revision` holds one counter. Every write to a `machines` or `explored_reports` row adds 1
-- to it as the first statement of its transaction and stamps the rows it changes with the new
-- value (`rev`; store/src/revisions.rs). The counter's row lock (PostgreSQL) or the database write
-- lock (SQLite) is held until commit, so transactions commit in `rev` order: a reader that read
-- the counter as N has every row stamped up to N visible, and a later `WHERE rev > N` finds
-- exactly what was written since. Rows stored before this migration have rev 0: a reader reads
-- them on its first, whole read.
--
-- Portable SQL only, like 0001.
CREATE TABLE view_revision (
    id    BIGINT NOT NULL PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO view_revision (id, value) VALUES (1, 0);

ALTER TABLE machines ADD COLUMN rev BIGINT NOT NULL DEFAULT 0;
ALTER TABLE explored_reports ADD COLUMN rev BIGINT NOT NULL DEFAULT 0;
CREATE INDEX machines_rev ON machines (rev);
CREATE INDEX explored_reports_rev ON explored_reports (rev);
