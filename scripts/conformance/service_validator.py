#!/usr/bin/env python3
"""Run DMTF's Redfish Service Validator against one service and write its failures as stable keys.

The validator (PyPI `redfish-service-validator`, pinned in scripts/tools.sh) is run through its
own entry point (`console_scripts.run_validator`: same traversal, same checks); this wrapper only
keeps the validator's view of the results and writes each FAIL as one line:

    <resource URI>\t<property path, or "(resource)">\t<failure class>

The URI is the one the validator followed, as the service's links spell it (the validator treats
`/redfish/v1/` and `/redfish/v1` as two resources, and so does the key); the failure class is the
text before the first ':' of the validator's message (its own "failure type", e.g. "Unknown
Property Error"). The validator records at most one result per (URI, property), so the keys are
unique, one per counted failure, and comparable between runs and between servers.

Also written: `<out>.messages` (key + full message, same order), `<out>.resources` (the URIs the
validator validated, sorted), and the validator's console output in `--report-dir` (its HTML and
Excel reports too with `--reports`: they take minutes on the DGX tree and add no finding).

Schemas: only the local CSDL folder (`--schema-dir`, read only) is used (`--skipschema`): nothing
is downloaded from dmtf.org or from the service.

Exit status: 0 when the validator ran (whatever it found), 2 when it could not run.
"""

import argparse
import contextlib
import sys
from pathlib import Path


def failure_keys(sut):
    """(key, message) of every FAIL the validator recorded, sorted by key."""
    out = []
    for uri, res in sut._resources.items():
        for prop, result in res["Results"].items():
            if result["Result"] != "FAIL":
                continue
            message = " ".join(str(result["Message"]).split())
            kind = message.split(":")[0].strip() or "Failure"
            key = "\t".join([uri, prop or "(resource)", kind])
            out.append((key, message))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rhost", required=True, help="service base URL, e.g. http://127.0.0.1:8000")
    ap.add_argument("--user", default="admin")
    ap.add_argument("--password", default="password")
    ap.add_argument("--authtype", default="Basic", choices=["Basic", "Session"])
    ap.add_argument("--schema-dir", required=True, help="folder of DMTF CSDL files (read only)")
    ap.add_argument("--report-dir", required=True, help="where the validator's logs and reports go")
    ap.add_argument("--out", required=True, help="file to write the failure keys to")
    ap.add_argument("--timeout", type=int, default=30, help="HTTP timeout per request, seconds")
    ap.add_argument(
        "--reports",
        action="store_true",
        help="also write the validator's HTML and Excel reports (minutes on a large tree)",
    )
    ap.add_argument(
        "--collectionlimit",
        nargs="+",
        default=["LogEntry", "20"],
        help="validator's collection limits: TYPE COUNT ... (its default: LogEntry 20)",
    )
    args = ap.parse_args()

    schema_dir = Path(args.schema_dir)
    if not schema_dir.is_dir():
        print(f"service_validator: schema folder {schema_dir} is absent", file=sys.stderr)
        return 2
    try:
        from redfish_service_validator import console_scripts
        from redfish_service_validator.system_under_test import SystemUnderTest
    except ImportError as e:
        print(f"service_validator: redfish-service-validator is not installed: {e}", file=sys.stderr)
        return 2

    seen = []

    class Recorded(SystemUnderTest):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            seen.append(self)

    console_scripts.SystemUnderTest = Recorded
    if not args.reports:
        # The findings are the same; only the report files are left out (on the DGX tree they
        # take longer to write than the validation itself).
        console_scripts.report.html_report = lambda *a, **kw: "(not written; --reports)"
        console_scripts.report.xlsx_report = lambda *a, **kw: "(not written; --reports)"
    report_dir = Path(args.report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    options = {
        "rhost": args.rhost,
        "user": args.user,
        "password": args.password,
        "authtype": args.authtype,
        "logdir": str(report_dir),
        "schema_directory": str(schema_dir),
        "mockup": None,
        "timeout": args.timeout,
        "ext_http_proxy": None,
        "ext_https_proxy": None,
        "serv_http_proxy": None,
        "serv_https_proxy": None,
        "payload": None,
        "collectionlimit": args.collectionlimit,
        "nooemcheck": False,
        "skipschema": True,
        "debugging": False,
    }
    console = report_dir / "console.txt"
    with open(console, "w") as log, contextlib.redirect_stdout(log):
        code, _ = console_scripts.run_validator(options)
    if not seen or (code != 0 and seen[0].pass_count == 0 and seen[0].fail_count == 0):
        print(f"service_validator: the validator did not run; see {console}", file=sys.stderr)
        print(console.read_text()[-2000:], file=sys.stderr)
        return 2
    sut = seen[0]
    failures = failure_keys(sut)
    assert len(failures) == sut.fail_count, (len(failures), sut.fail_count)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(k + "\n" for k, _ in failures))
    Path(str(out) + ".messages").write_text("".join(f"{k}\t{m}\n" for k, m in failures))
    validated = sorted(uri for uri, r in sut._resources.items() if r["Validated"])
    Path(str(out) + ".resources").write_text("".join(u + "\n" for u in validated))
    print(
        f"service_validator: {args.rhost}: {len(validated)} resources, pass {sut.pass_count}, "
        f"warn {sut.warn_count}, fail {sut.fail_count} -> {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
