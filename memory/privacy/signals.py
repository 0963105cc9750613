"""What memory tells the apps that build on it, without knowing them.

`memory` never imports `skills` (docs/architecture.md, "Layers"); apps that
keep something derived from claims connect here instead.
"""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the deletion's transaction once claims are erased or
# invalidated, with `tenant_id`, `claim_ids` (strings), `deletion_id` and
# `terms`: the deleted content's distinctive words, so a receiver can take
# them out of what it derived. The words live only in the worker's memory:
# a receiver must not store them. Receivers write in that same transaction,
# so a deletion and what it flags or scrubs commit or roll back together.
claims_forgotten = Signal()
