"""``repspace eval report RESULTS... -o page.html``: the page of --json files, MTEB folders and saved ids (the global
or the command's --store); a missing file, a file that is not a result, no results: one error line, exit 2, no
page written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import one_error_line, run
from _eval_results import entry, parse, read

from repspace.workflows.evaluate import results_report

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def folder(sts_eval_results: Path) -> Path:
    return sts_eval_results


def test_a_json_file_gives_a_page_of_its_models_and_comparisons(capsys, folder, tmp_path):
    out = tmp_path / "r.html"
    code, stdout, err = run(capsys, "-q", "eval", "report", str(folder / "three.json"), "-o", str(out))
    assert (code, stdout) == (0, ""), err
    page = parse(out.read_text(encoding="utf-8"))
    live = read(folder / "three.json")
    assert [row[0] for row in page.texts("models")] == ["static", "space noisy", "space fine"]
    assert [row[1] for row in page.texts("models")] == [f"{entry(r)['main_score']:.4f}" for r in live["results"]]
    assert [row[2] for row in page.texts("comparisons")] == [f"{c['difference']:+.4f}" for c in live["comparisons"]]


def test_json_prints_the_report_the_library_builds(capsys, folder, tmp_path):
    sources = [str(folder / "static.json"), str(folder / "mteb"), str(folder / "noisy.json")]
    code, stdout, err = run(capsys, "-q", "eval", "report", *sources, "-o", str(tmp_path / "r.html"), "--json",
                            "--bootstrap", "200", "--seed", "4")
    assert code == 0, err
    assert json.loads(stdout) == results_report(sources, n_resamples=200, seed=4).to_dict()


@pytest.mark.parametrize("where", ["global", "command"])
def test_saved_ids_are_read_from_the_store(capsys, folder, tmp_path, where):
    out = tmp_path / "r.html"
    store = ["--store", str(folder / "s.db")]
    args = [*store, "eval", "report", "1", "#2", "3"] if where == "global" else ["eval", "report", *store, "1", "2"]
    code, _, err = run(capsys, "-q", *args, "-o", str(out))
    assert code == 0, err
    names = [row[0] for row in parse(out.read_text(encoding="utf-8")).texts("models")]
    assert names == ["static", "space noisy", "space fine"][:3 if where == "global" else 2]


@pytest.mark.parametrize(("make", "fragments"), [
    (lambda f, t: [str(t / "missing.json")], ("no such file or folder", "missing.json")),
    (lambda f, t: [str(f / "sts150.csv")], ("sts150.csv is not a result", "not JSON")),
    (lambda f, t: [str(f / "s.db")], ("s.db is not a result", "not UTF-8")),
    (lambda f, t: [_write(t / "empty.json", "[]")], ("no result", "empty list")),
    (lambda f, t: [_write(t / "other.json", '{"model": "x"}')], ("other.json is not a result", "MTEB")),
    (lambda f, t: ["--store", str(f / "s.db"), "12"], ("no saved result with id 12",)),
    (lambda f, t: [str(t)], ("no result files",)),
])
def test_a_bad_source_is_one_error_line_and_no_page(capsys, folder, tmp_path, make, fragments):
    out = tmp_path / "r.html"
    r = run(capsys, "-q", "eval", "report", *make(folder, tmp_path), "-o", str(out))
    one_error_line(r, 2, *fragments)
    assert not out.exists()


def test_no_source_or_no_output_is_a_usage_error(capsys, folder, tmp_path):
    one_error_line(run(capsys, "-q", "eval", "report", "-o", str(tmp_path / "r.html")), 2, "Missing argument")
    one_error_line(run(capsys, "-q", "eval", "report", str(folder / "three.json")), 2, "Missing option", "--output")


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)
