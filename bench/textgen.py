"""Deterministic, realistic-looking English text for the benchmark workloads.

Everything here is driven by a seeded `random.Random`, so the same seed always yields the same
items, documents and prompts, and so the same bill.

Token sizes follow offpeak-sim's (and offpeak's) one rule: tokens = (UTF-8 bytes + 3) // 4.
The text is plain ASCII with no double quotes, no angle brackets and no '#' at a line start, so
it never looks like markup to the sim's sentence splitter.
"""

import random

SUBJECTS = [
    "The customer", "Our finance team", "A new user", "The store manager", "My colleague",
    "The warehouse lead", "A long-time subscriber", "The support agent", "Our office",
    "The mobile app", "The web dashboard", "The nightly export", "The billing system",
    "A reseller in Lyon", "The clinic", "Our school district", "The marketing team",
    "A small bakery", "The logistics partner", "The onboarding wizard", "The tablet kiosk",
    "A freelance designer", "The hotel front desk", "Our research group", "The city library",
]
VERBS = [
    "reports that", "noticed that", "is worried that", "confirmed that", "asked why",
    "complains that", "wants to know whether", "found out that", "keeps seeing that",
    "was told that", "suspects that", "mentioned that", "cannot understand why",
]
CLAUSES = [
    "the invoice shows a charge twice", "the password reset email never arrives",
    "the parcel has been stuck in transit for a week", "the export file is missing two columns",
    "the login page times out on slow networks", "the discount code was rejected at checkout",
    "the monthly report lists the wrong currency", "the app crashes when a photo is attached",
    "the refund was approved but not paid", "the calendar sync drops recurring meetings",
    "the shipping label prints upside down", "the trial ended earlier than promised",
    "the search results ignore the date filter", "the account was locked after one attempt",
    "the delivery address cannot be changed", "the tax rate on the receipt looks too high",
    "the notification sound plays at night", "the backup job skipped the largest folder",
    "the order history is empty since Tuesday", "the two factor code expires too quickly",
    "the printer driver no longer installs", "the subscription renewed without a reminder",
    "the map shows the wrong pickup point", "the chat widget hides the checkout button",
    "the gift card balance is shown as zero", "the uploaded contract lost its signatures",
]
TAILS = [
    "after the latest update", "since the start of the month", "on every second attempt",
    "only on the Android app", "when the network is slow", "for customers in Canada",
    "even after clearing the cache", "during the weekend sale", "on the shared office laptop",
    "for orders above fifty euros", "right after the migration", "without any error message",
    "in the French version of the site", "when two people edit at once", "on the first login",
]
DETAILS = [
    "They already tried restarting the device and logging in again.",
    "A screenshot was attached to the original message.",
    "This is the third time they have written about it.",
    "The issue started without any change on their side.",
    "They need an answer before the end of the week.",
    "Other members of the team see the same behaviour.",
    "They would accept a partial refund as a solution.",
    "The problem does not happen in the desktop browser.",
    "Their contract renews at the end of the quarter.",
    "They are happy with the product apart from this.",
    "The order number and the date are in the attachment.",
    "Support suggested a workaround that did not help.",
    "A similar ticket was closed last month without a fix.",
    "They asked to be called back in the afternoon.",
    "The error appears in the log with a long stack trace.",
    "Several invoices from the previous year are affected as well.",
    "Their manager has been copied on the latest reply.",
    "The same account works fine on a different computer.",
]
TOPICS = [
    "tide pools", "urban beekeeping", "solar water heaters", "medieval bridges", "sourdough starters",
    "river restoration", "electric ferries", "alpine glaciers", "community gardens", "night trains",
    "coral nurseries", "wooden skyscrapers", "heat pumps", "migratory birds", "public libraries",
    "desert agriculture", "bicycle logistics", "rainwater harvesting", "old lighthouses", "salt marshes",
]
DOC_TAILS = [
    "in coastal regions", "over the last decade", "in northern Europe", "in most pilot sites",
    "according to the latest figures", "in towns under fifty thousand people", "during dry summers",
    "in the first three years", "despite rising material prices", "when budgets are tight",
]
FACT_OPENERS = [
    "Researchers found that", "A recent survey shows that", "Local officials say that",
    "Engineers estimate that", "Historians note that", "Field studies suggest that",
    "A pilot project showed that", "Critics argue that", "Early results indicate that",
]
FACT_CLAUSES = [
    "costs fell by almost a third over five years", "maintenance is the largest hidden expense",
    "most of the benefit comes in the first winter", "volunteers do much of the daily work",
    "the approach works best in small towns", "regulation has not kept pace with demand",
    "public support grew once the first results were visible", "older designs are still more robust",
    "the main obstacle is the lack of trained staff", "insurance rules slow down adoption",
    "energy use dropped sharply after the retrofit", "the idea spread quickly to neighbouring regions",
    "careful monitoring prevented several failures", "funding depends heavily on a few donors",
]


def tokens(text: str) -> int:
    """offpeak-sim's token rule."""
    return (len(text.encode("utf-8")) + 3) // 4


def ticket_opening(rng: random.Random, number: int) -> str:
    """A first sentence naming a case number, so every item's first sentence (and answer) differs."""
    subject = rng.choice(SUBJECTS)
    return f"Case {number}: {subject} {rng.choice(VERBS)} {rng.choice(CLAUSES)} {rng.choice(TAILS)}."


def ticket_detail(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(DETAILS)
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(CLAUSES)} {rng.choice(TAILS)}."


def fill(rng: random.Random, opening: str, target_tokens: int, sentence) -> str:
    """`opening` followed by sentences from `sentence(rng)` until about `target_tokens` long."""
    parts = [opening]
    while tokens(" ".join(parts)) < target_tokens:
        parts.append(sentence(rng))
    text = " ".join(parts)
    # Drop the last sentence if that lands closer to the target.
    shorter = " ".join(parts[:-1])
    if len(parts) > 1 and abs(tokens(shorter) - target_tokens) < abs(tokens(text) - target_tokens):
        return shorter
    return text


def ticket(rng: random.Random, number: int, target_tokens: int) -> str:
    """A support ticket of about `target_tokens` tokens; its first sentence is unique by number."""
    return fill(rng, ticket_opening(rng, number), target_tokens, ticket_detail)


def fact_sentence(rng: random.Random, topic: str) -> str:
    return f"{rng.choice(FACT_OPENERS)} for {topic} {rng.choice(FACT_CLAUSES)} {rng.choice(DOC_TAILS)}."


def document(rng: random.Random, number: int, target_tokens: int) -> str:
    """A short article of about `target_tokens` tokens, in paragraphs, under a markdown title."""
    topic = rng.choice(TOPICS)
    opening = f"Report {number} looks at {topic} {rng.choice(DOC_TAILS)}."
    body = fill(rng, opening, target_tokens - 8, lambda r: fact_sentence(r, topic))
    sentences = body.split(". ")
    paragraphs = [". ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
    text = "\n\n".join(p if p.endswith(".") else p + "." for p in paragraphs)
    return f"# Notes on {topic}\n\n{text}\n"


def padded_prose(rng: random.Random, heading: str, target_tokens: int) -> str:
    """Instruction-like prose of about `target_tokens` tokens (for system prompts)."""
    rules = [
        "Answer in plain language and keep a friendly, professional tone.",
        "Never invent order numbers, prices or dates that the request does not state.",
        "If the request is ambiguous, say which reading you chose and why.",
        "Prefer short sentences; one idea per sentence.",
        "Refer to the customer in the second person.",
        "Do not promise refunds; say that a colleague will review the case.",
        "Quote the exact product name the customer used.",
        "Flag anything that sounds like a security problem.",
        "Keep personal data out of the answer.",
        "When a request mentions a deadline, repeat the deadline in the answer.",
        "Use the metric system and the customer's currency.",
        "Close with the next step the customer should expect.",
    ]
    lines = [heading]
    number = 1
    while tokens("\n".join(lines)) < target_tokens:
        lines.append(f"Rule {number}: {rng.choice(rules)} {ticket_detail(rng)}")
        number += 1
    return "\n".join(lines)
