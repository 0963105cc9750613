"""Demo data for `make run`: a tenant, its people, an agent token, and work in every queue."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from accounts.models import AgentToken, AuthorityCeiling, Role
from accounts.services import agent_token_create, member_create, subject_link, tenant_create
from config.demo.memory import DemoTokens, seed_memory, seed_memory_lifecycle
from config.demo.recall import seed_recall_desk
from config.demo.receipts import seed_receipts
from config.demo.skills import seed_skills

DEMO_TENANT = "demo"
DEMO_PASSWORD = "memdesk-demo"  # noqa: S105 - printed in the README on purpose
DEMO_PEOPLE = [
    ("editor", Role.EDITOR),
    ("editor2", Role.EDITOR),
    ("admin", Role.ADMIN),
    ("admin2", Role.ADMIN),
    # The second approver a capability increase needs (the demo's v2 adds one).
    ("admin3", Role.ADMIN),
    ("auditor", Role.AUDITOR),
    ("alice", Role.USER),
]
DEMO_AGENT = "demo-agent"
# A chat front-end that talks to the user and a tool runner: an admin gives such
# tokens their ceiling when making them (docs/trust.md).
DEMO_CHAT = "demo-chat-frontend"
DEMO_TOOLS = "demo-tool-runner"


class Command(BaseCommand):
    help = "Load the demo tenant once; later runs leave it alone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", default=DEMO_TENANT)
        parser.add_argument(
            "--token-file",
            default="",
            help="Also write the demo agent token to this file (mode 0600), so it is not "
            "lost among the worker's start-up lines.",
        )

    def handle(self, *args: object, tenant: str, token_file: str = "", **options: object) -> None:
        demo, _ = tenant_create(slug=tenant, name="Demo workspace")
        if AgentToken.objects.filter(tenant=demo, name=DEMO_AGENT).exists():
            self.stdout.write(f"demo data already loaded in {demo.slug}")
            return
        with transaction.atomic():
            members = {
                username: member_create(
                    tenant=demo, username=username, password=DEMO_PASSWORD, role=role
                )
                for username, role in DEMO_PEOPLE
            }
            subject_link(tenant=demo, user=members["alice"].user, subject_key="user:alice")
            # The demo's agents act for its admin, who answers for what they do.
            owner = members["admin"].user
            issued = agent_token_create(tenant=demo, name=DEMO_AGENT, owner=owner)
            tokens = DemoTokens(
                agent=issued.token,
                chat=agent_token_create(
                    tenant=demo,
                    name=DEMO_CHAT,
                    max_authority=AuthorityCeiling.USER_EXPLICIT,
                    owner=owner,
                ).token,
                tools=agent_token_create(
                    tenant=demo,
                    name=DEMO_TOOLS,
                    max_authority=AuthorityCeiling.TOOL_VERIFIED,
                    owner=owner,
                ).token,
            )
            seed_memory(tenant=demo, tokens=tokens)
            seed_receipts(tenant=demo)
            # admin2 wrote the skill, so `admin` (the login the README leads with) may approve it.
            seed_skills(tenant=demo, author=members["admin2"], approver=members["admin"])
            seed_memory_lifecycle(tenant=demo, tokens=tokens)
            seed_recall_desk(tenant=demo, tokens=tokens)
        self.stdout.write(f"demo tenant {demo.slug} loaded; logins use password {DEMO_PASSWORD}")
        self.stdout.write(f"demo agent token (shown once): {issued.secret}")
        if token_file:
            path = Path(token_file)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600, exist_ok=True)
            path.chmod(0o600)
            path.write_text(issued.secret + "\n")
            self.stdout.write(f"demo agent token written to {path}")
