"""What a memdesk process does once it has loaded: keep the collector off what it loaded."""

from __future__ import annotations

import gc
from importlib import import_module

from django.conf import settings


def freeze_loaded_objects(*, with_urlconf: bool = False) -> None:
    """Move every object alive now into the collector's permanent generation.

    What a process loads (Python's and the libraries' modules, Django, the apps, the
    URLconf: about 170,000 objects the collector tracks) lives as long as the process,
    yet every full collection walks all of it: 80-110 ms a collection, measured, a pause
    that came every few dozen `claims:batch` requests and was most of that endpoint's
    p95. Frozen, they are not walked again (a full collection of what requests leave
    behind took 2 ms), and a prefork parent (Celery's) shares their pages with its
    children instead of the collector writing to them. Garbage is collected first, so
    none of it is kept; what is loaded later stays under the collector as before.

    `with_urlconf` loads the URLconf first (every view, serializer and form it
    imports), which the first request would otherwise load after the freeze.
    """
    if with_urlconf:
        import_module(settings.ROOT_URLCONF)
    gc.collect()
    gc.freeze()
