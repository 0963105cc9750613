"""`manage.py mcp`: memdesk's MCP server (memdesk-mcp) pointed at this instance."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = (
        "Serve memdesk's agent tools over MCP (stdio, or streamable HTTP with --transport), "
        "talking to this instance's API with the agent token in MEMDESK_TOKEN. The token "
        "is never an argument: other users of the machine can read a process's arguments."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url",
            default=os.environ.get("MEMDESK_URL", "http://127.0.0.1:8000"),
            help="this instance's address (default: MEMDESK_URL, else make run's address)",
        )
        parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)

    def handle(self, *args: Any, **options: Any) -> None:
        if not os.environ.get("MEMDESK_TOKEN"):
            raise CommandError(
                "Set MEMDESK_TOKEN to an agent token (manage.py create_agent_token)."
            )
        from memdesk_client.mcp_server import main

        main(
            [
                "--url",
                options["url"],
                "--transport",
                options["transport"],
                "--host",
                options["host"],
                "--port",
                str(options["port"]),
            ]
        )
