"""Rows, dollars, the Markdown table and the verdicts."""

from dataclasses import dataclass, field

# claude-sonnet-4-5 (sides.MODEL), dollars per million tokens (offpeak's bundled price table says
# the same).
PRICE_INPUT = 3.00
PRICE_OUTPUT = 15.00
PRICE_CACHE_READ = 0.30  # 0.1x input
PRICE_CACHE_WRITE = 3.75  # 1.25x input
PRICE_CACHE_WRITE_HOUR = 6.00  # 2x input: Anthropic's 1-hour cache

# Provider batches (Anthropic Message Batches) bill every kind of token at half these prices;
# the discount stacks with prompt caching. offpeak-sim says the same (`batches.price_factor`).
BATCH_FACTOR = 0.5

CLASSIFY_MIN_RATIO = 5.0
BATCH_SIDE = "offpeak, batch lane"
DEGRADE_SIDE = "offpeak, degrades after 4"
DEGRADE_OFF_SIDE = "offpeak, degrades after 4, audit off"
DEGRADE_BATCH_SIDE = "offpeak, batch lane, degrades after 4"
# Issue 50, item 4: the batch lane when the provider answers a batch over six hours (the sim's
# `--batch-spread 21600`: its 45 requests 8 minutes apart), with the 5-minute prompt cache
# (`prompt_cache_ttl: 5m`) and with the hour offpeak takes by itself there.
SPREAD_5M_SIDE = "offpeak, batch over 6 h, 5-minute cache"
SPREAD_HOUR_SIDE = "offpeak, batch over 6 h, 1-hour cache"
# Issue 12's must-show: the batch lane against the same naive row.
BATCH_MIN_RATIOS = {"W-classify": 15.0, "W-summarize": 2.5}


def sim_dollars(billed: dict) -> float:
    """Dollars for offpeak-sim's billed counters (Anthropic style: the four kinds never overlap; the
    1-hour cache's writes are a part of the writes, at their own price)."""
    hour = billed.get("cache_creation_1h_input_tokens", 0)
    return (
        billed.get("input_tokens", 0) * PRICE_INPUT
        + billed.get("output_tokens", 0) * PRICE_OUTPUT
        + billed.get("cache_read_input_tokens", 0) * PRICE_CACHE_READ
        + (billed.get("cache_creation_input_tokens", 0) - hour) * PRICE_CACHE_WRITE
        + hour * PRICE_CACHE_WRITE_HOUR
    ) / 1_000_000


def dollars_agree(a: float, b: float) -> bool:
    """Equal to within rounding: a millionth of a dollar, or 0.01 % of the sum."""
    return abs(a - b) <= max(1e-6, 1e-4 * max(abs(a), abs(b)))


@dataclass
class Row:
    workload: str
    side: str  # "naive", "offpeak", "offpeak, 20 % damaged"
    total: int  # items
    calls: int = 0
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    dollars_sim: float = 0.0
    dollars_ledger: float | None = None
    ratio: float | None = None  # naive / this, offpeak rows only
    correct: int = 0
    wall: float = 0.0
    error: str | None = None
    stats: dict = field(default_factory=dict)  # the sim's full /sim/stats
    audits: dict = field(default_factory=dict)  # job -> `offpeak audit JOB --json`
    notes: list[str] = field(default_factory=list)

    def take_stats(self, stats: dict) -> None:
        """The sim's counters: live answers (`billed`) at live prices plus provider-batch answers
        (`billed_batch`) at batch prices. The token columns add the two; `calls` adds the
        requests the sim's batches ended to its live API calls."""
        billed = stats.get("billed", {})
        batch = stats.get("billed_batch", {})
        ended = stats.get("batches", {})
        self.stats = stats
        self.calls = stats.get("calls", 0) + sum(
            ended.get(k, 0) for k in ["succeeded", "errored", "expired", "canceled"])
        self.input = billed.get("input_tokens", 0) + batch.get("input_tokens", 0)
        self.output = billed.get("output_tokens", 0) + batch.get("output_tokens", 0)
        self.cache_read = billed.get("cache_read_input_tokens", 0) + batch.get("cache_read_input_tokens", 0)
        self.cache_write = (
            billed.get("cache_creation_input_tokens", 0) + batch.get("cache_creation_input_tokens", 0))
        self.dollars_sim = sim_dollars(billed) + BATCH_FACTOR * sim_dollars(batch)


def money(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def count(value: int) -> str:
    return f"{value:,}"


HEADER = [
    "workload", "side", "calls", "input", "cache read", "cache write", "output",
    "$ sim", "$ ledger", "naive/offpeak", "correct", "wall s",
]


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * 10) + "|"]
    for r in rows:
        if r.error:
            cells = [r.workload, r.side, "CRASHED: " + r.error.replace("|", "/").replace("\n", " ")[:160]]
            cells += [""] * (len(HEADER) - len(cells))
        else:
            cells = [
                r.workload, r.side, count(r.calls), count(r.input), count(r.cache_read),
                count(r.cache_write), count(r.output), money(r.dollars_sim), money(r.dollars_ledger),
                "—" if r.ratio is None else f"{r.ratio:.1f}x", f"{r.correct:,}/{r.total:,}",
                f"{r.wall:.2f}" if r.wall < 10 else f"{r.wall:.1f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def find(rows: list[Row], workload: str, side: str) -> Row | None:
    return next((r for r in rows if r.workload == workload and r.side == side and not r.error), None)


def verdicts(rows: list[Row], damage_sides: list[str]) -> list[str]:
    """One line per must-show; a failed must-show says FAIL, it does not stop the benchmark."""
    out = []
    classify = find(rows, "W-classify", "offpeak")
    if classify and classify.ratio is not None:
        ok = classify.ratio >= CLASSIFY_MIN_RATIO
        out.append(
            f"W-classify {classify.ratio:.1f}x cheaper than naive "
            f"(must be at least {CLASSIFY_MIN_RATIO:.0f}x): {'PASS' if ok else 'FAIL'}")
    else:
        out.append("W-classify at least 5x cheaper than naive: FAIL (no result)")

    offpeak_rows = [r for r in rows if r.side != "naive" and not r.error]
    disagree = [r for r in offpeak_rows if r.dollars_ledger is None or not dollars_agree(r.dollars_sim, r.dollars_ledger)]
    if offpeak_rows:
        what = ", ".join(f"{r.workload} ({r.side})" for r in disagree)
        out.append(f"$ sim and $ ledger agree: {'PASS' if not disagree else 'FAIL: ' + what}")
    else:
        out.append("$ sim and $ ledger agree: FAIL (no offpeak result)")

    for workload, least in BATCH_MIN_RATIOS.items():
        if not any(r.workload == workload for r in rows):
            continue
        batch = find(rows, workload, BATCH_SIDE)
        if batch and batch.ratio is not None:
            # The lane's price, its batch audit's cost aside (issue 25 caps that at 3 % and its own
            # verdicts judge it); both ratios are shown.
            audited = sum(a.get("audit_dollars", 0.0) for a in batch.audits.values())
            naive = find(rows, workload, "naive")
            lane = batch.ratio
            if audited > 0 and naive and batch.dollars_sim > audited:
                lane = naive.dollars_sim / (batch.dollars_sim - audited)
            aside = f" ({lane:.2f}x without its batch audit's {money(audited)})" if audited > 0 else ""
            ok = lane >= least and batch.correct == batch.total
            out.append(
                f"{workload} batch lane {batch.ratio:.2f}x cheaper than naive{aside}, {batch.correct:,}/{batch.total:,} "
                f"correct (must be at least {least:g}x, every item): {'PASS' if ok else 'FAIL'}")
        else:
            out.append(f"{workload} batch lane at least {least:g}x cheaper than naive: FAIL (no result)")

    five, hour = find(rows, "W-classify", SPREAD_5M_SIDE), find(rows, "W-classify", SPREAD_HOUR_SIDE)
    if five and hour and not five.error and not hour.error and hour.dollars_sim > 0:
        ok = hour.dollars_sim < five.dollars_sim and hour.correct == hour.total
        out.append(
            f"W-classify batch answered over six hours: the 1-hour cache {money(hour.dollars_sim)} against the 5-minute "
            f"{money(five.dollars_sim)} ({five.dollars_sim / hour.dollars_sim:.2f}x), {hour.cache_read:,} tokens read "
            f"from the cache against {five.cache_read:,}, the same {hour.calls:,} calls "
            f"(must cost less, every item right): {'PASS' if ok else 'FAIL'}")
    elif five or hour:
        out.append("W-classify batch over six hours, 1-hour cache cheaper than 5-minute: FAIL (no result)")

    # The row without the audit against a degrading model is there to be wrong.
    wrong = [r for r in rows if not r.error and r.correct != r.total and r.side != DEGRADE_OFF_SIDE]
    crashed = " (crashed rows left out)" if any(r.error for r in rows) else ""
    out.append(
        f"every item answered correctly on every row{crashed}: "
        + ("PASS" if not wrong else "FAIL: " + ", ".join(f"{r.workload} {r.side} {r.correct}/{r.total}" for r in wrong)))

    for damage_side in damage_sides:
        damaged = find(rows, "W-classify", damage_side)
        how = damage_side.removeprefix("offpeak, 20 % damaged").removeprefix(", ")
        label = "W-classify with 20 % of batched answers damaged" + (f" ({how})" if how else "")
        if damaged:
            ok = damaged.correct == damaged.total
            extra = damaged.calls - classify.calls if classify else None
            cost = f", {damaged.calls:,} calls" + (f" ({extra:+,} vs undamaged)" if extra is not None else "")
            out.append(f"{label}: {damaged.correct:,}/{damaged.total:,} correct{cost}: {'PASS' if ok else 'FAIL'}")
        else:
            out.append(f"{label}: FAIL (no result)")
    out += audit_verdicts(rows)
    return out


def audit_summary(row: Row) -> tuple[float, float, str]:
    """The audit's dollars, the job's dollars, and the batch size the model settled on."""
    audit = row.audits.get("classify", {})
    caps = [m.get("cap") for m in audit.get("models", [])]
    cap = caps[0] if caps and caps[0] is not None else None
    size = "8 (unchanged)" if cap is None else ("1 (batching off)" if cap <= 1 else str(cap))
    return audit.get("audit_dollars", 0.0), audit.get("job_dollars", 0.0), size


def audit_verdicts(rows: list[Row]) -> list[str]:
    """Issue 25's must-shows: against a model that degrades after position 4, answers right with the
    audit (at least 95 %) and what each way cost; against one that does not, the audit's share of
    the spend (at most 3 %) and an unchanged batch size."""
    out = []
    off = find(rows, "W-classify", DEGRADE_OFF_SIDE)
    on = find(rows, "W-classify", DEGRADE_SIDE)
    if on:
        spent, _, size = audit_summary(on)
        ok = on.correct >= 0.95 * on.total
        without = (
            f"without the audit {off.correct:,}/{off.total:,} right for {money(off.dollars_sim)}; " if off else "")
        out.append(
            f"W-classify, a model that degrades after position 4: {without}with it {on.correct:,}/{on.total:,} "
            f"right for {money(on.dollars_sim)} (audit {money(spent)}), settled on {size} items a prompt "
            f"(must be at least 95 % right): {'PASS' if ok else 'FAIL'}")
    lane = find(rows, "W-classify", DEGRADE_BATCH_SIDE)
    if lane:
        spent, _, size = audit_summary(lane)
        ok = lane.correct >= 0.95 * lane.total
        out.append(
            f"W-classify in the batch lane, a model that degrades after position 4: {lane.correct:,}/{lane.total:,} "
            f"right for {money(lane.dollars_sim)} (audit {money(spent)}), settled on {size} items a prompt "
            f"(must be at least 95 % right): {'PASS' if ok else 'FAIL'}")
    holds = find(rows, "W-classify", "offpeak")
    if holds and holds.audits:
        spent, total, size = audit_summary(holds)
        share = spent / total if total else 0.0
        ok = share <= 0.03 and size.startswith("8")
        out.append(
            f"W-classify, a model that holds up: the audit cost {money(spent)}, {share:.1%} of {money(total)}, "
            f"batch size {size} (must be at most 3 %, unchanged): {'PASS' if ok else 'FAIL'}")
    return out
