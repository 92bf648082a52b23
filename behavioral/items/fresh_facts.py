"""Real facts that are *not* in the MCQ bank, one table per bank relation: the calibration
items of the contamination check for fact-based benchmarks.

Why real entities and not invented names: the check compares the likelihood of an item's
original wording with its rewrites. For a real entity the original ("What is the chemical
symbol for gold?") is a common phrasing of a well-known fact whatever the benchmark did, and
its rarest tokens differ between wordings; for an invented name the rarest tokens are the
name itself in every wording, so the relative score is near 0 by construction. Calibrating
fact items on invented names therefore flagged a bank written for it (8/24 items).
Items about real entities the model may know, in the bank's own templates, share the
"familiar phrasing of a known fact" effect but were never in this benchmark: the null the
check tests becomes "the benchmark's items are exchangeable with other real facts of the
same kind", and a flag means the benchmark's own strings are more familiar than that.

Every fact is checked against the bank (`tests/pitfalls/test_contamination.py`): no subject
here is a subject of the same relation in the bank.
"""

from __future__ import annotations

# relation -> ((subject, answer), ...); the relation's templates are the bank's
CAPITALS: tuple[tuple[str, str], ...] = (
    ("Chile", "Santiago"),
    ("Colombia", "Bogotá"),
    ("Cuba", "Havana"),
    ("Denmark", "Copenhagen"),
    ("Finland", "Helsinki"),
    ("Austria", "Vienna"),
    ("Belgium", "Brussels"),
    ("the Netherlands", "Amsterdam"),
    ("Hungary", "Budapest"),
    ("the Czech Republic", "Prague"),
    ("Romania", "Bucharest"),
    ("Bulgaria", "Sofia"),
    ("Ukraine", "Kyiv"),
    ("Iran", "Tehran"),
    ("Iraq", "Baghdad"),
    ("Saudi Arabia", "Riyadh"),
    ("India", "New Delhi"),
    ("Indonesia", "Jakarta"),
    ("the Philippines", "Manila"),
    ("Malaysia", "Kuala Lumpur"),
    ("Venezuela", "Caracas"),
    ("Ecuador", "Quito"),
    ("Uruguay", "Montevideo"),
    ("Ethiopia", "Addis Ababa"),
    ("Ghana", "Accra"),
    ("Senegal", "Dakar"),
    ("Algeria", "Algiers"),
    ("Tunisia", "Tunis"),
    ("Afghanistan", "Kabul"),
    ("Bangladesh", "Dhaka"),
    ("Nepal", "Kathmandu"),
    ("Mongolia", "Ulaanbaatar"),
    ("Iceland", "Reykjavik"),
    ("Croatia", "Zagreb"),
    ("Serbia", "Belgrade"),
    ("Mexico", "Mexico City"),
    ("Jamaica", "Kingston"),
    ("Zimbabwe", "Harare"),
    ("Uganda", "Kampala"),
    ("Kazakhstan", "Astana"),
    ("Syria", "Damascus"),
    ("Lebanon", "Beirut"),
    ("Jordan", "Amman"),
    ("Qatar", "Doha"),
    ("Cambodia", "Phnom Penh"),
)

CONTINENTS: tuple[tuple[str, str], ...] = (
    ("Germany", "Europe"),
    ("Spain", "Europe"),
    ("Poland", "Europe"),
    ("Portugal", "Europe"),
    ("Norway", "Europe"),
    ("India", "Asia"),
    ("China", "Asia"),
    ("Thailand", "Asia"),
    ("Vietnam", "Asia"),
    ("Iran", "Asia"),
    ("Kenya", "Africa"),
    ("Nigeria", "Africa"),
    ("Ethiopia", "Africa"),
    ("Morocco", "Africa"),
    ("Senegal", "Africa"),
    ("Chad", "Africa"),
    ("Argentina", "South America"),
    ("Colombia", "South America"),
    ("Bolivia", "South America"),
    ("Uruguay", "South America"),
    ("Ecuador", "South America"),
    ("Cuba", "North America"),
    ("Guatemala", "North America"),
    ("Honduras", "North America"),
    ("Panama", "North America"),
    ("Australia", "Oceania"),
    ("Fiji", "Oceania"),
    ("Samoa", "Oceania"),
)

SYMBOLS: tuple[tuple[str, str], ...] = (
    ("nitrogen", "N"),
    ("calcium", "Ca"),
    ("copper", "Cu"),
    ("sulfur", "S"),
    ("zinc", "Zn"),
    ("neon", "Ne"),
    ("chlorine", "Cl"),
    ("magnesium", "Mg"),
    ("aluminium", "Al"),
    ("silicon", "Si"),
    ("phosphorus", "P"),
    ("fluorine", "F"),
    ("lithium", "Li"),
    ("nickel", "Ni"),
    ("uranium", "U"),
    ("iodine", "I"),
    ("platinum", "Pt"),
    ("argon", "Ar"),
    ("tungsten", "W"),
    ("cobalt", "Co"),
    ("barium", "Ba"),
    ("boron", "B"),
)

ANIMALS: tuple[tuple[str, str], ...] = (
    ("shark", "fish"),
    ("cat", "mammal"),
    ("crocodile", "reptile"),
    ("owl", "bird"),
    ("toad", "amphibian"),
    ("ant", "insect"),
    ("dolphin", "mammal"),
    ("lizard", "reptile"),
    ("salmon", "fish"),
    ("butterfly", "insect"),
    ("newt", "amphibian"),
    ("horse", "mammal"),
    ("parrot", "bird"),
    ("turtle", "reptile"),
    ("tuna", "fish"),
    ("elephant", "mammal"),
    ("ostrich", "bird"),
    ("beetle", "insect"),
    ("iguana", "reptile"),
    ("kangaroo", "mammal"),
    ("sparrow", "bird"),
    ("trout", "fish"),
)

UNITS: tuple[tuple[str, str], ...] = (
    ("electric charge", "coulomb"),
    ("frequency", "hertz"),
    ("electrical resistance", "ohm"),
    ("capacitance", "farad"),
    ("amount of substance", "mole"),
    ("luminous intensity", "candela"),
    ("magnetic flux", "weber"),
    ("inductance", "henry"),
    ("magnetic flux density", "tesla"),
    ("radioactivity", "becquerel"),
    ("absorbed dose", "gray"),
    ("equivalent dose", "sievert"),
    ("illuminance", "lux"),
    ("electrical conductance", "siemens"),
)

ORGANS: tuple[tuple[str, str], ...] = (
    ("produces insulin", "pancreas"),
    ("is the largest organ of the body", "skin"),
    ("absorbs most of the nutrients from food", "small intestine"),
    ("stores bile", "gallbladder"),
    ("stores urine", "bladder"),
    ("detects light", "eyes"),
    ("detects sound", "ears"),
    ("has four chambers called atria and ventricles", "heart"),
    ("is protected by the skull", "brain"),
    ("contains millions of tiny air sacs called alveoli", "lungs"),
)

PLANETS: tuple[tuple[str, str], ...] = (
    ("is the third planet from the Sun", "Earth"),
    ("has the Great Red Spot", "Jupiter"),
    ("has the moon Titan", "Saturn"),
    ("is the smallest", "Mercury"),
    ("has the moons Phobos and Deimos", "Mars"),
    ("has the moon Triton", "Neptune"),
    ("is the brightest in the night sky", "Venus"),
    ("is home to the volcano Olympus Mons", "Mars"),
    ("has the moon Europa", "Jupiter"),
    ("was discovered by William Herschel", "Uranus"),
)
