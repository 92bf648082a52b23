"""Fact tables written for liedar's built-in statement sets (general knowledge, not copied
from any dataset). `probes.datasets` turns them into true/false statements and their
negated twins; see there for how false statements are built without entity leakage."""

from __future__ import annotations

CAPITALS: tuple[tuple[str, str], ...] = (
    ("France", "Paris"), ("Germany", "Berlin"), ("Italy", "Rome"), ("Spain", "Madrid"),
    ("Portugal", "Lisbon"), ("Japan", "Tokyo"), ("China", "Beijing"), ("Russia", "Moscow"),
    ("Egypt", "Cairo"), ("Greece", "Athens"), ("Norway", "Oslo"), ("Sweden", "Stockholm"),
    ("Finland", "Helsinki"), ("Denmark", "Copenhagen"), ("Poland", "Warsaw"), ("Austria", "Vienna"),
    ("Hungary", "Budapest"), ("Ireland", "Dublin"), ("Belgium", "Brussels"), ("the Netherlands", "Amsterdam"),
    ("the Czech Republic", "Prague"), ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Chile", "Santiago"),
    ("Argentina", "Buenos Aires"), ("Canada", "Ottawa"), ("Australia", "Canberra"), ("Thailand", "Bangkok"),
    ("Vietnam", "Hanoi"), ("South Korea", "Seoul"), ("India", "New Delhi"), ("Iran", "Tehran"),
    ("Iraq", "Baghdad"), ("Turkey", "Ankara"), ("Cuba", "Havana"), ("Colombia", "Bogotá"),
    ("Venezuela", "Caracas"), ("Ukraine", "Kyiv"), ("Romania", "Bucharest"), ("Bulgaria", "Sofia"),
    ("Serbia", "Belgrade"), ("Switzerland", "Bern"), ("Indonesia", "Jakarta"), ("the Philippines", "Manila"),
    ("Ethiopia", "Addis Ababa"), ("Nigeria", "Abuja"), ("Morocco", "Rabat"), ("Saudi Arabia", "Riyadh"),
    ("Afghanistan", "Kabul"), ("Pakistan", "Islamabad"), ("Brazil", "Brasília"), ("New Zealand", "Wellington"),
    ("Iceland", "Reykjavik"), ("Lebanon", "Beirut"), ("Syria", "Damascus"), ("Croatia", "Zagreb"),
    ("Malaysia", "Kuala Lumpur"), ("Nepal", "Kathmandu"), ("Qatar", "Doha"), ("Jamaica", "Kingston"),
)

ELEMENTS: tuple[tuple[str, str], ...] = (
    ("hydrogen", "H"), ("helium", "He"), ("lithium", "Li"), ("carbon", "C"), ("nitrogen", "N"),
    ("oxygen", "O"), ("fluorine", "F"), ("neon", "Ne"), ("sodium", "Na"), ("magnesium", "Mg"),
    ("aluminium", "Al"), ("silicon", "Si"), ("phosphorus", "P"), ("sulfur", "S"), ("chlorine", "Cl"),
    ("argon", "Ar"), ("potassium", "K"), ("calcium", "Ca"), ("iron", "Fe"), ("copper", "Cu"),
    ("zinc", "Zn"), ("silver", "Ag"), ("gold", "Au"), ("tin", "Sn"), ("lead", "Pb"),
    ("mercury", "Hg"), ("nickel", "Ni"), ("cobalt", "Co"), ("uranium", "U"), ("platinum", "Pt"),
    ("iodine", "I"), ("titanium", "Ti"), ("chromium", "Cr"), ("manganese", "Mn"), ("bromine", "Br"),
    ("krypton", "Kr"), ("xenon", "Xe"), ("radon", "Rn"), ("tungsten", "W"), ("barium", "Ba"),
    ("strontium", "Sr"), ("plutonium", "Pu"), ("arsenic", "As"), ("boron", "B"),
)

ANIMALS: tuple[tuple[str, str], ...] = (
    ("dog", "mammal"), ("horse", "mammal"), ("whale", "mammal"), ("bat", "mammal"), ("dolphin", "mammal"),
    ("elephant", "mammal"), ("tiger", "mammal"), ("cow", "mammal"),
    ("eagle", "bird"), ("penguin", "bird"), ("owl", "bird"), ("sparrow", "bird"), ("parrot", "bird"),
    ("ostrich", "bird"), ("pigeon", "bird"), ("swan", "bird"),
    ("salmon", "fish"), ("shark", "fish"), ("trout", "fish"), ("tuna", "fish"), ("cod", "fish"),
    ("goldfish", "fish"), ("eel", "fish"), ("carp", "fish"),
    ("snake", "reptile"), ("crocodile", "reptile"), ("lizard", "reptile"), ("turtle", "reptile"),
    ("iguana", "reptile"), ("gecko", "reptile"), ("tortoise", "reptile"), ("chameleon", "reptile"),
    ("frog", "amphibian"), ("toad", "amphibian"), ("salamander", "amphibian"), ("newt", "amphibian"),
    ("axolotl", "amphibian"), ("ant", "insect"), ("bee", "insect"), ("beetle", "insect"),
    ("butterfly", "insect"), ("mosquito", "insect"), ("grasshopper", "insect"), ("wasp", "insect"),
    ("ladybird", "insect"), ("dragonfly", "insect"),
)
