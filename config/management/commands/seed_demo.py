"""Demo data for `make run`: a tenant, its people, an agent token, and work in every queue."""

from __future__ import annotations

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
    ("auditor", Role.AUDITOR),
    ("alice", Role.USER),
]
DEMO_AGENT = "demo-agent"
# A chat front-end that talks to the user and a tool runner: an admin gives such
# tokens their ceiling when making them (DESIGN.md, trust model).
DEMO_CHAT = "demo-chat-frontend"
DEMO_TOOLS = "demo-tool-runner"


class Command(BaseCommand):
    help = "Load the demo tenant once; later runs leave it alone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", default=DEMO_TENANT)

    def handle(self, *args: object, tenant: str, **options: object) -> None:
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
            issued = agent_token_create(tenant=demo, name=DEMO_AGENT)
            tokens = DemoTokens(
                agent=issued.token,
                chat=agent_token_create(
                    tenant=demo, name=DEMO_CHAT, max_authority=AuthorityCeiling.USER_EXPLICIT
                ).token,
                tools=agent_token_create(
                    tenant=demo, name=DEMO_TOOLS, max_authority=AuthorityCeiling.TOOL_VERIFIED
                ).token,
            )
            seed_memory(tenant=demo, tokens=tokens)
            seed_receipts(tenant=demo)
            seed_skills(tenant=demo, author=members["admin"], approver=members["admin2"])
            seed_memory_lifecycle(tenant=demo, tokens=tokens)
            seed_recall_desk(tenant=demo, tokens=tokens)
        self.stdout.write(f"demo tenant {demo.slug} loaded; logins use password {DEMO_PASSWORD}")
        self.stdout.write(f"demo agent token (shown once): {issued.secret}")
