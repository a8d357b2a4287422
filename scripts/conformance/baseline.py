#!/usr/bin/env python3
"""The conformance baseline: what DMTF's service validator finds in each captured tree as captured.

Serves each tree of `<shared>/redfish/vendor-mockups/<tree>` with `sushy-static` (a plain static
server: GETs only, no sessions) on a free loopback port, runs `service_validator.py` against it
(Basic auth, the DMTF CSDL of `<shared>/redfish/csdl`), and writes the failure keys to
`bmc-sim/tests/conformance/<tree>.txt` and the URIs it validated to `<tree>.resources`. Those
files are committed: the conformance test of bmc-sim (`bmc-sim/tests/conformance.rs`) fails on
any failure of a profile BMC that is not in its tree's `.txt`, and on any resource of its
`.resources` that the validator did not reach on the BMC. Rerun this after changing the
validator version or the trees:

    scripts/conformance_baseline.sh [tree ...]     # default: every tree

Run from the repository root with the project's venv (`.tools/bin/python`).
"""

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TREES = ["dell", "supermicro", "nvidia_viking", "nvidia_gb200"]
REPO = Path(__file__).resolve().parents[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=20.0):
    """Poll until the server accepts connections (or has died, or the deadline passed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sushy-static exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sushy-static did not listen on port {port} within {seconds} s")


def baseline(tree, shared, out_dir, work):
    tree_dir = shared / "redfish/vendor-mockups" / tree / "redfish/v1"
    if not (tree_dir / "index.json").is_file():
        raise RuntimeError(f"{tree_dir} is absent")
    bin_dir = Path(sys.executable).parent
    port = free_port()
    log = open(work / f"{tree}.sushy.log", "w")
    server = subprocess.Popen(
        [str(bin_dir / "sushy-static"), "-i", "127.0.0.1", "-p", str(port), "-m", str(tree_dir)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_listening(port, server)
        started = time.monotonic()
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("service_validator.py")),
                "--rhost", f"http://127.0.0.1:{port}",
                "--schema-dir", str(shared / "redfish/csdl"),
                "--report-dir", str(work / tree),
                "--out", str(out_dir / f"{tree}.txt"),
            ],
            check=True,
        )
        print(f"baseline: {tree}: {time.monotonic() - started:.0f} s")
    finally:
        server.terminate()
        server.wait()
        log.close()
    (out_dir / f"{tree}.txt.messages").unlink()
    (out_dir / f"{tree}.txt.resources").replace(out_dir / f"{tree}.resources")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", default=TREES)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"), help="the shared/ folder")
    ap.add_argument("--out-dir", default=str(REPO / "bmc-sim/tests/conformance"))
    args = ap.parse_args()
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="conformance-baseline-") as work:
        for tree in args.trees:
            baseline(tree, Path(args.shared), out_dir, Path(work))
    for tree in args.trees:
        count = len((out_dir / f"{tree}.txt").read_text().splitlines())
        print(f"baseline: {tree}: {count} failures -> {out_dir / (tree + '.txt')}")


if __name__ == "__main__":
    sys.exit(main())
