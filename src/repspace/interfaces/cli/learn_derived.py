"""``repspace learn retrofit|matryoshka|adapter|cca``: derived spaces learned from a stored one."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from repspace.core.printable import excerpt
from repspace.interfaces.cli._common import note, open_store, print_json, progress_bar
from repspace.interfaces.cli.learn import Json, Seed, SpaceName, learn_app
from repspace.interfaces.cli.options import OptionGroup

Source = Annotated[str, typer.Argument(help="The stored space to learn from.", show_default=False)]
Pairs = Annotated[Path, typer.Option("--pairs", help="Scored text pairs: 'sentence1,sentence2,score' CSV "
                                                     "(header optional; STS-B's files).", show_default=False)]
Dev = Annotated[Optional[Path], typer.Option("--dev", help="Pairs in the same format that choose the epoch "
                                                           "(early stopping) and nothing else.")]
Epochs = Annotated[int, typer.Option(min=1, help="Passes over the pairs at most.")]
BatchSize = Annotated[int, typer.Option("--batch-size", min=2, help="Pairs per step.")]
Threads = Annotated[int, typer.Option(min=1, help="torch CPU threads (1 is bit-for-bit repeatable).")]


@dataclass(frozen=True)
class HeadData(OptionGroup):
    """The frozen space, the new one and the pairs a head is trained on."""

    source: Source
    space: SpaceName
    pairs: Pairs
    dev: Dev = None


@dataclass(frozen=True)
class HeadRun(OptionGroup):
    """How a head's training runs; they go to the trainer as they are."""

    batch_size: BatchSize = 64
    seed: Seed = 0
    threads: Threads = 1


def _done(report: Any, json: bool, what: str) -> None:
    if json:
        print_json(report.to_dict())
        return
    note(f"{report.space}: {report.n:,} items × {report.dim} ({report.metric}), {what}, {report.train_seconds:.1f} s")


@learn_app.command("retrofit")
def retrofit_cmd(
    source: Source,
    space: SpaceName,
    lexicon: Annotated[str, typer.Option("--lexicon", help="'word neighbour1 neighbour2 ...' lines (Faruqui et "
                                                           "al.'s format), or 'wordnet' for WordNet 3.0's synonyms "
                                                           "(Debian's wordnet-base).", show_default=False)],
    iterations: Annotated[int, typer.Option(min=1, help="Updates of every word (the paper: 10).")] = 10,
    alpha: Annotated[float, typer.Option(help="Weight of a word's original vector.")] = 1.0,
    case: Annotated[bool, typer.Option("--lowercase/--case-sensitive",
                                       help="Match words in lower case (the default) or as written.")] = True,
    json: Json = False,
) -> None:
    """Retrofit a word space to a lexicon (Faruqui et al. 2015): a derived space where synonyms move closer.

    Each word in the lexicon is pulled toward its neighbours' vectors while kept
    near its own (neighbours weigh 1/degree); words outside the lexicon do not
    move. The recipe records the lexicon's fingerprint.

    Examples:

      repspace learn retrofit glove --lexicon wordnet --space glove-wn

      repspace learn retrofit w2v --lexicon ppdb-xl.txt --space w2v-ppdb --iterations 10
    """
    from repspace.workflows.learn.derived import retrofit_space

    store = open_store(create=False)
    with progress_bar(json) as bar:
        report = retrofit_space(store, source, space, lexicon, iterations=iterations, alpha=alpha, lowercase=case,
                                progress=bar)
    c = report.details["counts"]
    _done(report, json, f"retrofitted {c['updated']:,} words ({c['edges']:,} edges) to {report.details['lexicon']}")


def _head(method: str, data: HeadData, run: HeadRun, json: bool, **params: Any) -> None:
    from repspace.workflows.learn.derived import train_head

    store = open_store(create=False)
    with progress_bar(json) as bar:
        report = train_head(store, data.source, data.space, method, data.pairs, dev=data.dev, progress=bar,
                            **params, **asdict(run))
    d = report.details
    chosen = ("" if d["dev_spearman"] is None else
              f", epoch {d['best_epoch']} chosen on dev (Spearman {d['dev_spearman']:.4f})")
    _done(report, json, f"{method} head on {d['pairs']['pairs']:,} pairs{chosen}")


@learn_app.command("matryoshka")
def matryoshka_cmd(
    data: HeadData,
    dims: Annotated[str, typer.Option(help="Prefixes trained to work alone, comma-separated (the full "
                                           "dimension is always one).")] = "32,64,128,256",
    loss: Annotated[str, typer.Option(help="cosent (ranks the pairs) or cosine (regresses the score).")] = "cosent",
    epochs: Epochs = 30,
    lr: Annotated[float, typer.Option(help="Adam's learning rate.")] = 1e-3,
    scale: Annotated[float, typer.Option(help="CoSENT's scale (EVALUATION.md's run chose 5 on STS-B dev).")] = 10.0,
    weight_decay: Annotated[float, typer.Option("--weight-decay", help="Pull toward the starting (PCA) map "
                                                                       "(EVALUATION.md's run: 3).")] = 0.0,
    run: HeadRun = HeadRun(),
    json: Json = False,
) -> None:
    """Train a Matryoshka head on a frozen space: every prefix of the new space works as a small embedding.

    A linear map, started at the PCA rotation, trained with the multi-prefix
    loss (Kusupati et al. 2022) on scored pairs embedded by the space's own
    encoder. The new space holds every item through the head; text queries go
    through the encoder then the head. Search a prefix with --index prefix64,hnsw32.

    Examples:

      repspace learn matryoshka minilm --pairs stsb-en-train.csv --dev stsb-en-dev.csv --space minilm-mrl

      repspace search minilm-mrl 'a man plays guitar' --index prefix64,hnsw32
    """
    try:
        prefixes = tuple(int(x) for x in dims.split(",") if x.strip()) + (None,)
    except ValueError:
        raise typer.BadParameter(f"--dims must be comma-separated integers, not {excerpt(dims)}") from None
    _head("matryoshka", data, run, json, dims=prefixes, loss=loss, epochs=epochs, lr=lr, scale=scale,
          weight_decay=weight_decay)


@learn_app.command("adapter")
def adapter_cmd(
    data: HeadData,
    loss: Annotated[str, typer.Option(help="contrastive (graded labels) or margin (Wu et al. 2017, "
                                           "distance-weighted negatives).")] = "contrastive",
    positive_threshold: Annotated[float, typer.Option("--positive-threshold",
                                                      help="Pairs scoring at least this are positives.")] = 4.0,
    epochs: Epochs = 10,
    lr: Annotated[float, typer.Option(help="Adam's learning rate.")] = 1e-4,
    run: HeadRun = HeadRun(),
    json: Json = False,
) -> None:
    """Train a pair adapter on a frozen space: a linear map, started at identity, fitted to labelled pairs.

    Examples:

      repspace learn adapter minilm --pairs stsb-en-train.csv --dev stsb-en-dev.csv --space minilm-sts

      repspace learn adapter minilm --pairs pairs.csv --loss margin --space minilm-margin
    """
    _head("adapter", data, run, json, loss=loss, positive_threshold=positive_threshold, epochs=epochs, lr=lr)


@learn_app.command("cca")
def cca_cmd(
    a: Annotated[str, typer.Argument(help="The first space.", show_default=False)],
    b: Annotated[str, typer.Argument(help="The second space.", show_default=False)],
    space_a: Annotated[str, typer.Option("--space-a", help="The new space: A on its canonical directions.")],
    space_b: Annotated[str, typer.Option("--space-b", help="The new space: B on its canonical directions.")],
    components: Annotated[Optional[int], typer.Option(min=1, help="Canonical directions kept (default: the "
                                                                  "smaller dimension).")] = None,
    json: Json = False,
) -> None:
    """Canonical correlation analysis of two spaces over the items they share (joined on id).

    Each space is projected onto its canonical directions, as two derived
    spaces whose rows are maximally correlated component by component.

    Examples:

      repspace learn cca minilm e5 --space-a minilm-cca --space-b e5-cca --components 64
    """
    from repspace.workflows.learn.derived import cca_spaces

    store = open_store(create=False)
    with progress_bar(json) as bar:
        ra, rb = cca_spaces(store, a, b, space_a, space_b, n_components=components, progress=bar)
    if json:
        print_json({"a": ra.to_dict(), "b": rb.to_dict()})
        return
    corr = ra.details["correlations"]
    note(f"{ra.space}, {rb.space}: {ra.details['shared']:,} shared items, {len(corr)} components; canonical "
         f"correlations {', '.join(f'{c:.3f}' for c in corr[:5])}{' ...' if len(corr) > 5 else ''}")
