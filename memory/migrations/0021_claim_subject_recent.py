from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built without blocking writes: the claims table is the largest one agents write to.
    atomic = False

    dependencies = [
        ("accounts", "0003_forget_scrub"),
        ("memory", "0020_claim_identity_revisions"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="claim",
            index=models.Index(
                fields=["tenant", "subject", "-recorded_at", "-id"], name="claim_subject_recent"
            ),
        ),
    ]
