"""Give every published version a discovery vector of the configured embedder."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from skills import services


class Command(BaseCommand):
    help = (
        "Compute the discovery vector of every published or deprecated skill version that "
        "has none of the configured embedder (versions published before vectors were kept, "
        "or after a change of embedder). Publishing computes it for new versions."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        done = services.skill_versions_embed()
        self.stdout.write(f"embedded {done} skill version(s)")
