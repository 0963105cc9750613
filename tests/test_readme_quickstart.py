"""The README's quickstart runs as written, against the demo data `make run` loads.

Each code block under "Quickstart" is run verbatim — the shell block with bash, the
Python block with this interpreter — against a live server holding the demo tenant,
with the demo agent's token in `TOKEN` and the server's address in `MEMDESK_URL`
(the two things the blocks read from the environment, as a reader's shell would
have them). Then the database is asked whether each step did what the README says.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from memory.claims.models import Claim, Event
from memory.receipts.models import Checkpoint, Receipt
from reviews.models import ReviewItem

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
QUICKSTART = README.split("\n## Quickstart", 1)[1].split("\n## ", 1)[0]
BLOCKS = re.findall(r"```(sh|python)\n(.*?)```", QUICKSTART, flags=re.DOTALL)


@pytest.fixture
def demo(live_server, tmp_path) -> dict[str, str]:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    token = re.search(r"\b(mdk_\S+)", out.getvalue())
    assert token is not None, out.getvalue()
    env = {**os.environ, "MEMDESK_URL": live_server.url, "TOKEN": token.group(1)}
    env.pop("PYTHONWARNINGS", None)
    return env


def _run(command: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_quickstart_has_a_shell_and_a_python_block():
    # A split that found nothing would let the tests below pass vacuously.
    assert [kind for kind, _ in BLOCKS] == ["sh", "python"]


def test_the_shell_quickstart_runs_verbatim(demo, tmp_path):
    shell = next(code for kind, code in BLOCKS if kind == "sh")
    printed = _run(["bash", "-e", "-o", "pipefail", "-c", shell], demo, tmp_path).split()

    # The gate's verdict, the receipt's states and the recovery decision, as printed.
    assert printed[0] == "needs_review"
    assert printed[-4:] == ["submitted", "succeeded", "published", "no_op"]
    event = Event.objects.get(text="I have started learning the cello")
    claim = Claim.objects.get(predicate="instrument_learning")
    assert claim.status == "candidate"
    assert claim.sources.filter(event=event).exists()
    assert ReviewItem.objects.filter(
        queue="candidates", target_id=str(claim.pk), status="open"
    ).exists()
    receipt = Receipt.objects.get(intent={"title": "Alice learns the cello"})
    assert (receipt.state, receipt.external_id) == ("succeeded", "a-8812")
    checkpoint = Checkpoint.objects.get(task_key__startswith="publish-run-")
    assert checkpoint.effects == [receipt.pk]


def test_the_python_quickstart_runs_verbatim(demo, tmp_path):
    code = next(code for kind, code in BLOCKS if kind == "python")
    printed = _run([sys.executable, "-c", code], demo, tmp_path).splitlines()

    assert printed[0].startswith("needs_review ")
    assert printed[-1] == "no_op"
    receipt = Receipt.objects.get(external_id="a-8813")
    assert receipt.state == "succeeded"
    assert Claim.objects.filter(predicate="instrument_learning", status="candidate").exists()


def test_the_skills_page_walks_the_demo_version_to_a_full_matrix(demo, tmp_path):
    # docs/skills.md's walk-through, verbatim: the waiting version's missing run, posted.
    from accounts.models import Tenant
    from skills.models import SkillVersion
    from skills.selectors import evaluation_matrix

    page = (ROOT / "docs" / "skills.md").read_text()
    walk = page.split("\n## The demo's waiting version", 1)[1]
    (shell,) = re.findall(r"```sh\n(.*?)```", walk, flags=re.DOTALL)
    version = SkillVersion.objects.get(skill__slug="pdf-forms", number=2)
    tenant = Tenant.objects.get(slug="demo")
    assert not evaluation_matrix(tenant=tenant, version=version).complete

    _run(["bash", "-e", "-o", "pipefail", "-c", shell], demo, tmp_path)

    assert evaluation_matrix(tenant=tenant, version=version).complete
