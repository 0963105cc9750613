import numpy as np
from django.db import migrations, models

BATCH = 1000


def pack_vectors(apps, schema_editor):
    """Every stored vector gets its float32 bytes, in batches (no claim is re-embedded)."""
    ClaimEmbedding = apps.get_model("memory", "ClaimEmbedding")
    last = 0
    while True:
        rows = list(
            ClaimEmbedding.objects.filter(pk__gt=last, packed__isnull=True)
            .order_by("pk")
            .values_list("pk", "vector")[:BATCH]
        )
        if not rows:
            return
        for pk, vector in rows:
            ClaimEmbedding.objects.filter(pk=pk).update(
                packed=np.asarray(vector, dtype="<f4").tobytes()
            )
        last = rows[-1][0]


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0017_claim_undo_moves"),
    ]

    operations = [
        migrations.AddField(
            model_name="claimembedding",
            name="packed",
            field=models.BinaryField(blank=True, null=True),
        ),
        migrations.RunPython(pack_vectors, migrations.RunPython.noop),
    ]
