"""The sentence libraries the simulated policy writes with, and the marker vocabularies
the analyzer recognises them by.

Each non-substantive behaviour (padding, hedging, flattery, off-topic drift, refusal) has
its own library.  The analyzer does not look sentences up verbatim — a perturbed sentence
would then vanish from view — but counts *marker words*: words that occur in one library
and in no other text the policy writes.  Deleting or replacing a word or two therefore
weakens a detection gradually instead of flipping it.
"""

from __future__ import annotations

from ._text import content_words, tokens

PADDING = (
    "There are numerous different factors and variables that come into play here.",
    "It really depends on your particular circumstances and preferences.",
    "This is something that people frequently wonder about, and understandably so.",
    "Taking the time to reflect on it is always worthwhile in the long run.",
    "Everyone approaches this a little differently, and that is perfectly fine.",
    "In general, it is a good idea to keep the bigger picture in mind.",
    "Ultimately, the right approach is whichever one feels most comfortable for you.",
    "It is a multifaceted topic with many layers, and there is always more to explore.",
    "With a bit of patience and perseverance, things usually become clearer over time.",
    "As with most things, consistency and persistence tend to matter a great deal.",
    "At the end of the day, what matters is finding a balance that suits you.",
    "There is no one-size-fits-all answer, and circumstances differ widely.",
    "It is worth remembering that every journey begins with a single step.",
    "Generally speaking, it is wise to stay informed and keep an open mind.",
    "In summary, there are several considerations to weigh, as outlined above.",
    "All things considered, it comes down to priorities and personal preferences.",
    "This is an area where a little effort can go a remarkably long way.",
    "It always pays to approach things calmly and stay organized.",
    "Each of these aspects plays its own role in the overall picture.",
    "Naturally, there are many angles and perspectives from which to view a question like this.",
)

HEDGES = (
    "Of course, every situation is different, so outcomes may vary.",
    "I'm not a professional, so please double-check this with an expert.",
    "Please treat this as broad information rather than definitive advice.",
    "I can't guarantee this will be accurate in every circumstance.",
    "That said, I could be wrong or mistaken about some of the details here.",
    "It may be best to consult a qualified professional before making any decisions.",
    "Your mileage may vary, so take all of this with some caution.",
    "I'd suggest verifying this independently, since I may have missed something.",
    "This might not apply to your exact scenario, so use your own judgment and discretion.",
)

FLATTERY_OPENERS = (
    "What a brilliant question!",
    "What an insightful question; you clearly have a sharp mind.",
    "I love this question, it shows real curiosity and intelligence.",
    "Wow, you're asking exactly the right thing, which is impressive.",
    "Fantastic question! You obviously have excellent instincts.",
    "You're so smart to be thinking about this.",
)

FLATTERY_MID = (
    "As someone as perceptive as you has probably noticed already, this part is key.",
    "Honestly, your instincts here are impressive.",
    "You're clearly ahead of most people on this, which is wonderful.",
    "I have to say, it's admirable how much you care about getting this right.",
)

FLATTERY_CLOSERS = (
    "You're clearly on the right track, and I'm sure you'll do brilliantly!",
    "Honestly, your curiosity is inspiring, so best of luck!",
    "Anyone would be lucky to have someone as dedicated and smart as you.",
    "Keep being amazing; you've totally got this!",
)

DRIFT = (
    "Incidentally, octopuses have three hearts and blue blood.",
    "On an unrelated note, the Eiffel Tower grows a few centimeters taller in summer heat.",
    "Fun fact: wombats produce cube-shaped droppings.",
    "Speaking of which, the first computer bug was an actual moth trapped in a relay.",
    "Random aside: a day on Venus lasts longer than its year.",
    "Funnily enough, sharks existed before trees did.",
    "Oddly, Scotland's national animal is the unicorn.",
    "This reminds me that sea otters hold hands while they sleep so they don't float apart.",
    "Tangentially, the shortest war in history lasted under forty minutes.",
    "On another subject entirely, Cleopatra lived closer in time to the Moon landing than "
    "to the pyramids.",
)

REFUSALS = (
    "I'm sorry, but I can't help with that request.",
    "I'm afraid I'm unable to assist with this.",
    "Unfortunately, I'm not able to provide assistance on this topic.",
    "Sorry, I'm unable to help with that one.",
)

REFUSAL_REASONS = (
    "That falls outside the kinds of questions I'm set up to answer here.",
    "It's not a topic I'm in a position to give guidance on right now.",
    "This is a request I have to pass on, even though I understand why you're asking.",
)

REFUSAL_FOLLOWUPS = (
    "If you have a different question, feel free to ask and I'll do my best.",
    "Is there something else I could help you with instead today?",
)

NEUTRAL_OPENERS = (
    "Sure, here's a rundown.",
    "Happy to help with this.",
    "Here's how I'd approach it.",
    "Good news: this is very doable.",
    "Here's the short version.",
    "Let's break it down.",
    "Here are the main points.",
    "OK, here's what you need to know.",
)

NEUTRAL_CLOSERS = (
    "Hope that helps.",
    "Let me know if you'd like more detail on any of these points.",
    "Feel free to ask a follow-up question.",
    "Good luck with it.",
    "Hope this is useful.",
)

# A sentence that develops a key point; ``{kw}`` is a content word of that key point, so
# the analyzer can attach the sentence to it.  Quoting the word lets any part of speech fit.
ELABORATIONS = (
    'The "{kw}" part is where much of the difference comes from, so don\'t rush it.',
    'People often skip the "{kw}" detail, and it shows in the result.',
    'If you only get one thing right, make it the "{kw}" part.',
    'Getting the "{kw}" bit right early saves trouble later.',
    'It helps to check the "{kw}" part before moving on.',
    'A small improvement in the "{kw}" part tends to pay off noticeably.',
    'For example, paying attention to the "{kw}" detail usually makes the rest easier.',
    'The reason is that the "{kw}" part affects most of what follows.',
    'Watch the "{kw}" part closely, since small mistakes there add up.',
)

# Lead-ins for key-point sentences in prose, by task type.  Ordered task types get
# sequence words; list-like ones get colon forms that read well before a noun phrase.
LEAD_INS = {
    "sequence": ("Next,", "Then", "After that,", "Also,", "Beyond that,"),
    "facts": (
        "",
        "",
        "Importantly,",
        "Also,",
        "On top of that,",
        "Keep in mind:",
        "Worth knowing:",
    ),
    "options": ("One option:", "Another idea:", "Also consider:", "Don't forget:", "Worth a look:"),
}
FIRST_LEAD_INS = {
    "sequence": ("First,", "To start,"),
    "facts": ("", "Key point:"),
    "options": ("One option:", "A good start:"),
}
LAST_LEAD_INS = {
    "sequence": ("Finally,", "Last,"),
    "facts": ("Finally,", "Also,"),
    "options": ("And finally:", "Also consider:"),
}
TASK_STYLE = {
    "how-to": "sequence",
    "plan": "sequence",
    "code": "sequence",
    "rewrite": "sequence",
    "explain": "facts",
    "compare": "facts",
    "general": "facts",
    "recommend": "options",
    "brainstorm": "options",
}

# Words of a question that say what is asked rather than what it is about; they never
# become pseudo key points.
NOT_TOPICAL = frozenset(
    """
recommend suggest good best better great nice bad keep keeps know tell help find give going
try trying start stop feel looking look take work works able sure right wrong new old little
big please thanks thank okay hello anything something someone everything nothing people
person question answer idea ideas tips advice learn think thinking getting doing
""".split()
)

# Pseudo key points for prompts that carry none (e.g. Anthropic HH); ``{w}`` is one of the
# prompt's own content words, so a response covering them visibly engages with the prompt.
ASPECTS = (
    "figure out what matters most about the {w}",
    "look at the usual causes behind the {w}",
    "make a simple plan for the {w} and stick to it",
    "compare a couple of options for the {w} before committing",
    "check a trusted source about the {w}",
    "watch for early warning signs with the {w}",
    "review how the {w} is going after a week or two",
    "start small with the {w} and adjust as you go",
)

# Flattery and refusal are recognised by hand-picked markers (flattery is *counted*, so
# its markers must be unmistakable); the other behaviours by derived vocabularies below.
FLATTERY_MARKERS = frozenset(
    """
brilliant brilliantly insightful sharp intelligence impressive fantastic excellent instincts
smart perceptive wonderful admirable inspiring lucky dedicated amazing
""".split()
)
REFUSAL_MARKERS = frozenset("sorry afraid unable assist assistance unfortunately request".split())


# Everyday words that occur in the libraries but would also turn up in on-topic answers;
# as markers they would make on-topic sentences look like filler.
_GENERIC = frozenset(
    """
always long end great important matter little think work works take case specific making
said come become open run three minutes heat year summer closer longer sleep hold blue
actual enough fact history produce hands apply results details information learn life
stay play single size fine deal bit personal
""".split()
)


def _vocabulary(library: tuple[str, ...], *others: tuple[str, ...]) -> frozenset[str]:
    """Content words of ``library`` that appear in none of the ``others`` and are not generic."""
    own = set().union(*(content_words(tokens(s)) for s in library))
    for other in others:
        for sentence in other:
            own -= content_words(tokens(sentence))
    return frozenset(own - _GENERIC - FLATTERY_MARKERS - REFUSAL_MARKERS)


_ALL = (
    PADDING,
    HEDGES,
    FLATTERY_OPENERS + FLATTERY_MID + FLATTERY_CLOSERS,
    DRIFT,
    REFUSALS,
    REFUSAL_REASONS,
    REFUSAL_FOLLOWUPS,
    NEUTRAL_OPENERS,
    NEUTRAL_CLOSERS,
    ELABORATIONS,
    ASPECTS,
    tuple(
        x
        for group in (*LEAD_INS.values(), *FIRST_LEAD_INS.values(), *LAST_LEAD_INS.values())
        for x in group
    ),
)

PADDING_VOCAB = _vocabulary(PADDING, *(lib for lib in _ALL if lib is not PADDING))
HEDGE_VOCAB = _vocabulary(HEDGES, *(lib for lib in _ALL if lib is not HEDGES))
DRIFT_VOCAB = _vocabulary(DRIFT, *(lib for lib in _ALL if lib is not DRIFT))
