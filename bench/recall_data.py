"""The recall benchmark's world: users, the facts each told in their own words, the
questions asked of them in other words, and notes that answer nothing (noise)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.contrib.postgres.search import SearchVector
from django.db.models import F, TextField, Value
from django.db.models.functions import Concat, Replace
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from memory.claims.models import Claim, Subject
from memory.claims.search import ngrams

MEMORIES_PER_USER = 200


QUESTIONS_PER_USER = 6


ACTOR = Actor.system("bench")


NAMES = ["Alice", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun"]


# (predicate, statement, question, values): the question shares no content word
# with the statement, the way an agent asks in its own words.
FAMILIES: list[tuple[str, str, str, list[str]]] = [
    (
        "home_city",
        "{n} lives in {v}",
        "which metropolis does this person reside in",
        ["Shanghai", "Lisbon", "Nairobi", "Toronto", "Osaka"],
    ),
    (
        "drink",
        "{n} drinks {v} every morning",
        "what beverage starts their day",
        ["green tea", "black coffee", "oat latte", "matcha", "espresso"],
    ),
    (
        "pet",
        "{n} has a {v}",
        "what animal keeps them company at home",
        [
            "dog named Rex",
            "cat called Miso",
            "parrot named Kiwi",
            "rabbit called Bun",
            "hamster named Pip",
        ],
    ),
    (
        "job",
        "{n} works as a {v}",
        "what is their occupation",
        ["nurse", "civil engineer", "primary school teacher", "pilot", "accountant"],
    ),
    (
        "allergy",
        "{n} is allergic to {v}",
        "which foods must be avoided when cooking for them",
        ["peanuts", "shellfish", "gluten", "eggs", "sesame"],
    ),
    (
        "sport",
        "{n} plays {v} on weekends",
        "which game do they enjoy on Saturdays",
        ["tennis", "basketball", "badminton", "volleyball", "squash"],
    ),
    (
        "car",
        "{n} drives a {v}",
        "what vehicle do they own",
        ["red Tesla", "blue Volvo", "grey Toyota", "white Fiat", "black Audi"],
    ),
    (
        "language",
        "{n} is learning {v}",
        "which foreign tongue are they studying",
        ["French", "Japanese", "Spanish", "Arabic", "German"],
    ),
    (
        "music",
        "{n} listens to {v} while cooking",
        "what kind of songs do they like",
        ["jazz", "k-pop", "classical piano", "reggae", "heavy metal"],
    ),
    (
        "birthday",
        "{n} was born on {v}",
        "when do they celebrate getting older",
        ["the third of May", "June 12", "the first of March", "October 30", "December 8"],
    ),
    (
        "editor",
        "{n} writes code in {v}",
        "which text editing tool do they program with",
        ["vim", "emacs", "VS Code", "IntelliJ", "Sublime Text"],
    ),
    (
        "trip",
        "{n} is planning a trip to {v}",
        "where are they going on holiday",
        ["Japan", "Peru", "Iceland", "Morocco", "Vietnam"],
    ),
    (
        "diet",
        "{n} follows a {v} diet",
        "what do they eat or refuse to eat",
        ["vegetarian", "vegan", "keto", "pescatarian", "halal"],
    ),
    (
        "employer",
        "{n} is employed by {v}",
        "which company pays their salary",
        ["Acme Corp", "Globex", "Initech", "Umbrella Ltd", "Stark Industries"],
    ),
    (
        "partner",
        "{n} is married to {v}",
        "who is their spouse",
        ["Sam", "Noor", "Luca", "Mei", "Tomas"],
    ),
    (
        "kids",
        "{n} has {v}",
        "how many children are in the family",
        ["two daughters", "one son", "three kids", "twin boys", "a baby girl"],
    ),
    (
        "reading",
        "{n} is reading {v}",
        "which book is on the nightstand",
        ["Dune", "Middlemarch", "The Three-Body Problem", "Beloved", "Neuromancer"],
    ),
    (
        "timezone",
        "{n} works on {v} time",
        "what hours should meetings respect",
        ["Central European", "Pacific", "China Standard", "East Africa", "Eastern"],
    ),
    (
        "notify",
        "{n} prefers to be contacted by {v}",
        "what is the best way to reach them",
        ["email", "SMS", "phone call", "Slack message", "WhatsApp"],
    ),
    (
        "seat",
        "{n} always books an {v} seat",
        "where do they like to sit on a plane",
        ["aisle", "window", "exit row", "front row", "aisle bulkhead"],
    ),
    (
        "hobby",
        "{n} spends evenings {v}",
        "what do they do to relax after work",
        ["knitting", "painting watercolours", "gardening", "baking bread", "playing chess"],
    ),
    (
        "fear",
        "{n} is afraid of {v}",
        "what scares them",
        ["heights", "spiders", "deep water", "flying", "thunderstorms"],
    ),
    (
        "degree",
        "{n} studied {v} at university",
        "what was their academic major",
        ["chemistry", "history", "computer science", "law", "economics"],
    ),
    (
        "gym",
        "{n} goes running at {v}",
        "when do they exercise",
        ["six in the morning", "lunchtime", "sunset", "nine at night", "dawn"],
    ),
    (
        "budget",
        "{n} keeps monthly spending under {v}",
        "how much money can they spend",
        ["2000 euros", "1500 dollars", "800 pounds", "3000 yuan", "500 francs"],
    ),
    (
        "doctor",
        "{n} sees Dr. {v} for checkups",
        "who is their physician",
        ["Okafor", "Lindqvist", "Tanaka", "Moreau", "Patel"],
    ),
    (
        "blood",
        "{n} has blood type {v}",
        "what would a transfusion need",
        ["O negative", "A positive", "B positive", "AB negative", "O positive"],
    ),
    ("shoe", "{n} wears size {v} shoes", "what footwear size fits", ["38", "42", "40", "44", "37"]),
    (
        "movie",
        "{n} loves the film {v}",
        "which cinema title is a favourite",
        ["Spirited Away", "Casablanca", "Amelie", "Parasite", "The Matrix"],
    ),
    (
        "plant",
        "{n} grows {v} on the balcony",
        "what is cultivated in pots outside",
        ["tomatoes", "basil", "chillies", "strawberries", "lavender"],
    ),
    (
        "commute",
        "{n} commutes by {v}",
        "how do they get to the office",
        ["bicycle", "subway", "bus", "ferry", "scooter"],
    ),
    (
        "charity",
        "{n} volunteers at {v}",
        "where do they donate their time",
        ["an animal shelter", "a food bank", "a hospice", "a library", "a refugee centre"],
    ),
    (
        "instrument",
        "{n} plays the {v}",
        "which musical instrument can they perform on",
        ["cello", "guitar", "violin", "drums", "flute"],
    ),
    (
        "coffee_order",
        "{n} orders a {v} at cafes",
        "what do they ask the barista for",
        ["flat white", "cortado", "cappuccino", "mocha", "americano"],
    ),
    (
        "sleep",
        "{n} goes to bed at {v}",
        "when do they turn in for the night",
        ["ten pm", "midnight", "eleven thirty", "nine pm", "one am"],
    ),
    (
        "team",
        "{n} supports {v}",
        "which club are they a fan of",
        ["Benfica", "Arsenal", "the Lakers", "Boca Juniors", "Bayern"],
    ),
    (
        "phone",
        "{n} uses an {v}",
        "what handset do they carry",
        ["iPhone 15", "Android Pixel", "old Nokia", "Samsung Galaxy", "Fairphone"],
    ),
    (
        "anniversary",
        "{n} celebrates the wedding anniversary on {v}",
        "when is the marriage date remembered",
        ["April 2", "July 19", "September 9", "January 25", "November 14"],
    ),
    (
        "weakness",
        "{n} struggles with {v}",
        "what do they find difficult",
        ["public speaking", "mornings", "spreadsheets", "saying no", "deadlines"],
    ),
    (
        "goal",
        "{n} wants to {v} this year",
        "what ambition are they pursuing",
        ["run a marathon", "learn to swim", "write a novel", "buy a house", "get promoted"],
    ),
]


# Everyday operational notes that fill each user's 200 memories around the facts above.
NOISE = [
    "Order {k} of {w} was shipped to the warehouse on day {d}",
    "Meeting {k}: discussed the {w} roadmap with the team",
    "Ticket {k} about the {w} component was closed as a duplicate",
    "Reminder {k}: renew the {w} subscription before day {d}",
    "Invoice {k} for {w} was paid on day {d}",
]


NOISE_WORDS = ["billing", "search", "login", "reports", "mobile", "export", "analytics", "checkout"]


def memories_of(user: int) -> list[tuple[str, str, Any]]:
    name = f"{NAMES[user % len(NAMES)]} {user}"
    facts = [
        (
            predicate,
            statement.format(n=name, v=values[user % len(values)]),
            values[user % len(values)],
        )
        for predicate, statement, _, values in FAMILIES
    ]
    noise = [
        (
            f"note_{k}",
            NOISE[k % len(NOISE)].format(k=k, w=NOISE_WORDS[k % len(NOISE_WORDS)], d=k % 28 + 1),
            str(k),
        )
        for k in range(MEMORIES_PER_USER - len(facts))
    ]
    return facts + noise


def seed_users(tenant: Tenant, users: int) -> list[Subject]:
    subjects = Subject.objects.bulk_create(
        [Subject(tenant=tenant, kind="user", ref=f"bench{u}") for u in range(users)]
    )
    now = timezone.now()
    for subject_number, subject in enumerate(subjects):
        active_claims_create(
            tenant=tenant, subject=subject, rows=memories_of(subject_number), now=now
        )
    search_vectors_fill(tenant=tenant)
    return subjects


def active_claims_create(
    *, tenant: Tenant, subject: Subject, rows: Iterable[tuple[str, str, str]], now: datetime
) -> None:
    """Active, verified claims of `subject` from (predicate, text, value) rows, as the gate
    would have accepted them, in bulk (no gate, no embeddings: the benches time recall)."""
    Claim.objects.bulk_create(
        [
            Claim(
                tenant=tenant,
                subject=subject,
                kind="fact",
                predicate=predicate,
                value=value,
                text=text,
                authority="user_explicit",
                basis="verified",
                status="active",
                gate_decision="accepted",
                agent="bench",
                available_at=now,
                ngrams=ngrams(f"{predicate.replace('_', ' ')} {text} {value}"),
            )
            for predicate, text, value in rows
        ],
        batch_size=1000,
    )


def search_vectors_fill(*, tenant: Tenant) -> None:
    """The full-text vector of every claim of `tenant`, as the claim service writes it."""
    Claim.objects.filter(tenant=tenant).update(
        search_vector=SearchVector(
            Concat(
                Replace(F("predicate"), Value("_"), Value(" ")),
                Value(" "),
                F("text"),
                output_field=TextField(),
            ),
            config="english",
        )
    )
