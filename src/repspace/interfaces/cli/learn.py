"""``repspace learn``: train word2vec, fastText or doc2vec on a corpus and store the vectors as a space."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from repspace.interfaces.cli._app import command_group
from repspace.interfaces.cli._common import note, open_store, print_json, progress_bar, show_progress
from repspace.interfaces.cli.options import OptionGroup

learn_app = command_group("learn", help=(
    "Learn a space from your own data: texts (word2vec, fasttext, doc2vec on gensim), edge lists (poincare, "
    "node2vec), or a stored space (retrofit to a lexicon; matryoshka and adapter heads on labelled pairs; cca "
    "between two spaces).\n\n"
    "A corpus is a text file (one document per line), a JSON-lines file (--text-field, --id-field) "
    "or a stored space's texts (--from-space). Every learned space keeps the full recipe in its provenance "
    "(data fingerprint, hyper-parameters, seed, workers, versions); text spaces and heads answer text "
    "queries: repspace search NAME 'some text'.\n\n"
    "Examples:\n\n"
    "  repspace learn word2vec corpus.txt --space w2v --sg --epochs 10\n\n"
    "  repspace learn doc2vec docs.jsonl --space d2v --id-field _id --dbow --epochs 20\n\n"
    "  repspace learn poincare closure.tsv --space mammals --dim 10\n\n"
    "  repspace learn node2vec edges.tsv --space graph --p 1 --q 0.5"
))

Corpus = Annotated[Optional[Path], typer.Argument(
    help="Text file (one document per line) or JSON-lines file (.jsonl); omit with --from-space.",
    show_default=False)]
SpaceName = Annotated[str, typer.Option("--space", help="The new space (must not exist).")]
FromSpace = Annotated[Optional[str], typer.Option(
    "--from-space", help="Learn from this stored space's texts (item ids become document ids).")]
TextField = Annotated[Optional[str], typer.Option(
    "--text-field", help="JSON lines: the field holding the text (default: text).")]
IdField = Annotated[Optional[str], typer.Option(
    "--id-field", help="JSON lines: the field holding the document id (default: the line number).")]
Format = Annotated[str, typer.Option("--format", help="Corpus format: auto (.jsonl/.ndjson or a field given "
                                                     "means JSON lines), text or jsonl.")]
Encoding = Annotated[str, typer.Option(help="Text encoding of a text corpus (latin-1 for older corpora).")]
Seed = Annotated[int, typer.Option(help="Seeds the initial vectors and every random draw of training.")]
Workers = Annotated[int, typer.Option(
    min=1, help="Training threads. Only 1 is deterministic (same seed, same vectors); more are faster "
                "but vary a little from run to run.")]
VectorSize = Annotated[int, typer.Option("--vector-size", min=1, help="Dimensions.")]
Window = Annotated[int, typer.Option(min=1, help="Context window (words on each side).")]
Epochs = Annotated[int, typer.Option(min=1, help="Passes over the corpus.")]
MinCount = Annotated[int, typer.Option("--min-count", min=1, help="Drop words seen fewer times than this.")]
Negative = Annotated[int, typer.Option(min=1, help="Negative samples per positive one.")]
Sample = Annotated[float, typer.Option(
    help="Subsampling of frequent words (0 keeps every word; 1e-3 to 1e-5 drops more of the frequent ones).")]
Alpha = Annotated[float, typer.Option(help="Initial learning rate (decays linearly to --min-alpha).")]
MinAlpha = Annotated[float, typer.Option("--min-alpha", help="Final learning rate.")]
Sg = Annotated[bool, typer.Option("--sg/--cbow", help="Skip-gram, or CBOW (gensim's default).")]
Phrases = Annotated[bool, typer.Option(
    "--phrases", help="Join frequent bigrams into one token (new_york) before training (gensim's Phrases).")]
PhrasesMinCount = Annotated[int, typer.Option("--phrases-min-count", min=1, help="Phrases: minimum bigram count.")]
PhrasesThreshold = Annotated[float, typer.Option("--phrases-threshold", help="Phrases: score threshold "
                                                                            "(higher: fewer phrases).")]
Json = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
KeepCase = Annotated[bool, typer.Option("--keep-case", help="Tokens keep their case (default: lowercased).")]
TokenPattern = Annotated[Optional[str], typer.Option("--token-pattern", help="Regular expression of a token (default: runs "
                                                                   "of letters, as gensim's simple_preprocess).")]
MinLen = Annotated[int, typer.Option("--min-len", min=1, help="Shortest token kept (characters).")]
MaxLen = Annotated[int, typer.Option("--max-len", min=1, help="Longest token kept (characters).")]


@dataclass(frozen=True)
class CorpusArgs(OptionGroup):
    """The new space and where its texts come from (every text method)."""

    space: SpaceName
    corpus: Corpus = None
    from_space: FromSpace = None
    text_field: TextField = None
    id_field: IdField = None
    corpus_format: Format = "auto"
    encoding: Encoding = "utf-8"


@dataclass(frozen=True)
class TrainArgs(OptionGroup):
    """The hyper-parameters every text method shares; they go to the method as they are."""

    seed: Seed = 0
    workers: Workers = 1
    vector_size: VectorSize = 100
    window: Window = 5
    min_count: MinCount = 5
    epochs: Epochs = 5
    negative: Negative = 5
    sample: Sample = 1e-3
    alpha: Alpha = 0.025
    min_alpha: MinAlpha = 0.0001


@dataclass(frozen=True)
class WordTrainArgs(TrainArgs):
    """The hyper-parameters of the word methods (word2vec, fasttext)."""

    sg: Sg = False


@dataclass(frozen=True)
class DocTrainArgs(TrainArgs):
    """The hyper-parameters of doc2vec: more epochs by default, PV-DM or PV-DBOW."""

    epochs: Epochs = 10
    dm: Annotated[bool, typer.Option("--dm/--dbow", help="PV-DM (gensim's default) or PV-DBOW.")] = True


@dataclass(frozen=True)
class PhrasesArgs(OptionGroup):
    """Bigram phrases (the word methods); they go to the method as they are."""

    phrases: Phrases = False
    phrases_min_count: PhrasesMinCount = 5
    phrases_threshold: PhrasesThreshold = 10.0


@dataclass(frozen=True)
class TokenizerArgs(OptionGroup):
    """How a text is cut into tokens (every text method)."""

    keep_case: KeepCase = False
    token_pattern: TokenPattern = None
    min_len: MinLen = 2
    max_len: MaxLen = 15

    def spec(self) -> dict[str, Any]:
        """The tokenizer spec of :func:`repspace.workflows.learn.learn_space`."""
        spec: dict[str, Any] = {"lowercase": not self.keep_case, "min_len": self.min_len, "max_len": self.max_len}
        if self.token_pattern is not None:
            spec["pattern"] = self.token_pattern
        return spec


def _run(method: str, data: CorpusArgs, training: TrainArgs, tokens: TokenizerArgs, json: bool,
         **params: Any) -> None:
    from repspace.workflows.learn import learn_space

    params.update(asdict(training))
    store = open_store(create=True)
    if not json and show_progress():  # a progress line on a terminal only: errors stay one line
        what = f"space {data.from_space!r}" if data.from_space is not None else str(data.corpus)
        note(f"learning {method} from {what} (seed {training.seed}, {training.workers} worker(s))…")
    with progress_bar(json) as bar:
        report = learn_space(store, data.space, method, data.corpus, from_space=data.from_space,
                             corpus_format=data.corpus_format, text_field=data.text_field, id_field=data.id_field,
                             encoding=data.encoding, tokenizer=tokens.spec(), progress=bar, **params)
    if json:
        print_json(report.to_dict())
        return
    what = "documents" if method == "doc2vec" else "words"
    note(f"{report.space}: {report.n:,} {what} × {report.dim} (cosine), {method} "
         f"({report.recipe.get('architecture')}) on {report.documents:,} documents, {report.tokens:,} tokens, "
         f"seed {report.seed}, {report.workers} worker(s), {report.train_seconds:.1f} s; "
         f"model {report.model_path}")
    if report.checkpoints:
        note(f"checkpoints: {', '.join(report.checkpoints)} (epoch loss "
             f"{', '.join(f'{x:,.0f}' for x in report.epoch_loss)})")


@learn_app.command("word2vec")
def word2vec_cmd(
    data: CorpusArgs,
    training: WordTrainArgs,
    phrasing: PhrasesArgs,
    tokens: TokenizerArgs,
    checkpoints: Annotated[bool, typer.Option(
        "--checkpoints", help="Also store the vectors after each epoch as a space (see --checkpoint-name), with "
                              "the epoch's training loss: a series for repspace analyze track.")] = False,
    checkpoint_name: Annotated[str, typer.Option(
        "--checkpoint-name", help="With --checkpoints: the name of epoch e's space, from {space} and "
                                  "{epoch}.")] = "{space}@epoch{epoch}",
    json: Json = False,
) -> None:
    """Learn word2vec word vectors (CBOW or skip-gram, negative sampling): one item per word.

    Each item's id is the word and its metadata its corpus count. A text query
    is the mean of its in-vocabulary words' vectors.

    Examples:

      repspace learn word2vec corpus.txt --space w2v --sg --vector-size 100 --epochs 10

      repspace learn word2vec news.jsonl --space news-w2v --text-field body --phrases

      repspace search w2v --id king -k 10

      repspace learn word2vec lee.cor --space lee --epochs 10 --checkpoints

      repspace analyze track lee@epoch1 lee@epoch5 lee@epoch10
    """
    extra = {"checkpoints": True, "checkpoint_name": checkpoint_name} if checkpoints else {}
    _run("word2vec", data, training, tokens, json, **asdict(phrasing), **extra)


@learn_app.command("fasttext")
def fasttext_cmd(
    *,
    data: CorpusArgs,
    training: WordTrainArgs,
    min_n: Annotated[int, typer.Option("--min-n", min=1, help="Shortest character n-gram.")] = 3,
    max_n: Annotated[int, typer.Option("--max-n", min=1, help="Longest character n-gram.")] = 6,
    bucket: Annotated[int, typer.Option(
        min=1, help="Rows of the character n-gram hash table. gensim's default, 2,000,000, costs 1.6 GB at 100 "
                    "dimensions (twice over while training, and a model file as large); a corpus of a few "
                    "million tokens has far fewer distinct n-grams, so 200,000 loses little. Raise it for "
                    "large corpora.")] = 200_000,
    phrasing: PhrasesArgs,
    tokens: TokenizerArgs,
    json: Json = False,
) -> None:
    """Learn fastText word vectors (word2vec plus character n-gram subwords): one item per word.

    Words never seen in training still get a vector through their subwords, so
    a text query (misspellings included) is the mean of its words' vectors.

    Examples:

      repspace learn fasttext corpus.txt --space ft --sg --min-count 2 --epochs 10

      repspace search ft 'goverment' -k 5
    """
    _run("fasttext", data, training, tokens, json, min_n=min_n, max_n=max_n, bucket=bucket, **asdict(phrasing))


@learn_app.command("doc2vec")
def doc2vec_cmd(data: CorpusArgs, training: DocTrainArgs, tokens: TokenizerArgs, json: Json = False) -> None:
    """Learn doc2vec (Paragraph Vector) document vectors: one item per document, with its text.

    A text query gets an inferred vector (deterministic: seeded with the
    recipe's seed), so 'repspace search NAME "some text"' works.

    Examples:

      repspace learn doc2vec docs.jsonl --space d2v --id-field _id --dbow --epochs 20 --min-count 2

      repspace learn doc2vec --from-space docs --space docs-d2v

      repspace search d2v 'boundary layer on a flat plate' -k 5
    """
    _run("doc2vec", data, training, tokens, json)
