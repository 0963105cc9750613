"""Prometheus metrics computed from PostgreSQL at scrape time.

Governance metrics are facts about the data (receipts by state, queue depth),
so they are read from the database on each scrape rather than counted in
process memory: every web process answers the same, and restarts lose nothing.
Apps add their families in `AppConfig.ready()` with `register_collector`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CollectorFn = Callable[[], Iterable[Metric]]
_collectors: dict[str, CollectorFn] = {}


def register_collector(name: str, collect: CollectorFn) -> None:
    _collectors[name] = collect


class _DatabaseCollector(Collector):
    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily("memdesk_up", "1 while memdesk answers scrapes.")
        up.add_metric([], 1)
        yield up
        for collect in _collectors.values():
            yield from collect()


def render_metrics() -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_DatabaseCollector())
    return generate_latest(registry)
