"""`manage.py embed_backfill`: embed every active claim and ledger event still without a
vector, now."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.claims.embedders import embedder, semantic_mode
from memory.claims.services.embeddings import (
    claims_embed_pending,
    claims_embed_refresh,
    events_embed_pending,
)


class Command(BaseCommand):
    help = (
        "Embed, in this process and in batches, every active claim and every ledger event "
        "with text that has no vector of the configured model (after enabling semantic "
        "recall, switching models or upgrading). Idempotent: a second run embeds nothing. "
        "Prints how many claims and events it embedded."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--limit", type=int, default=1_000_000, help="stop after this many")
        parser.add_argument(
            "--refresh",
            action="store_true",
            help="also embed again every active claim whose embedded text has changed "
            "(after an upgrade that embeds claims differently)",
        )

    def handle(self, *args: Any, limit: int, refresh: bool, **options: Any) -> None:
        model = embedder()
        if model is None:
            raise CommandError("Semantic recall is off (MEMDESK_EMBEDDER=none).")
        embedded = claims_embed_pending(limit=limit)
        if refresh:
            embedded += claims_embed_refresh()
        events = events_embed_pending(limit=limit)
        self.stdout.write(
            json.dumps(
                {
                    "model": model.model,
                    "semantic": semantic_mode(),
                    "embedded": embedded,
                    "events_embedded": events,
                }
            )
        )
