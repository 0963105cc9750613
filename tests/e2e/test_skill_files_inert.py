"""An agent plants script in skill files; an admin opens them and nothing runs.

The agent uploads through the real API. Its ``assets/x.html`` and
``assets/y.svg`` are not UTF-8, so they are stored as binary assets; if memdesk
served them with a type guessed from the name, the browser would run their
script with the admin's session (which could approve the agent's own version).
Each script would set ``window.pwned`` and request a ``/pwned-…`` URL; the test
watches the page and every request the browser makes.
"""

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError

from accounts.models import Tenant
from accounts.services import agent_token_create
from skills.models import SkillVersion
from tests.e2e.conftest import screenshot
from tests.skills import hostile

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUG = "brochure"


def agent_uploads_hostile_files(base_url: str) -> None:
    issued = agent_token_create(
        tenant=Tenant.objects.get(slug="demo"),
        name="brochure-writer",
        capabilities=["skills:read", "skills:write"],
    )
    headers = {"Authorization": f"Bearer {issued.secret}"}
    with httpx.Client(base_url=base_url, headers=headers) as api:
        created = api.post("/api/v1/skills", json={"slug": SLUG, "name": "Brochure"})
        assert created.status_code == 201, created.text
        files = {"package": ("brochure.zip", hostile.hostile_package(SLUG), "application/zip")}
        uploaded = api.post(f"/api/v1/skills/{SLUG}/versions", files=files)
        assert uploaded.status_code == 201, uploaded.text


def open_expecting_download(page, url: str):
    with page.expect_download() as info:
        try:
            page.goto(url)
        except PlaywrightError as error:  # Chromium aborts a navigation that became a download
            assert "net::ERR_ABORTED" in str(error) or "Download is starting" in str(error)
    return info.value


def test_an_admin_opening_hostile_skill_files_runs_nothing(sign_in, live_server):
    agent_uploads_hostile_files(live_server.url)
    assert SkillVersion.objects.get(skill__slug=SLUG).status == "draft"
    page = sign_in("admin")
    requested: list[str] = []
    page.context.on("request", lambda request: requested.append(request.url))

    # The version page and its file views: escaped text or "binary", never the file.
    page.goto(f"/skills/{SLUG}/v1/")
    for slot, path in enumerate(sorted(hostile.FILES), start=2):
        page.click(f"a[href='/skills/{SLUG}/v1/files/{path}']")
        page.wait_for_selector(f"#file-{slot} .file-view")
        assert "binary" in page.inner_text(f"#file-{slot}")
    screenshot(page, "hostile-files-version")
    page.goto(f"/skills/{SLUG}/v1/files/assets/x.html")
    assert page.locator("iframe, object, embed, img, svg").count() == 0
    screenshot(page, "hostile-file-page")

    # Every raw URL, console and API, is a download of the exact bytes.
    for path, content in hostile.FILES.items():
        for url in (
            f"/skills/{SLUG}/v1/download/{path}",
            f"/api/v1/skills/{SLUG}/versions/1/files/{path}",
        ):
            download = open_expecting_download(page, url)
            assert download.suggested_filename == path.rsplit("/", 1)[1]
            with open(download.path(), "rb") as saved:
                assert saved.read() == content
    # The download link on the file page is a download too.
    page.goto(f"/skills/{SLUG}/v1/files/assets/y.svg")
    with page.expect_download() as info:
        page.click("text=download")
    assert info.value.suggested_filename == "y.svg"

    page.wait_for_timeout(500)
    assert page.evaluate("window.pwned") is None
    assert [url for url in requested if hostile.MARKER in url] == []
    # The version is still the agent's draft: nothing approved it behind the admin's back.
    assert SkillVersion.objects.get(skill__slug=SLUG).status == "draft"


def test_even_rendered_in_place_a_hostile_file_cannot_run(sign_in, live_server):
    """Second line: were the attachment ignored, the sandboxing policy still stops the script.

    The test rewrites the answer's Content-Disposition to ``inline`` and its type
    to the one a name-guessing server would send, keeping memdesk's other headers.
    """
    agent_uploads_hostile_files(live_server.url)
    page = sign_in("admin")
    requested: list[str] = []
    page.context.on("request", lambda request: requested.append(request.url))
    guessed = {"assets/x.html": "text/html", "assets/y.svg": "image/svg+xml"}

    def render_inline(path: str, *, keep_policy: bool) -> object:
        url = f"/api/v1/skills/{SLUG}/versions/1/files/{path}"

        def inline(route):
            response = route.fetch()
            headers = {**response.headers, "content-type": guessed[path]}
            headers["content-disposition"] = "inline"
            if not keep_policy:
                headers.pop("content-security-policy")
            route.fulfill(response=response, headers=headers)

        page.route(f"**{url}", inline)
        page.goto(url)
        page.wait_for_timeout(500)
        ran = page.evaluate("window.pwned")
        page.unroute(f"**{url}", inline)
        return ran

    # The control: without memdesk's headers the planted script does run, so
    # the checks below can see it when it does.
    assert render_inline("assets/x.html", keep_policy=False) == "html"
    requested.clear()
    for path in guessed:
        assert render_inline(path, keep_policy=True) is None
    assert [url for url in requested if hostile.MARKER in url] == []
