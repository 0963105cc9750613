"""`make demo-agent`: the scheduled publisher against a running memdesk (`make run`).

Sets up a tenant of its own (so the figures are the demo's alone) with an agent
token, the fake blog registered as a platform and a policy for
`articles.create` (external id and the article's URL) and the blog's verifier
controls, all through memdesk's management commands; then runs the driver and
prints the agent reliability metrics beside memdesk's /metrics. The driver cannot
kill `make run`'s worker, so that fault is replaced by a dropped connection and
reported as skipped.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from memdesk_client import Desk

from examples.scheduled_publisher.approver import ConsoleApprover
from examples.scheduled_publisher.driver import Driver, read_metrics
from examples.scheduled_publisher.platform import FakeBlog
from examples.scheduled_publisher.publisher import APPROVED_OPERATION

BASE_DIR = Path(__file__).resolve().parents[2]
CONTROL_PRESENT_KEY = "control-kept"


def manage(*args: str) -> str:
    done = subprocess.run(  # noqa: S603 - memdesk's own manage.py, fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {args[0]} failed:\n{done.stderr}")
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.scheduled_publisher")
    parser.add_argument("--url", default=os.environ.get("MEMDESK_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--runs", type=int, default=14, help="scheduled runs (one fault each)")
    parser.add_argument("--tenant", default=f"publisher-{int(time.time())}")
    parser.add_argument("--metrics-token", default=os.environ.get("METRICS_TOKEN", ""))
    args = parser.parse_args()

    blog = FakeBlog().start()
    try:
        print(f"fake blog on {blog.base_url}; setting up tenant {args.tenant}", flush=True)
        manage("create_tenant", args.tenant)
        token = manage(
            "create_agent_token",
            f"--tenant={args.tenant}",
            "--name=scheduled-publisher",
            "--capability=receipts:write",
            "--capability=checkpoints:write",
        ).splitlines()[-1]
        manage(
            "register_platform",
            f"--tenant={args.tenant}",
            "--name=blog",
            f"--base-url={blog.base_url}",
            "--allow-private",
            # The blog guarantees that a 404 for a key means it never stored that write.
            "--absence-proof=status_lookup",
            "--lookup-template=articles?key={idempotency_key}",
            "--key-retention-seconds=86400",
        )
        # The verifier's negative controls: a key the blog never saw and one it holds.
        blog.keep_control(CONTROL_PRESENT_KEY)
        manage(
            "set_verifier_controls",
            f"--tenant={args.tenant}",
            "--platform=blog",
            "--known-absent-key=control-never-written",
            f"--known-present-key={CONTROL_PRESENT_KEY}",
        )
        manage(
            "set_operation_policy",
            f"--tenant={args.tenant}",
            "--platform=blog",
            "--operation=articles.create",
            "--require-external-id",
            "--evidence-field=url",
            # A failed publication with a planned take-down is undone, not escalated.
            "--compensate-on-failure",
        )
        manage(
            "set_operation_policy",
            f"--tenant={args.tenant}",
            "--platform=blog",
            f"--operation={APPROVED_OPERATION}",
            "--require-external-id",
            "--evidence-field=url",
            "--approval-required",
        )
        viewer = f"{args.tenant}-editor"
        manage(
            "create_member",
            f"--tenant={args.tenant}",
            f"--username={viewer}",
            "--password=memdesk-demo",
            "--role=editor",
        )
        # The editor approves the calls that need a person (the token has no owner, so
        # any signed-in person of the tenant is a second pair of eyes).
        approver = ConsoleApprover(args.url, viewer, "memdesk-demo")
        with Desk(args.url, token) as desk:
            driver = Driver(
                desk,
                blog,
                platform="blog",
                approver=approver,
                say=lambda line: print(line, flush=True),
            )
            report = driver.run(args.runs)
            report.memdesk = read_metrics(args.url, args.tenant, args.metrics_token)
        approver.close()
    finally:
        blog.stop()
    print()
    print("\n".join(report.lines()))
    print(f"\nthe same figures on {args.url}/dashboard/ (sign in as {viewer}, memdesk-demo)")
    return 0 if not report.mismatches and not report.wrong_decisions else 1


if __name__ == "__main__":
    raise SystemExit(main())
