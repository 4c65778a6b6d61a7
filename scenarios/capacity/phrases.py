"""The surface forms a capacity brief is written in: several per query kind, per reference to
an earlier step, per unit and per number. Every form starts with a word (never a name), so a
sentence can start with it; each says the same thing as its siblings, exactly."""

from __future__ import annotations

from netdojo.scenarios.capacity.schema import Role

NOUNS: dict[Role, tuple[tuple[str, str], ...]] = {
    "root": (("fabric", "fabrics"), ("data-centre root", "data-centre roots")),
    "superblock": (("superblock", "superblocks"), ("super block", "super blocks")),
    "agg_block": (
        ("aggregation block", "aggregation blocks"),
        ("agg block", "agg blocks"),
        ("aggregation-layer block", "aggregation-layer blocks"),
    ),
    "spine_block": (("spine block", "spine blocks"), ("spine-layer block", "spine-layer blocks")),
    "rack": (("rack", "racks"),),
    "switch": (("packet switch", "packet switches"), ("switch", "switches")),
    "linecard": (("linecard", "linecards"), ("line card", "line cards")),
    "port": (("port", "ports"), ("switch port", "switch ports")),
    "control_domain": (("control domain", "control domains"),),
}
CHASSIS = (("chassis", "chassis"),)

MENTIONS = (
    "{noun} {name}",
    "{noun} `{name}`",
    "`{name}`",
    "{name}",
    "the {noun} named {name}",
    "{name} ({noun})",
    "{noun} {name}",
)
"""How a named entity is written; ``{noun}`` is a word for its kind or its kind's name."""

REFS = {
    "first": (
        "the {noun} ranked first in step {n}",
        "the top {noun} of the ranking from step {n}",
        "whichever {noun} came out on top in step {n}",
        "the {noun} with the most capacity in step {n}'s ranking",
        "the highest-ranked {noun} of step {n}",
    ),
    "last": (
        "the {noun} ranked last in step {n}",
        "the bottom {noun} of the ranking from step {n}",
        "the lowest-ranked {noun} of step {n}",
        "the {noun} at the end of the ranking from step {n}",
        "whichever {noun} came last in step {n}",
    ),
    "subject": (
        "the same {noun} as in step {n}",
        "the {noun} from step {n}",
        "the {noun} step {n} was about",
        "that same {noun} (from step {n})",
    ),
    "scope": (
        "the {noun} step {n} acted in",
        "the {noun} involved in step {n}",
        "the {noun} where step {n} took place",
    ),
}
SCOPES = {
    "remove": (
        "the {noun} that held what step {n} removed",
        "the {noun} step {n} removed something from",
    ),
    "add": ("the {noun} that received the new entity in step {n}", "the {noun} step {n} added to"),
    "move": ("the {noun} the switch was moved into in step {n}", "the new home from step {n}"),
    "set_speed": ("the {noun} holding the switch of step {n}",),
    "what_if": ("the {noun} that step {n} asked about",),
}
COUNT_REFS = (
    "as many ports as step {n} counted",
    "one port for each port counted in step {n}",
    "N ports, where N is the number found in step {n}",
)

LIST = (
    "list the {children} that {parent} contains directly.",
    "name every {child} sitting directly in {parent}.",
    "which {children} are immediate children of {parent}? List them.",
    "give the {children} one level below {parent} (direct containment only).",
    "enumerate the {children} directly contained by {parent}.",
    "what {children} does {parent} hold directly? Give their names.",
    "the direct {children} of {parent} are to be listed by name.",
)
COUNT = (
    "count the {children} under {scope}, at any depth.",
    "how many {children} does {scope} contain in total, including those nested further down?",
    "find the total number of {children} anywhere below {scope}.",
    "determine how many {children} sit inside {scope}, directly or indirectly.",
    "what is the number of {children} contained, at any level, in {scope}?",
    "tally every {child} beneath {scope} (all levels) and report the number.",
    "the {children} within {scope}, counted through all levels of containment: how many are there?",
)
RANK = (
    "rank the {children} directly in {parent} by aggregate port capacity, highest first; {ties}.",
    "order the direct {children} of {parent} from most to least total port capacity ({ties}).",
    "which of the {children} directly under {parent} has the most capacity? Rank all of them, "
    "largest first; {ties}.",
    "sort the {children} that {parent} directly contains by the sum of their port capacities, "
    "in descending order; {ties}.",
    "produce a ranking of the immediate {children} of {parent} by total capacity, biggest to "
    "smallest; {ties}.",
    "the {children} directly inside {parent} are to be ranked by aggregate port capacity "
    "(descending); {ties}.",
    "by total port capacity, descending, rank every {child} one level below {parent}; {ties}.",
)
TIES = (
    "break ties by name, comparing names as plain strings in ascending order",
    "equal capacities are ordered by name, character by character (plain string order)",
    "ties are broken by ascending name in plain string order (so '10' sorts before '9')",
    "if two are equal, the one whose name is smaller as a plain string comes first",
    "on equal capacity, sort by name ascending, as plain strings (no numeric sorting)",
)
ADD_SWITCH = (
    "add a new {switch} named {name} to {parent}, with {ports}, each of {speed}{card}; "
    "{controller}.",
    "a new {switch}, {name}, goes into {parent}: give it {ports} at {speed} apiece{card}; "
    "{controller}.",
    "install {switch} {name} in {parent} with {ports} ({speed} per port){card}; {controller}.",
    "create {name}, a {switch} in {parent}, carrying {ports}, every one of them {speed}{card}; "
    "{controller}.",
    "into {parent}, add the {switch} {name} with {ports} of {speed} each{card}; {controller}.",
    "provision a {switch} called {name} under {parent}; it has {ports}, each {speed}{card}; "
    "{controller}.",
    "bring up a new {switch} {name} inside {parent} with {ports} running at {speed}{card}; "
    "{controller}.",
)
CARDS = (
    ", its ports on a new {noun} {card}",
    ", holding the ports on one new {noun} named {card}",
    " (ports mounted on a new {noun} {card})",
)
CONTROLLERS = (
    "control domain {cd} controls it",
    "it is to be controlled by the existing control domain {cd}",
    "hand its control to control domain {cd}",
    "make {cd} its controlling control domain",
)
NEW_CONTROLLERS = (
    "it is controlled by a new control domain {cd}, placed directly under {root}",
    "create control domain {cd} directly in {root} to control it",
    "a new control domain, {cd}, contained by {root}, controls it",
)
ADD_PORT = (
    "add a {port} {name} of {speed} to {parent}.",
    "plug a new {port} named {name} into {parent}, at {speed}.",
    "create {port} {name} in {parent} with a capacity of {speed}.",
    "a new {speed} {port}, {name}, must be added to {parent}.",
    "give {parent} one more {port}: {name}, {speed}.",
    "add to {parent} the {port} {name}, rated {speed}.",
    "install an extra {port} called {name} ({speed}) in {parent}.",
)
REMOVE = (
    "remove {target} from the model, together with everything it contains.",
    "decommission {target}: delete it and all that sits under it.",
    "tear out {target}, along with its contents and their relations.",
    "delete {target} and everything below it.",
    "take {target} out of the plan entirely (it and all it contains go).",
    "retire {target}: it and everything nested inside it must disappear from the model.",
    "everything under {target}, and {target} itself, is to be removed.",
)
SET_SPEED = (
    "set every port of {switch} to {speed}.",
    "change the capacity of each port under {switch} to {speed}.",
    "all ports of {switch} are being re-fitted for {speed}; update them in the model.",
    "re-speed the ports on {switch} so that each runs at {speed}.",
    "make every port belonging to {switch} a {speed} port.",
    "update the model: each port contained in {switch} now has a capacity of {speed}.",
    "the ports of {switch} are to be set to {speed}, all of them.",
)
MOVE = (
    "move {switch} into {to}.",
    "re-home {switch} under {to}, ports and all.",
    "take {switch} out of its current {holder} and put it in {to}.",
    "transfer {switch}, with everything it contains, to {to}.",
    "relocate {switch}: from now on {to} contains it.",
    "change the container of {switch} to {to}; keep its ports and controller as they are.",
    "have {switch} moved to {to}.",
)
DRAIN = (
    "if {block} were drained, which {superblocks} would have less than {threshold} of total "
    "port capacity? Do not change the model.",
    "suppose {block} is taken out of service (its capacity drops to zero): list every "
    "{superblock} whose capacity would then be below {threshold}. This is hypothetical; leave "
    "the model as it is.",
    "what-if only: with {block} drained, which {superblocks} end up with less than {threshold} "
    "in aggregate capacity? Do not modify the model.",
    "without changing anything, say which {superblocks} would total less than {threshold} of "
    "capacity if {block} lost all its capacity.",
    "assume {block} is drained for maintenance. Which {superblocks}, if any, would then have an "
    "aggregate port capacity below {threshold}? (Hypothetical: no change to the model.)",
    "hypothetically draining {block}: name the {superblocks} left with less than {threshold} "
    "each. The model stays unchanged.",
    "consider draining {block} (do not actually change the model): which {superblocks} would "
    "be below {threshold} of capacity?",
)
FAIL = (
    "if {switch} failed, how much port capacity would {scope} still have? Answer in {unit}.",
    "suppose {switch} goes down: what aggregate capacity remains in {scope}, in {unit}? Do not "
    "change the model.",
    "hypothetically, with {switch} out of service, what is the remaining total port capacity of "
    "{scope} (in {unit})?",
    "what-if only: after a failure of {switch}, how many {unit} of capacity would be left in "
    "{scope}?",
    "without touching the model, compute the capacity {scope} would keep, in {unit}, if "
    "{switch} were lost.",
    "assume {switch} dies. Report the capacity left in {scope}, expressed in {unit}.",
    "in {unit}, how much capacity would {scope} retain if {switch} were to fail? (Hypothetical "
    "only.)",
)
UNIT_NAMES = {
    "bps": ("bps", "bits per second (bps)"),
    "Mbps": ("Mbps", "megabits per second (Mbps)"),
    "Gbps": ("Gbps", "gigabits per second (Gbps)"),
}
LINKS = ("then ", "after that, ", "next, ", "once that is done, ", "", "building on that, ")
NUMBERING = ("Step {n}: ", "{n}. ", "({n}) ", "{n}) ")
OPENERS = (
    "Capacity-planning request for the data-centre fabric.",
    "A planning ticket for the data-centre network model has come in.",
    "The capacity team needs a change worked through on the fabric model.",
    "Please work through this data-centre planning task.",
    "Here is a planning question about the data-centre topology model.",
    "The network planning model needs your attention.",
)
LOCATIONS = (
    "The model is a JSON file at {path}.",
    "You will find the model, as JSON, at {path}.",
    "The current plan lives in {path} (JSON).",
    "Read the model from {path}; it is JSON.",
)
TASK_HEADERS = ("The task:", "What to do:", "Request:", "Steps, in order:", "Work to do:")
CONVENTIONS = (
    "Conventions: an entity's capacity is the sum of the capacities of all ports it contains, "
    'at any depth. "Directly" means through one containment relation; otherwise containment is '
    "at any depth. Removing an entity removes everything it contains and every relation that "
    "touches any of them. A new entity gets exactly the attributes stated (ports: only the "
    "capacity attribute). A what-if question changes nothing. Speeds in the text may be written "
    "in any unit; the model stores them in its own unit."
)
WRITE_BACK = (
    "When you are done, write the whole updated model back to {path}; if no step changes the "
    "model, leave the file as it is. The model you write must keep every invariant above.",
    "Save the complete model, with your changes, to {path} (unchanged if nothing is to change). "
    "It must still satisfy all the invariants.",
    "Write the full resulting model back to {path} (leave it untouched when nothing changes); "
    "every invariant must hold in it.",
)
SUBMIT = (
    "Then call submit with a JSON array of exactly {count} element(s), one per step, in step "
    "order:",
    "Your submit answer is one JSON array with {count} element(s), in step order:",
    "Answer with submit: a JSON array holding {count} element(s), step by step:",
)
