"""What memory tells the apps that build on it, without knowing them.

`memory` never imports `skills` (docs/architecture.md, "Layers"); apps that
keep something derived from claims connect here instead.
"""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the deletion's transaction once claims are erased or
# invalidated, with `tenant_id`, `claim_ids` (strings) and `deletion_id`.
# Receivers write in that same transaction, so a deletion and what it flags
# commit or roll back together.
claims_forgotten = Signal()
