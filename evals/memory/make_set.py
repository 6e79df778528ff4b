"""Writes `conversations.json`: a synthetic long-conversation memory set (NOT LoCoMo).

`python evals/memory/make_set.py` regenerates it byte for byte (fixed seeds). Four English
conversations between a user and an assistant, each about 160 turns (user + assistant message)
over about twenty dated sessions spread across a year. Personal facts are said by the user in
passing and answered by a long, off-topic partner message (as in LoCoMo, where the other speaker's
reply dilutes a relevant message); filler turns ask product questions or chat, some of them
near-misses of a fact ("my neighbour's cat"). Twenty questions per conversation, asked after
the last session, each labelled with the user messages that hold its evidence:

- `single`: one evidence message, paraphrased (other words than the fact's);
- `multi`: two or more evidence messages from different sessions (aggregations, "the book my new
  manager lent me" = who the manager is + what she lent);
- `date`: the question names a day, a month, "yesterday" or "last week" and little else.

Conversations 1-2 are the `tune` split, 3-4 the `holdout` split.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).parent
START = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)

POOLS = {
    "pet_kind": ["dog", "cat", "rabbit", "parrot"],
    "pet_name": ["Pirata", "Mostassa", "Bruna", "Nuvol", "Tofu", "Canela", "Llamp", "Perla"],
    "manager": ["Laia Ferrer", "Helena Vidal", "Nuria Soler", "Carme Puig", "Judit Roca", "Alba Serra"],
    "team": ["logistics", "payments", "mobile", "data platform", "security", "design systems"],
    "city1": ["Lisbon", "Vienna", "Krakow", "Porto", "Ghent", "Bologna", "Tallinn", "Lyon"],
    "topic": ["observability", "accessibility", "open data", "robotics", "edge computing", "API design"],
    "instrument1": ["piano", "cello", "violin", "saxophone"],
    "instrument2": ["ukulele", "banjo", "mandolin", "harmonica"],
    "book": ["The Mythical Man-Month", "Shape Up", "Thinking in Systems", "Deep Work", "Slow Productivity"],
    "race": ["Barcelona half marathon", "Girona 10K", "Tarragona trail race", "Lleida night run"],
    "race_time": ["1 hour 52 minutes", "48 minutes", "2 hours 5 minutes", "55 minutes", "1 hour 39 minutes"],
    "sister": ["Marina", "Ona", "Clara", "Julia", "Berta", "Irene"],
    "city2": ["Edinburgh", "Montreal", "Copenhagen", "Zurich", "Dublin", "Rotterdam"],
    "item": ["road bike", "espresso machine", "standing desk", "mirrorless camera", "kayak"],
    "price": ["640", "389", "520", "910", "275"],
    "allergen": ["hazelnuts", "shellfish", "kiwi", "sesame", "penicillin"],
    "restaurant": ["Can Roca del Mar", "La Fonda Blava", "El Rebost", "Casa Tomas", "Sa Cuina"],
    "dish": ["black rice", "suquet de peix", "calcots with romesco", "duck with pears", "fideua"],
    "neighbourhood": ["Gracia", "Sants", "Poblenou", "Sant Andreu", "Horta", "El Clot"],
    "project": ["Atlas", "Bruixola", "Cirrus", "Delta", "Estel", "Fenix"],
    "client": ["a regional hospital", "a ferry company", "a wine cooperative", "the city museum"],
    "club": ["climbing", "chess", "rowing", "photography", "board games"],
    "friend": ["Pau", "Jordi", "Arnau", "Marc", "Oriol", "Biel"],
    "wedding_city": ["Menorca", "the Priorat", "Cadaques", "Besalu", "Peratallada"],
    "car": ["Skoda Octavia", "Toyota Yaris", "Renault Clio", "Seat Leon", "Kia Niro"],
}

PRODUCT_QUESTIONS = [
    "How do I export a project to CSV?",
    "Can I invite a guest to a single board without giving access to the whole workspace?",
    "Where do I change the billing email for our invoices?",
    "Is there a way to make a task repeat every two weeks?",
    "How long does an API token last before it expires?",
    "Can I connect Slack so the team gets notified when a task is done?",
    "What happens if someone types the wrong password five times?",
    "How do I turn on two-step verification for my account?",
    "Can I sync deadlines with my Outlook calendar?",
    "How do I restore a project I archived by mistake?",
    "Is there a limit on attachment size?",
    "Can viewers leave comments on tasks?",
]
CHAT = [
    "Good morning! Busy day ahead, lots of meetings.",
    "Quick one before lunch.",
    "Thanks, that helped a lot.",
    "Back again, sorry for all the questions today.",
    "The weather is awful today, rain all morning.",
    "I think I finally understand how the permissions work.",
    "Coffee number three and it's not even noon.",
    "Happy Friday! Almost done for the week.",
]
NEAR_MISSES = [
    "My neighbour's cat keeps sneaking onto our balcony, it's hilarious.",
    "A colleague ran a marathon last year and still talks about it every day.",
    "My cousin is thinking about buying a camera, but she can't decide.",
    "Someone at the office brought hazelnut cake, the whole floor smelled of it.",
    "Our old team lead used to recommend books all the time, I never read them.",
    "I walked past a new restaurant near the station, it looked expensive.",
    "A friend of a friend moved abroad last month, everybody is jealous.",
    "There was a guitar concert in the square yesterday, very loud.",
    "My parents are talking about changing their car again.",
    "The chess tournament on TV was surprisingly exciting.",
]
PARTNER = [
    "That sounds lovely! By the way, on the workspace side: the weekly report can be exported to PDF "
    "from the Reports tab, and anyone with the Editor role can schedule it to arrive every Monday "
    "morning, so nobody has to remember to send it by hand.",
    "Congratulations! Unrelated, but since you asked about notifications last time: each member can "
    "choose between instant, hourly and daily digests in Settings > Notifications, and admins can set "
    "a default for new members of the workspace.",
    "How nice, enjoy it! A small tip while I have you: archived projects keep their history and files "
    "for ninety days, and an admin can restore them from the Archive page with one click before they "
    "are deleted for good.",
    "Good for you! On a different note, remember that guests only see the boards they are invited "
    "to, and their comments are marked with a badge so the team knows who is outside the company.",
    "Great news. Also, if your team works across time zones, the calendar view can show deadlines in "
    "each member's local time; switch it on under View options in the top right corner.",
    "Wonderful. Before I forget: API tokens can be limited to read-only scopes, which is the safest "
    "choice for dashboards and reporting tools that never need to change anything.",
    "Lovely to hear. By the way, the mobile app now supports offline editing; changes are synced "
    "as soon as the phone is back online, and conflicts are shown side by side.",
    "That's exciting! One more thing about billing: invoices are issued on the first of each month "
    "and you can download every past invoice as a PDF from the Billing page.",
]
ANSWERS = [
    "You can do that from the project menu: open the project, choose Export and pick the format. "
    "Large projects are prepared in the background and you get an email with the download link.",
    "Yes. Go to Settings, open the relevant section and change the option there; the change applies "
    "to the whole workspace within a minute, and members see a short notice the next time they log in.",
    "That is handled by the workspace administrators. If you do not see the option, ask an admin to "
    "give you the Manager role, or ask them to change it for you in Settings.",
    "Not directly, but there is a workaround: create a template with the fields you need and apply "
    "it whenever you start a new one. Templates can be shared with the whole team.",
    "By default it lasts ninety days; an admin can shorten that in the security settings, and every "
    "token can be revoked at any moment from the API page.",
    "Glad it helped! Let me know if anything else comes up, I am here all day.",
]


@dataclass
class Turn:
    at: datetime
    user: str
    assistant: str


@dataclass
class Conversation:
    id: str
    split: str
    rng: random.Random
    slots: dict[str, str]
    turns: list[Turn] = field(default_factory=list)
    facts: dict[str, int] = field(default_factory=dict)
    """fact name → turn index of its evidence (user message)."""


FACTS = [
    ("pet", "Big news at home: we adopted a {pet_kind} from the shelter and named her {pet_name}."),
    ("manager", "I have a new boss at work, {manager}; she used to lead the {team} team."),
    ("trip", "I'm back from {city1}! The conference on {topic} was packed, three days of talks."),
    ("instrument1", "I started {instrument1} lessons with a teacher from the conservatory, twice a week."),
    ("book", "{manager} lent me {book}, she says it changed how she plans her quarters."),
    ("race", "I ran the {race} this morning and finished in {race_time}, my legs are destroyed."),
    ("sister", "My sister {sister} just told us she is moving to {city2} for a new job in September."),
    ("item", "I finally treated myself to a {item}; {price} euros, but worth every cent."),
    ("instrument2", "I couldn't resist and got a second-hand {instrument2}, now I practise every night."),
    ("allergy", "The doctor confirmed it: I'm allergic to {allergen}, so no more of those for me."),
    ("restaurant", "We had dinner at {restaurant} for our anniversary, the {dish} was unforgettable."),
    ("visit", "Booked the flights to go and see {sister} in her new city for the long weekend."),
    ("move", "We signed the lease for a flat in {neighbourhood}; the move is at the end of the month."),
    ("project", "We launched {project} for {client} today, months of work finally live."),
    ("club", "I joined a {club} club that meets every Saturday morning, great people."),
    ("friend", "My friend {friend} is getting married in {wedding_city} and asked me to be the witness."),
    ("car", "Our old car died on the motorway, so we bought a used {car} from a dealer in Mataro."),
]
SINGLE = [
    ("pet", "What is the name of the animal we brought home from the shelter?"),
    ("manager", "Who is my new boss?"),
    ("trip", "Which city was the {topic} conference in?"),
    ("allergy", "What did the doctor say I can no longer eat?"),
    ("restaurant", "What did I eat on our anniversary dinner?"),
    ("move", "Which part of the city are we moving to?"),
    ("project", "Who was the client of the project we launched?"),
    ("club", "What kind of club did I join?"),
    ("car", "What car did we buy after the old one broke down?"),
    ("item", "How much did I spend on the thing I treated myself to?"),
]
MULTI = [
    (("instrument1", "instrument2"), "Which musical instruments have I taken up this year?"),
    (("manager", "book"), "Which book did my new boss lend me?"),
    (("sister", "visit"), "Which city am I flying to for the long weekend?"),
    (("race", "item"), "What sport did I do in the morning, and what did I treat myself to later?"),
    (("friend", "restaurant"), "Where is my friend's wedding, and where did we celebrate our anniversary?"),
    (("pet", "move"), "Where will our new pet live once we move?"),
    (("trip", "project"), "Which conference did I attend and which project did we launch?"),
]


def build(index: int, split: str) -> tuple[dict[str, object], int]:
    rng = random.Random(1000 + index)
    slots = {name: rng.choice(values) for name, values in POOLS.items()}
    conversation = Conversation(f"c{index}", split, rng, slots)
    facts = list(FACTS)
    rng.shuffle(facts)
    order = {name: n for n, (name, _) in enumerate(facts)}
    for first, second in (("manager", "book"), ("sister", "visit")):  # a reference needs its referent
        if order[first] > order[second]:
            i, j = order[first], order[second]
            facts[i], facts[j] = facts[j], facts[i]
            order = {name: n for n, (name, _) in enumerate(facts)}
    day = START + timedelta(days=rng.randrange(0, 10))
    sessions = 20
    for session in range(sessions):
        pairs = rng.randrange(6, 11)
        fact_slot = rng.randrange(1, pairs - 1)
        moment = day.replace(hour=rng.randrange(8, 20))
        for pair in range(pairs):
            at = moment + timedelta(minutes=3 * pair)
            if pair == fact_slot and session < len(facts):
                name, template = facts[session]
                conversation.facts[name] = len(conversation.turns)
                conversation.turns.append(Turn(at, template.format(**slots), rng.choice(PARTNER)))
            elif session >= len(facts) and pair == fact_slot:
                conversation.turns.append(Turn(at, rng.choice(NEAR_MISSES), rng.choice(PARTNER)))
            else:
                _filler(conversation, at)
        day += timedelta(days=rng.randrange(9, 20))
    last = conversation.turns[-1].at
    asked = last + timedelta(days=2)
    questions = _questions(conversation, asked)
    return {
        "id": conversation.id,
        "split": split,
        "turns": [
            {"turn": n + 1, "at": t.at.isoformat(), "user": t.user, "assistant": t.assistant}
            for n, t in enumerate(conversation.turns)
        ],
        "questions": questions,
    }, len(conversation.turns)


def _filler(conversation: Conversation, at: datetime) -> None:
    rng = conversation.rng
    roll = rng.random()
    if roll < 0.55:
        user, answer = rng.choice(PRODUCT_QUESTIONS), rng.choice(ANSWERS)
    elif roll < 0.85:
        user, answer = rng.choice(CHAT), rng.choice(ANSWERS[-1:] + PARTNER)
    else:
        user, answer = rng.choice(NEAR_MISSES), rng.choice(PARTNER)
    conversation.turns.append(Turn(at, user, answer))


def _questions(conversation: Conversation, asked: datetime) -> list[dict[str, object]]:
    c, slots = conversation, conversation.slots
    out: list[dict[str, object]] = []

    def add(kind: str, question: str, facts: list[str], at: datetime = asked) -> None:
        evidence = sorted(c.facts[f] + 1 for f in facts)
        out.append(
            {
                "id": f"{c.id}-q{len(out) + 1:02d}",
                "kind": kind,
                "question": question.format(**slots),
                "asked_at": at.isoformat(),
                "evidence": [{"turn": t, "role": "user"} for t in evidence],
            }
        )

    for name, question in SINGLE:
        if name in c.facts:
            add("single", question, [name])
    for names, question in MULTI:
        if all(n in c.facts for n in names):
            add("multi", question, list(names))
    by_day: dict[str, list[str]] = {}
    by_month: dict[str, list[str]] = {}
    for name, turn in c.facts.items():
        at = c.turns[turn].at
        by_day.setdefault(at.date().isoformat(), []).append(name)
        by_month.setdefault(at.strftime("%Y-%m"), []).append(name)
    fact_days = sorted(by_day, key=lambda d: c.facts[by_day[d][0]])
    for day in c.rng.sample(fact_days[:-2], 3):
        moment = datetime.fromisoformat(day)
        form = c.rng.choice(["%B %d", "%d %B", "%Y-%m-%d"])
        add("date", f"What news did I share with you on {moment.strftime(form).lstrip('0')}?", by_day[day])
    month = c.rng.choice([m for m, names in by_month.items() if len(names) <= 2])
    add(
        "date",
        f"What did I tell you about in {datetime.strptime(month, '%Y-%m').strftime('%B %Y')}?",
        by_month[month],
    )
    last_fact = max(c.facts, key=lambda n: c.facts[n])
    last_day = c.turns[c.facts[last_fact]].at
    add("date", "What did I tell you yesterday?", [last_fact], at=last_day + timedelta(days=1))
    add("date", "What news did I give you last week?", [last_fact], at=last_day + timedelta(days=7))
    return out


def main() -> None:
    conversations = []
    total = 0
    for index in range(1, 5):
        conversation, turns = build(index, "tune" if index <= 2 else "holdout")
        conversations.append(conversation)
        total += turns
    data = {
        "about": "Synthetic long conversations for history-selection recall; generated by make_set.py. "
        "Not LoCoMo, and not a substitute for it.",
        "conversations": conversations,
    }
    (HERE / "conversations.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    questions = sum(len(c["questions"]) for c in conversations)  # type: ignore[arg-type]
    print(f"{len(conversations)} conversations, {total} turns, {questions} questions")


if __name__ == "__main__":
    main()
