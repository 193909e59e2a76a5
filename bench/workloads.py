"""The benchmark's workloads: what is asked, of which job, with which shared prefix.

A workload is a list of jobs (one offpeak job spec each) and a list of items. Each item knows
the user message both sides send for it (`message`: the job's template filled in), so the naive
client, offpeak and `/sim/expected` all see the very same text.
"""

import random
from dataclasses import dataclass, field

import textgen


@dataclass
class Job:
    name: str
    kind: str  # prompt | summarize
    system: str
    instructions: str | None
    template: str  # with {{item}}
    max_tokens: int
    queue: bool = False  # items come from `offpeak submit`
    inputs: list[str] | None = None  # summarize: glob of generated files

    @property
    def system_prompt(self) -> str:
        """The system prompt offpeak sends: system and instructions joined by a blank line."""
        return "\n\n".join(p for p in [self.system, self.instructions] if p)

    def render(self, item_text: str) -> str:
        return self.template.replace("{{item}}", item_text)


@dataclass
class Item:
    id: str
    job: str
    text: str  # the {{item}} variable
    message: str  # the rendered user message
    file: str | None = None  # summarize: the input file (relative to the workspace)


@dataclass
class Workload:
    name: str
    description: str
    jobs: list[Job]
    items: list[Item]
    sim_args: list[str] = field(default_factory=list)
    feed: str = "inline"  # inline | files | submit

    def job(self, name: str) -> Job:
        return next(j for j in self.jobs if j.name == name)


def scaled(count: int, scale: float) -> int:
    return max(4, round(count * scale))


def few_shot_examples(rng: random.Random, target_tokens: int) -> str:
    labels = ["billing", "login", "shipping", "refund", "bug", "account", "other"]
    lines = [
        "Classify each support ticket into exactly one label: " + ", ".join(labels) + ".",
        "Reply with the label and a short reason. Here are labelled examples.",
        "",
    ]
    number = 90000
    while textgen.tokens("\n".join(lines)) < target_tokens:
        number += 1
        lines.append("Ticket: " + textgen.ticket(rng, number, 60))
        lines.append(f"Label: {rng.choice(labels)}")
        lines.append("")
    return "\n".join(lines).strip()


def classify(scale: float = 1.0, seed: int = 1) -> Workload:
    """W-classify: 1,000 tickets of ~80 tokens, ~1,500 tokens of few-shot examples, ~20-token answers."""
    rng = random.Random(seed)
    job = Job(
        name="classify",
        kind="prompt",
        system="You label support tickets.",
        instructions=few_shot_examples(rng, 1500),
        template="{{item}}",
        max_tokens=40,
    )
    items = []
    for n in range(1, scaled(1000, scale) + 1):
        text = textgen.ticket(rng, n, rng.randint(70, 90))
        items.append(Item(id=f"t{n:04d}", job=job.name, text=text, message=job.render(text)))
    return Workload(
        name="W-classify",
        description="1,000 tickets x ~80 tok; ~1,500 tok few-shot prefix; ~20 tok answers",
        jobs=[job],
        items=items,
        sim_args=["--answer-tokens", "20"],
    )


SUMMARIZE_INSTRUCTIONS = (
    "Summaries are read by busy people on a phone, so lead with the single most important finding "
    "and keep the wording of the document where you can. Use only facts stated in the document; "
    "never add background knowledge, numbers or names that it does not contain. Keep the order of "
    "the facts as the document gives them. Do not start with phrases like 'This document' or "
    "'The author'. Write complete sentences in plain prose without lists, headings or markdown. "
    "If the document contradicts itself, report both statements. If it is empty or not prose, "
    "say so in one sentence. Aim for two or three sentences and at most about eighty tokens; a "
    "shorter summary is better than one padded with filler. Keep units and currencies as written, "
    "and keep every date exactly as it appears."
)


def summarize(scale: float = 1.0, seed: int = 2) -> Workload:
    """W-summarize: 300 documents of ~400 tokens, ~200 tokens of instructions, ~80-token summaries."""
    rng = random.Random(seed)
    job = Job(
        name="summarize",
        kind="summarize",
        system="You write short, faithful summaries.",
        instructions=SUMMARIZE_INSTRUCTIONS,
        template="Summarize the following document.\n\n<document>\n{{item}}\n</document>",
        max_tokens=120,
        inputs=["docs/*.md"],
    )
    items = []
    for n in range(1, scaled(300, scale) + 1):
        path = f"docs/d{n:03d}.md"
        text = textgen.document(rng, n, rng.randint(360, 440))
        items.append(Item(id=path, job=job.name, text=text, message=job.render(text), file=path))
    return Workload(
        name="W-summarize",
        description="300 docs x ~400 tok; ~200 tok instructions; ~80 tok summaries",
        jobs=[job],
        items=items,
        sim_args=["--summary-tokens", "80"],
        feed="files",
    )


# (job name, system prompt heading, system prompt tokens, share of the requests)
INBOX_AGENTS = [
    ("agent-support", "You are the support agent of an online shop. House rules follow.", 1300, 0.5),
    ("agent-triage", "You triage incoming requests for an IT help desk. House rules follow.", 1100, 0.3),
    ("agent-notes", "You turn requests into one-line notes for a shared log.", 300, 0.2),
]


def inbox_size(rng: random.Random) -> int:
    """Mixed request sizes: mostly short, some medium, a few long."""
    roll = rng.random()
    if roll < 0.6:
        return rng.randint(25, 120)
    if roll < 0.9:
        return rng.randint(150, 500)
    return rng.randint(700, 1400)


def inbox(scale: float = 1.0, seed: int = 3) -> Workload:
    """W-inbox: 2,000 submitted requests of mixed sizes from three agents with three system prompts."""
    rng = random.Random(seed)
    jobs = [
        Job(
            name=name,
            kind="prompt",
            system=textgen.padded_prose(rng, heading, size),
            instructions=None,
            template="{{item}}",
            max_tokens=60,
            queue=True,
        )
        for name, heading, size, _ in INBOX_AGENTS
    ]
    weights = [share for *_, share in INBOX_AGENTS]
    items = []
    for n in range(1, scaled(2000, scale) + 1):
        job = rng.choices(jobs, weights=weights)[0]
        text = textgen.ticket(rng, n, inbox_size(rng))
        prefix = "a" + str(jobs.index(job) + 1)
        items.append(Item(id=f"{prefix}-{n:04d}", job=job.name, text=text, message=job.render(text)))
    return Workload(
        name="W-inbox",
        description="2,000 submitted requests, mixed sizes, 3 agents x 3 system prompts",
        jobs=jobs,
        items=items,
        feed="submit",
    )


def all_workloads(scale: float = 1.0) -> list[Workload]:
    return [classify(scale), summarize(scale), inbox(scale)]
