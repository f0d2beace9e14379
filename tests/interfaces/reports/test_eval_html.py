"""eval_report_html on real ``eval sts`` results: the page parsed back shows the JSON's numbers (scores, intervals,
differences, Holm p-values, the * marks, per-part rows), escapes a model named with markup and a control
character, and needs nothing outside itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _eval_results import HOSTILE_NAME, entry, hostile, parse, read, with_parts

from repspace.core.errors import InputError
from repspace.interfaces.reports import eval_report_html, write_eval_report_html
from repspace.workflows.evaluate import SIGNIFICANCE_LEVEL, results_report

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

#: How the page shows a control character of a name: a visible escape (HTML cannot carry the character).
SHOWN_NAME = HOSTILE_NAME.replace("\x1b", "\\u001b")


@pytest.fixture(scope="module")
def data(tmp_path_factory, sts_eval_results: Path) -> dict:
    """three.json with 'space fine' renamed HOSTILE_NAME and a per-part block on 'static', as hostile.json."""
    folder = tmp_path_factory.mktemp("eval-html")
    three = hostile(read(sts_eval_results / "three.json"))
    three["results"][0] = with_parts(three["results"][0])
    (folder / "hostile.json").write_text(json.dumps(three), encoding="utf-8")
    return {"folder": folder, "results": sts_eval_results, "three": three}


@pytest.fixture(scope="module")
def page(data) -> str:
    report = results_report([str(data["folder"] / "hostile.json")])
    return eval_report_html(report, title="STS <head> ü")


def test_the_page_is_well_formed_and_self_contained(page):
    p = parse(page)
    tags = [t for t, _ in p.tags]
    assert tags.count("html") == tags.count("body") == tags.count("style") == 1 and "script" not in tags
    assert tags.count("svg") == page.count("<svg") == 1  # a forest plot per task
    assert not any(k in ("src", "href") for _, a in p.tags for k in a)  # nothing fetched
    assert "<title>STS &lt;head&gt; ü</title>" in page


def test_the_models_table_shows_the_json_scores_and_intervals(page, data):
    rows = parse(page).rows("models")
    results = data["three"]["results"]
    for row, result in zip(rows, results, strict=True):
        e = entry(result)
        name, score, ci, n = row[:4]
        assert float(score[1]["data-value"]) == e["main_score"] and score[0] == f"{e['main_score']:.4f}"
        assert (float(ci[1]["data-low"]), float(ci[1]["data-high"])) == (e["ci_low"], e["ci_high"])
        assert ci[0] == f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}]"
        assert n[0] == str(len(result["repspace"]["units"]["arrays"][0]))
        assert row[4][0] == "spearman"
    assert [r[0][0] for r in rows] == ["static", "space noisy", SHOWN_NAME]


def test_the_comparisons_table_shows_each_pair_and_marks_the_significant_ones(page, data):
    rows = parse(page).texts("comparisons")
    comparisons = data["three"]["comparisons"]
    assert len(rows) == len(comparisons) == 3
    marks = 0
    for row, c in zip(rows, comparisons, strict=True):
        a, b, diff, ci, p, mark = row
        assert (a, b) == (c["a"].replace("\x1b", "\\u001b"), c["b"].replace("\x1b", "\\u001b"))
        assert diff == f"{c['difference']:+.4f}" and ci == f"[{c['ci_low']:.4f}, {c['ci_high']:.4f}]"
        assert p == f"{c['p_value']:.4f}"
        assert mark == ("*" if c["p_value"] <= SIGNIFICANCE_LEVEL else "")
        marks += mark == "*"
    assert 0 < marks < 3  # static vs noisy differ; static vs the lightly noised copy do not (the data's own result)
    assert page.count('class="significant"') == marks


def test_the_parts_table_shows_each_part_and_the_macro_average(page, data):
    block = data["three"]["results"][0]["repspace"]["parts"]
    rows = parse(page).texts("parts")
    assert [r[0] for r in rows] == [v["part"] for v in block["values"]] + ["macro average"]
    for row, v in zip(rows, block["values"], strict=False):
        assert row[1:] == [str(v["n"]), f"{v['main_score']:.4f}", f"[{v['ci_low']:.4f}, {v['ci_high']:.4f}]"]
    assert rows[-1][2] == f"{block['macro']['main_score']:.4f}"
    assert "<h3>static by genre</h3>" in page


def test_a_name_with_markup_and_a_control_character_is_escaped_everywhere(page):
    assert "<b>x" not in page and "\x1b" not in page
    assert page.count("&lt;b&gt;x&lt;/b&gt;ü\\u001b") >= 4  # models table, plot, two comparisons
    p = parse(page)
    assert SHOWN_NAME in p.svg_text  # the forest plot's label, as text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", page)


def test_the_forest_plot_draws_a_dot_and_whiskers_per_model(page, data):
    first = page[page.index("<svg"):page.index("</svg>")]
    assert first.count("<circle") == 3 and first.count('<g class="model">') == 3
    assert first.count('stroke="#4c72b0"') == 3 * 3  # each interval: a line and two caps


def test_a_report_without_intervals_or_comparisons_says_so(data):
    static = read(data["results"] / "static.json")[0]
    for e in static["scores"].values():
        e[0].pop("ci_low"), e[0].pop("ci_high")
    static["repspace"].pop("interval")
    path = data["folder"] / "bare.json"
    path.write_text(json.dumps([static]), encoding="utf-8")
    page = eval_report_html(results_report([str(path)]))
    (row,) = parse(page).texts("models")
    assert row[2] == "—" and "the results carry no interval" in page and 'class="comparisons"' not in page


def test_write_replaces_the_file_and_refuses_what_is_not_a_report(data, tmp_path):
    report = results_report([str(data["results"] / "noisy.json")])
    path = tmp_path / "sub" / "r.html"
    path.parent.mkdir()
    path.write_text("old", encoding="utf-8")
    assert write_eval_report_html(path, report) == path
    assert path.read_text(encoding="utf-8") == eval_report_html(report)
    assert [p.name for p in path.parent.iterdir()] == ["r.html"]
    with pytest.raises(InputError, match="must be a ResultsReport"):
        eval_report_html(report.to_dict())


def test_lone_surrogates_and_nul_in_names_and_sources_become_visible_escapes():
    from repspace.workflows.evaluate import ModelRow, ResultsReport, TaskReport

    rows = (ModelRow("a\ud800\x00", "f\x9b.json", "spearman", 0.5), ModelRow("北京 \u202e", "g.json", "spearman", 0.4))
    page = eval_report_html(ResultsReport((TaskReport("sts:\x07", "test", rows),), ("f\x9b.json",)))
    page.encode("utf-8")  # no lone surrogate left to refuse
    assert "a\\ud800\\u0000" in page and "f\\u009b.json" in page and "sts:\\u0007" in page and "北京 \u202e" in page
    assert [r[0] for r in parse(page).texts("models")] == ["a\\ud800\\u0000", "北京 \u202e"]
