-- Safe catalog changes (issue 27 item 5): a runtime catalog version carries the change ticket
-- given with `--message` (NULL when none was given, and for every version stored before), and
-- whether it removes the runtime layer (`hostfw firmware-config unset`: the document is then
-- empty and the effective catalog is the static config and the firmware directory alone).
--
-- Portable SQL only, like 0001: booleans as BIGINT 0/1.
ALTER TABLE firmware_config_versions ADD COLUMN message TEXT;
ALTER TABLE firmware_config_versions ADD COLUMN removes_layer BIGINT NOT NULL DEFAULT 0;
