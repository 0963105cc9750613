"""Registering platforms: the API for admins, the command, the console page, and the
address check memdesk makes itself before anything is stored."""

from __future__ import annotations

import io
import ipaddress
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from memory.receipts.models.platforms import Platform
from memory.receipts.services.platforms import platform_register
from tests.memory.conftest import PUBLIC_ADDRESS

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_api(admin_user):
    """An admin's session on the API, with CSRF checks on like a browser's fetch."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(admin_user)
    client.get("/platforms/")  # the console page sets the CSRF cookie
    client.credentials(HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    return client


def register(client, **body):
    return client.post("/api/v1/platforms", body, format="json")


# -- the API ----------------------------------------------------------------------


def test_an_admin_registers_a_platform_and_it_is_audited(admin_api, admin_user, acme, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    response = register(admin_api, name="blog", base_url="HTTPS://Blog.Example:443/api")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["name"] == "blog"
    assert body["base_url"] == "https://blog.example/api/"  # normalised
    assert body["allow_private"] is False
    assert body["created_by"] == "ada"
    platform = Platform.objects.get(tenant=acme, name="blog")
    assert platform.created_by_id == str(admin_user.pk)
    audit = AuditEvent.objects.get(verb="platform.registered", target_id=str(platform.pk))
    assert audit.actor_label == "ada"
    assert audit.data == {
        "name": "blog",
        "base_url": "https://blog.example/api/",
        "allow_private": False,
        "absence_proof": "none",
        "lookup_template": "",
        "key_retention_seconds": None,
        "consistency_delay_seconds": 0,
    }
    assert body["absence_proof"] == "none"
    listed = admin_api.get("/api/v1/platforms").json()
    assert [p["name"] for p in listed] == ["blog"]


def test_registering_the_same_platform_again_changes_nothing(admin_api, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    assert register(admin_api, name="blog", base_url="https://blog.example/api/").status_code == 201
    again = register(admin_api, name="blog", base_url="https://blog.example/api")
    assert again.status_code == 200
    other = register(admin_api, name="blog", base_url="https://blog.example/v2/")
    assert other.status_code == 409
    assert other.json()["code"] == "platform_name_taken"
    assert Platform.objects.get().base_url == "https://blog.example/api/"
    assert AuditEvent.objects.filter(verb="platform.registered").count() == 1


def test_a_session_post_without_the_csrf_token_is_refused(admin_user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = register(client, name="blog", base_url="https://blog.example/api/")
    assert response.status_code == 403
    assert not Platform.objects.exists()


def test_editors_auditors_and_agents_are_refused(
    acme, make_member, session_api, agent, make_agent, admin_api
):
    for role in (Role.EDITOR, Role.AUDITOR, Role.USER):
        client = session_api(make_member(acme, f"someone-{role}", role))
        assert client.get("/api/v1/platforms").status_code == 403
        refused = register(client, name="x", base_url="https://x.example/")
        assert refused.status_code == 403
        assert refused.json()["code"] == "role_required"
    # Whatever its capabilities, a token never chooses hosts.
    every_capability = make_agent(acme, name="mighty")
    for client in (agent, every_capability):
        assert client.get("/api/v1/platforms").json()["code"] == "role_required"
        refused = register(client, name="x", base_url="https://x.example/")
        assert refused.status_code == 403
        assert refused.json()["code"] == "role_required"
    assert not Platform.objects.exists()


def test_another_tenants_platforms_are_invisible(admin_api, globex, make_member, session_api):
    globex_admin = session_api(make_member(globex, "gina", Role.ADMIN))
    theirs = register(
        globex_admin, name="internal", base_url="https://10.1.2.3/", allow_private=True
    )
    assert theirs.status_code == 201
    assert register(admin_api, name="mine", base_url="https://93.184.215.14/").status_code == 201
    assert [p["name"] for p in admin_api.get("/api/v1/platforms").json()] == ["mine"]
    assert [p["name"] for p in globex_admin.get("/api/v1/platforms").json()] == ["internal"]


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8000/",
        "http://localhost.:8000/",  # resolved by memdesk: loopback
        "http://app.localhost/",  # special-use name: loopback whatever DNS says
        "http://10.0.0.5/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/",  # cloud metadata, link-local
        "http://100.64.0.1/",  # shared address space (carrier-grade NAT)
        "http://0.0.0.0/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",  # reserved
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://[::ffff:127.0.0.1]/",  # IPv4-mapped loopback
        "http://[2002:7f00:1::]/",  # 6to4 wrapping 127.0.0.1
        "http://2130706433/",  # 127.0.0.1 as one decimal number
    ],
)
def test_internal_addresses_are_refused_without_allow_private(admin_api, dns, base_url):
    dns.answer("localhost", ["127.0.0.1"])
    response = register(admin_api, name="internal", base_url=base_url)
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "platform_address_refused"
    assert not Platform.objects.exists()
    assert not AuditEvent.objects.filter(verb="platform.registered").exists()


# IPv6 addresses that carry an internal IPv4 address, and special-purpose ranges
# some Python releases call global: refused as literals and as a name's answer.
WRAPPED_AND_SPECIAL = [
    "::127.0.0.1",  # IPv4-compatible loopback
    "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "::ffff:169.254.169.254",  # IPv4-mapped metadata address
    "64:ff9b::7f00:1",  # NAT64 well-known prefix to 127.0.0.1
    "64:ff9b::a00:5",  # NAT64 well-known prefix to 10.0.0.5
    "64:ff9b:1::5db8:d822",  # NAT64 local-use prefix: internal whatever it carries
    "2002:a00:5::1",  # 6to4 wrapping 10.0.0.5
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1 XORed
    "192.0.0.8",  # IETF protocol assignments
    "198.18.0.1",  # benchmarking
    "0.1.2.3",  # "this network"
    "255.255.255.255",  # limited broadcast
    "fec0::1",  # site-local
    "203.0.113.7",  # documentation
    "2001:db8::1",  # documentation
]


def url_for(address: str) -> str:
    return f"http://[{address}]/" if ":" in address else f"http://{address}/"


@pytest.mark.parametrize("address", WRAPPED_AND_SPECIAL)
def test_wrapped_and_special_purpose_addresses_are_refused(admin_api, dns, address):
    literal = register(admin_api, name="literal", base_url=url_for(address))
    dns.answer("wrapped.example", [address])
    by_name = register(admin_api, name="named", base_url="https://wrapped.example/")
    for response in (literal, by_name):
        assert response.status_code == 400, response.json()
        assert response.json()["code"] == "platform_address_refused"
    assert by_name.json()["address"] == str(ipaddress.ip_address(address))
    assert not Platform.objects.exists()


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "2606:2800::1",
        "::ffff:93.184.216.34",  # IPv4-mapped public address: the socket talks IPv4
        "64:ff9b::5db8:d822",  # NAT64 (DNS64 answers like this on IPv6-only networks)
        "2002:5db8:d822::1",  # 6to4 wrapping a public address
    ],
)
def test_public_addresses_are_accepted_in_any_spelling(admin_api, dns, address):
    response = register(admin_api, name="public", base_url=url_for(address))
    assert response.status_code == 201, response.json()
    assert Platform.objects.get(name="public").allow_private is False


def test_a_public_looking_name_resolving_to_loopback_is_refused(admin_api, dns):
    dns.answer("api.public-looking.com", ["127.0.0.1"])
    response = register(admin_api, name="shop", base_url="https://api.public-looking.com/v1/")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "platform_address_refused"
    assert body["address"] == "127.0.0.1"
    assert "base_url" in body["errors"]
    assert not Platform.objects.exists()


def test_one_internal_address_in_the_answer_refuses_the_name(admin_api, dns):
    dns.answer("mixed.example", [PUBLIC_ADDRESS, "10.0.0.7"])
    response = register(admin_api, name="mixed", base_url="https://mixed.example/")
    assert response.json()["code"] == "platform_address_refused"


def test_allow_private_registers_an_internal_platform(admin_api, dns):
    dns.answer("wiki.corp", ["10.20.30.40"])
    response = register(admin_api, name="wiki", base_url="http://wiki.corp/", allow_private=True)
    assert response.status_code == 201
    assert Platform.objects.get(name="wiki").allow_private is True


def test_a_name_that_does_not_resolve_yet_is_accepted(admin_api):
    # Every read resolves again and refuses internal answers; see test_platform_lookups.
    response = register(admin_api, name="later", base_url="https://not-yet.example/")
    assert response.status_code == 201


@pytest.mark.parametrize(
    "name, base_url, code",
    [
        ("ftp", "ftp://files.example/", "invalid_base_url"),
        ("creds", "https://user:pw@blog.example/", "invalid_base_url"),
        ("at", "https://blog.example@evil.example/", "invalid_base_url"),
        ("query", "https://blog.example/api?x=1", "invalid_base_url"),
        ("frag", "https://blog.example/api#x", "invalid_base_url"),
        ("relative", "/api/", "invalid_base_url"),
        ("bad", "http://[::1/", "invalid_base_url"),
        ("slash", "https://blog.example\\@evil.example/", "invalid_base_url"),
        ("dots", "https://blog.example/api/%2e%2e/", "invalid_base_url"),
        ("Upper Case", "https://blog.example/", "invalid_platform_name"),
    ],
)
def test_a_base_url_that_cannot_name_a_platform_is_refused(admin_api, name, base_url, code):
    response = register(admin_api, name=name, base_url=base_url)
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert not Platform.objects.exists()


def test_the_schema_documents_the_platforms_endpoint(admin_api):
    schema = admin_api.get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/v1/platforms"]["post"]
    assert "platform_address_refused" in str(post["responses"]["400"])
    assert "role_required" in str(post["responses"]["403"])
    receipts = schema["paths"]["/api/v1/receipts"]["post"]
    assert "platform_not_registered" in str(receipts["responses"]["400"])


# -- the command ---------------------------------------------------------------------


def test_the_command_registers_a_platform(acme, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    out = io.StringIO()
    call_command(
        "register_platform",
        "--tenant=acme",
        "--name=blog",
        "--base-url=https://blog.example/api",
        stdout=out,
    )
    assert out.getvalue().strip() == "registered blog for acme: https://blog.example/api/"
    platform = Platform.objects.get(tenant=acme)
    assert (platform.name, platform.allow_private) == ("blog", False)
    assert platform.created_by_label == "manage.py register_platform"
    assert AuditEvent.objects.filter(verb="platform.registered", actor_kind="system").exists()
    out = io.StringIO()
    call_command(
        "register_platform",
        "--tenant=acme",
        "--name=blog",
        "--base-url=https://blog.example/api/",
        stdout=out,
    )
    assert out.getvalue().startswith("already registered blog")
    assert Platform.objects.count() == 1


def test_the_command_refuses_internal_addresses_unless_allowed(acme, dns):
    dns.answer("wiki.corp", ["10.20.30.40"])
    args = ["register_platform", "--tenant=acme", "--name=wiki", "--base-url=http://wiki.corp/"]
    with pytest.raises(CommandError, match="platform_address_refused"):
        call_command(*args, stdout=io.StringIO())
    assert not Platform.objects.exists()
    out = io.StringIO()
    call_command(*args, "--allow-private", stdout=out)
    assert "(private networks allowed)" in out.getvalue()
    assert Platform.objects.get().allow_private is True


@pytest.mark.parametrize("address", WRAPPED_AND_SPECIAL)
def test_the_command_refuses_wrapped_addresses_unless_allowed(acme, dns, address):
    args = ["register_platform", "--tenant=acme", "--name=w", f"--base-url={url_for(address)}"]
    with pytest.raises(CommandError, match="platform_address_refused"):
        call_command(*args, stdout=io.StringIO())
    assert not Platform.objects.exists()
    call_command(*args, "--allow-private", stdout=io.StringIO())
    assert Platform.objects.get().allow_private is True


def test_the_command_needs_an_existing_tenant(db):
    with pytest.raises(CommandError, match="no tenant"):
        call_command(
            "register_platform", "--tenant=nope", "--name=x", "--base-url=https://x.example/"
        )


# -- the console page ----------------------------------------------------------------

INLINE = re.compile(r"<script(?![^>]*\bsrc=)|\son[a-z]+\s*=|\sstyle\s*=", re.IGNORECASE)


def test_admins_see_the_page_and_register_through_it(login, admin_user, acme, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    client = login(admin_user)
    page = client.get("/platforms/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'href="/platforms/"' in html  # the navigation links here for admins
    assert "No platforms yet" in html
    assert not INLINE.search(html), INLINE.search(html)
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/platforms/",
        {"name": "blog", "base_url": "https://blog.example/api", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    platform = Platform.objects.get(tenant=acme)
    assert (platform.base_url, platform.allow_private) == ("https://blog.example/api/", False)
    assert platform.created_by_label == "ada"
    listed = client.get("/platforms/").content.decode()
    assert "Registered blog at https://blog.example/api/." in listed
    assert "https://blog.example/api/" in listed and "refused" in listed


def test_the_page_says_why_an_address_is_refused(login, admin_user, dns):
    dns.answer("api.public-looking.com", ["127.0.0.1"])
    client = login(admin_user)
    client.get("/platforms/")
    response = client.post(
        "/platforms/",
        {
            "name": "shop",
            "base_url": "https://api.public-looking.com/",
            "csrfmiddlewaretoken": client.cookies["csrftoken"].value,
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "127.0.0.1, an internal address" in html
    assert not Platform.objects.exists()
    allowed = client.post(
        "/platforms/",
        {
            "name": "shop",
            "base_url": "https://api.public-looking.com/",
            "allow_private": "on",
            "csrfmiddlewaretoken": client.cookies["csrftoken"].value,
        },
    )
    assert allowed.status_code == 302
    assert Platform.objects.get().allow_private is True


def test_the_page_is_for_admins_only(login, editor, acme, make_member):
    for user in (editor, make_member(acme, "aud", Role.AUDITOR)):
        client = login(user)
        assert client.get("/platforms/").status_code == 403
        assert 'href="/platforms/"' not in client.get("/review/").content.decode()


def test_the_page_lists_only_this_tenants_platforms(login, admin_user, globex, acme):
    platform_register(
        tenant=globex, actor=Actor.system("t"), name="theirs", base_url="https://10.0.0.1/",
        allow_private=True,
    )  # fmt: skip
    platform_register(
        tenant=acme, actor=Actor.system("t"), name="ours", base_url="https://93.184.215.14/"
    )
    html = login(admin_user).get("/platforms/").content.decode()
    assert "ours" in html
    assert "theirs" not in html and "10.0.0.1" not in html


@pytest.mark.parametrize("role", ["editor", "auditor", "user"])
def test_the_page_refuses_members_who_are_not_admins(role, acme, make_member, login, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    client = login(make_member(acme, f"someone-{role}", role))
    assert client.get("/platforms/").status_code == 403
    client.get("/accounts/login/")
    refused = client.post(
        "/platforms/",
        {"name": "blog", "base_url": "https://blog.example/api"},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert refused.status_code == 403
    assert not Platform.objects.exists()


def test_the_page_is_not_found_for_a_person_of_no_tenant(outsider, login, dns):
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    client = login(outsider)
    assert client.get("/platforms/").status_code == 404
    client.get("/accounts/login/")
    refused = client.post(
        "/platforms/",
        {"name": "blog", "base_url": "https://blog.example/api"},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert refused.status_code == 404
    assert not Platform.objects.exists()
