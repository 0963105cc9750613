from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built without blocking writes: the claims table is the largest one agents write to.
    atomic = False

    dependencies = [
        ("accounts", "0003_forget_scrub"),
        ("memory", "0019_event_embeddings"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="claim",
            index=models.Index(
                fields=["tenant", "subject", "predicate", "scope_key", "-revision"],
                name="claim_identity_revisions",
            ),
        ),
    ]
