"""25 true/false minimal pairs, written for these tests (not drawn from liedar's own sets)."""

PAIRS = [
    ("The sun rises in the east.", "The sun rises in the west."),
    ("Water freezes at zero degrees Celsius.", "Water freezes at fifty degrees Celsius."),
    ("A week has seven days.", "A week has nine days."),
    ("Spiders have eight legs.", "Spiders have six legs."),
    ("The Pacific is the largest ocean.", "The Atlantic is the largest ocean."),
    ("Bees make honey.", "Bees make milk."),
    ("Ice is colder than steam.", "Ice is hotter than steam."),
    ("A triangle has three sides.", "A triangle has five sides."),
    ("Penguins cannot fly.", "Penguins can fly."),
    ("The moon orbits the Earth.", "The moon orbits Mars."),
    ("Cows eat grass.", "Cows eat stones."),
    ("Fish live in water.", "Fish live in trees."),
    ("Snow is white.", "Snow is black."),
    ("Humans have two lungs.", "Humans have four lungs."),
    ("Gold is a metal.", "Gold is a gas."),
    ("Paris is in France.", "Paris is in Brazil."),
    ("A year has twelve months.", "A year has twenty months."),
    ("Lemons taste sour.", "Lemons taste salty."),
    ("The heart pumps blood.", "The heart pumps air."),
    ("Owls are awake at night.", "Owls are not awake at night."),
    ("Wool comes from sheep.", "Wool comes from fish."),
    ("Grass is green in spring.", "Grass is purple in spring."),
    ("Rain falls from clouds.", "Rain falls from rocks."),
    ("Tokyo is the capital of Japan.", "Tokyo is the capital of Kenya."),
    ("An hour has sixty minutes.", "An hour has ten minutes."),
]


def write_pairs_csv(path, with_group: bool = False) -> None:
    """Write the pairs as ``statement,label`` rows (true first), optionally with a group column."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["statement", "label", "group"] if with_group else ["statement", "label"])
        for k, (true, false) in enumerate(PAIRS):
            w.writerow([true, 1, f"p{k}"] if with_group else [true, 1])
            w.writerow([false, 0, f"p{k}"] if with_group else [false, 0])
