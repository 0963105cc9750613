"""The bench's editors'-labels section: each tenant's bands measured on its own decisions."""

import pytest

from bench import screen_heldout
from tests.memory.test_screen_calibration import _seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(editor, session_api):
    return session_api(editor)


def test_without_labels_it_says_so():
    text = screen_heldout.labels_report()

    assert text.startswith(screen_heldout.LABELS_HEADING)
    assert "No tenant has labelled examples yet." in text


def test_it_reports_precision_and_recall_of_a_tenants_bands_on_its_editors_labels(acme, agent, api):
    _seed(agent, api)

    text = screen_heldout.labels_report()

    # 34 approved (benign), 5 rejected as injections: all five were quarantined.
    assert "| acme | quarantine | 34 | 5 | " in text
    assert "| acme | any flag | 34 | 5 | " in text
    rows = {
        line.split("|")[2].strip(): line.split("|")
        for line in text.splitlines()
        if line.startswith("| acme |")
    }
    # The learned head's bands alone: what the rules quarantined regardless counts only
    # where the head agreed. Any flag catches at least what quarantine does.
    recall = {cut: float(row[6].strip().rstrip("%")) for cut, row in rows.items()}
    assert 0 < recall["quarantine"] <= recall["any flag"] <= 100
    assert "globex" not in text
