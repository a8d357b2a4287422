-- BMC addresses get one canonical form, `scheme://host:port[/prefix]` (hostfw_model::BmcAddress),
-- and a bare address now means https. Rows written before that hold bare `ip:port`, which then
-- meant plain http: this migration writes that meaning down by prefixing `http://` to every stored
-- address without a scheme, in each table keyed by or referencing a BMC address (`machines`,
-- `explored_reports`; the audit log's free text is history and stays as it was written).
--
-- Portable SQL only, like 0001. The rest of the canonical form (lowercase scheme and host, explicit
-- port, no trailing slash) cannot be computed portably; `store/src/legacy_addresses.rs` finishes it
-- at startup in Rust, and refuses (changing nothing) what it cannot rewrite without changing meaning.
--
-- A bare row whose `http://` form is already stored names the same BMC as that row: it gets a
-- trailing slash (same meaning, no UNIQUE clash here) so the startup pass sees both and names them.

UPDATE machines SET bmc_address = 'http://' || bmc_address || '/'
 WHERE bmc_address NOT LIKE '%://%'
   AND EXISTS (SELECT 1 FROM machines other WHERE other.bmc_address = 'http://' || machines.bmc_address);
UPDATE machines SET bmc_address = 'http://' || bmc_address
 WHERE bmc_address NOT LIKE '%://%';

UPDATE explored_reports SET bmc_address = 'http://' || bmc_address || '/'
 WHERE bmc_address NOT LIKE '%://%'
   AND EXISTS (SELECT 1 FROM explored_reports other WHERE other.bmc_address = 'http://' || explored_reports.bmc_address);
UPDATE explored_reports SET bmc_address = 'http://' || bmc_address
 WHERE bmc_address NOT LIKE '%://%';
