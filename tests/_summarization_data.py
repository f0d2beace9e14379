"""A small summarization set written by hand in the layout of MTEB's SummEval task.

SummEval's annotations are published outside GitHub (a cloud bucket and the Hugging Face hub), which
cannot be reached here, so the tests use five news-like texts written for them, each with reference
(human) summaries and machine summaries given relevance scores on SummEval's scale (1-5, the mean of
three ratings).
"""

from __future__ import annotations

import json
from pathlib import Path

#: Hand-written in SummEval's layout (relevance: the mean of three ratings, 1-5). The last text's machine
#: summaries were all rated the same: no correlation, left out as MTEB leaves it out.
HAND_BUILT = [
    {"text": "The city council approved a plan on Monday to close the old Main Street bridge for repairs. Work "
             "starts in June and lasts until spring; buses will use the river road meanwhile.",
     "human_summaries": ["The council voted to shut the Main Street bridge for repairs from June to spring.",
                         "Main Street bridge closes in June for repairs; buses detour via the river road."],
     "machine_summaries": ["The Main Street bridge will close for repairs from June until spring.",
                           "The city council met on Monday.",
                           "Buses will use the river road while the bridge is repaired.",
                           "A plan was approved by the council on Monday to close the old bridge.",
                           "Spring is a season of the year."],
     "relevance": [4.67, 1.67, 3.33, 4.0, 1.0]},
    {"text": "Researchers found that children who read for twenty minutes a day scored higher on vocabulary tests "
             "after one year than those who did not. The study followed 2,000 pupils in five countries.",
     "human_summaries": ["Daily reading of twenty minutes raised children's vocabulary scores, a study of 2,000 "
                         "pupils found.",
                         "A five-country study links twenty minutes of daily reading to better vocabulary."],
     "machine_summaries": ["Children who read every day had better vocabulary after a year.",
                           "The study followed pupils in five countries.",
                           "Researchers found something about children.",
                           "Reading twenty minutes daily improved vocabulary test scores in a study of 2,000 "
                           "pupils.",
                           "Vocabulary tests are used in schools."],
     "relevance": [4.33, 2.67, 1.67, 5.0, 1.33]},
    {"text": "The football club announced that its captain will retire at the end of the season after fifteen "
             "years, 400 matches and three league titles with the team.",
     "human_summaries": ["The club's captain retires at season's end after 15 years and three titles.",
                         "After 400 matches and three league titles, the captain is retiring."],
     "machine_summaries": ["The captain will retire at the end of the season.",
                           "The club has won three league titles.",
                           "The captain retires after fifteen years, 400 matches and three titles.",
                           "Football is played in many countries.",
                           "The club made an announcement."],
     "relevance": [4.0, 2.33, 4.67, 1.0, 1.67]},
    {"text": "Heavy rain flooded parts of the coastal town overnight, forcing 300 residents to leave their homes. "
             "No injuries were reported and the water is expected to recede by Friday.",
     "human_summaries": ["Overnight floods forced 300 people from their homes in the coastal town; nobody was hurt.",
                         "Heavy rain flooded the town and 300 residents were evacuated; water should recede by "
                         "Friday."],
     "machine_summaries": ["Floods forced 300 residents out of their homes, with no injuries.",
                           "It rained heavily.",
                           "The water is expected to recede by Friday after the coastal town flooded.",
                           "The town is on the coast.",
                           "Residents left their homes overnight because of flooding from heavy rain."],
     "relevance": [4.67, 2.0, 3.67, 1.33, 4.33]},
    {"text": "A new bakery opened downtown on Saturday.",
     "human_summaries": ["A bakery opened downtown."],
     "machine_summaries": ["A bakery opened.", "Something opened on Saturday.", "Bread is sold downtown."],
     "relevance": [3.0, 3.0, 3.0]},
]


def write_hand_built(path: Path) -> Path:
    """:data:`HAND_BUILT` as a JSON-lines file at ``path``."""
    path.write_text("".join(json.dumps(row) + "\n" for row in HAND_BUILT), encoding="utf-8")
    return path
