"""Session search over the ledger for agents: discovery, scroll and browse."""

from __future__ import annotations

from django.core import signing
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import ApiContext, api_context, capability_required
from common.pagination import cursor_invalid
from common.problems import Problem, not_found
from common.schema import NOT_FOUND, VALIDATION_ERROR
from memory.claims.api.ledger.serializers import (
    LedgerSearchIn,
    LedgerSearchOut,
    event_data,
    run_hit_data,
    run_summary_data,
)
from memory.claims.models import Subject
from memory.claims.selectors.claims import subject_get
from memory.claims.selectors.ledger_search import (
    LedgerScope,
    ledger_browse,
    ledger_discover,
    ledger_scroll,
)
from memory.claims.services.subjects import parse_subject_key

_CURSOR_SALT = "memdesk.ledger.scroll"


def legal_subjects(context: ApiContext, keys: list[str]) -> list[Subject]:
    """The named subjects memdesk knows; one outside the token is 404, like recall."""
    subjects = []
    for key in dict.fromkeys(keys):
        parse_subject_key(key)
        if not context.may_touch_subject(key):
            raise not_found("subject")
        subject = subject_get(tenant=context.tenant, key=key)
        if subject is not None:
            subjects.append(subject)
    return subjects


class LedgerSearchView(APIView):
    permission_classes = [capability_required("events:write", "claims:write", "recall")]

    @extend_schema(
        parameters=[LedgerSearchIn],
        responses={200: LedgerSearchOut, 400: VALIDATION_ERROR, 404: NOT_FOUND},
        summary="Search the ledger by session: discovery, scroll, browse",
        description="Inside the legal set (the tenant, the named `subject`s — repeat the "
        "parameter for several — the token may read, events recorded by `cutoff`, never a "
        "redacted event). `discovery` (`q`): the runs that mention it or mean it (full text, "
        "n-grams and the similarity of each event's vector; `semantic` says whether meaning "
        "was compared), best first, each with its `signals`, a snippet and its bookend "
        "window: the first three events, `window` events around each of its best three "
        "hits, the last three. `scroll` (`run_id`): the run's events "
        "in order; follow `next`. `browse`: the most recently active runs (of `agent`, if "
        "given). Errors: `validation_error`, `query_required`, `run_id_required`, "
        "`subject_invalid`, `cursor_invalid`, `not_found` (a subject outside the token).",
    )
    def get(self, request: Request) -> Response:
        context = api_context(request)
        params: dict[str, object] = {
            key: request.query_params.get(key) for key in request.query_params
        }
        params["subject"] = request.query_params.getlist("subject")
        data = LedgerSearchIn(data=params)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        mode = values["mode"]
        scope = LedgerScope(
            tenant=context.tenant,
            subjects=legal_subjects(context, values["subject"]),
            cutoff=values["cutoff"],
            agent=values["agent"],
        )
        if mode == "discovery":
            if not values["q"].strip():
                raise Problem(
                    "query_required",
                    "Discovery needs `q`: what the runs should mention.",
                    errors={"q": ["Give the words or identifier to look for."]},
                )
            found = ledger_discover(
                scope=scope, query=values["q"], limit=values["limit"], window=values["window"]
            )
            return Response(
                {
                    "mode": mode,
                    "results": [run_hit_data(run) for run in found.runs],
                    "next": None,
                    "semantic": found.semantic,
                }
            )
        if mode == "browse":
            summaries = ledger_browse(scope=scope, limit=values["limit"])
            return Response(
                {
                    "mode": mode,
                    "results": [run_summary_data(run) for run in summaries],
                    "next": None,
                }
            )
        run_id = values["run_id"]
        if not run_id:
            raise Problem(
                "run_id_required",
                "Scroll needs `run_id`: the run to read in order.",
                errors={"run_id": ["Name the run, e.g. from a discovery result."]},
            )
        after = 0
        if values["cursor"]:
            try:
                position = signing.loads(values["cursor"], salt=_CURSOR_SALT)
            except signing.BadSignature as exc:
                raise cursor_invalid() from exc
            if position.get("run") != run_id or not isinstance(position.get("after"), int):
                raise cursor_invalid()
            after = position["after"]
        events, more = ledger_scroll(scope=scope, run_id=run_id, after=after, limit=values["limit"])
        following = None
        if more and events:
            query = request.query_params.copy()
            query["cursor"] = signing.dumps(
                {"run": run_id, "after": events[-1].position}, salt=_CURSOR_SALT
            )
            following = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
        return Response(
            {"mode": mode, "results": [event_data(e) for e in events], "next": following}
        )
