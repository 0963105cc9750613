"""A person approving the publisher's impactful calls, through memdesk's own API.

memdesk never lets an agent approve its own intent: a signed-in person other than
the token's owner decides the item in the approvals queue. For `make demo-agent`
that person is the demo's editor, signed in to the console over HTTP like a
browser (session cookie and CSRF token); the review API then takes the decision.
"""

from __future__ import annotations

import httpx


class ConsoleApprover:
    def __init__(self, base_url: str, username: str, password: str) -> None:
        self.client = httpx.Client(base_url=base_url.rstrip("/"), timeout=30)
        self.client.get("/accounts/login/")
        signed_in = self.client.post(
            "/accounts/login/",
            data={
                "username": username,
                "password": password,
                "csrfmiddlewaretoken": self.client.cookies["csrftoken"],
            },
            headers={"Referer": f"{self.client.base_url}/accounts/login/"},
        )
        if "sessionid" not in self.client.cookies:
            raise RuntimeError(f"the approver could not sign in ({signed_in.status_code})")

    def approve(self, receipt_id: str) -> None:
        items = self.client.get("/api/v1/reviews", params={"queue": "approvals", "limit": 100})
        items.raise_for_status()
        for item in items.json()["results"]:
            if item["target_id"] == receipt_id and item["status"] in {"open", "claimed"}:
                decided = self.client.post(
                    f"/api/v1/reviews/{item['id']}/decide",
                    json={"verdict": "approve", "reason_code": "intent_checked"},
                    headers={"X-CSRFToken": self.client.cookies["csrftoken"]},
                )
                decided.raise_for_status()

    def close(self) -> None:
        self.client.close()
