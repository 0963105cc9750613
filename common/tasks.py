from celery import shared_task

from common.idempotency import idempotency_records_purge


@shared_task(name="common.purge_idempotency_records")
def purge_idempotency_records() -> int:
    return idempotency_records_purge()
