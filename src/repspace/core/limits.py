"""The tunables of repspace in one table: the limits several modules share or a user may want to know.

Each constant says what it bounds and why it has its value; modules import them from here
rather than define their own copy, so a limit changes in one place (``tests/core/test_limits.py``
fails on a second definition). Measured figures behind the values are in BENCHMARKS.md.

Examples
--------
>>> from repspace.core import limits
>>> limits.DEFAULT_EF <= limits.MAX_EF
True
"""

from __future__ import annotations

# -- Search: HNSW beams and the exact/approximate switch ------------------------------------

#: HNSW search beam when neither the index spec nor the call gives one (widened to k when k is larger).
DEFAULT_EF = 64
#: Largest HNSW beam (or share of IVF lists) a selective filter may widen a search to; beyond it
#: a brute-force scan of the allowed rows is cheaper (see BENCHMARKS.md).
MAX_EF = 4096
#: Largest number of items searched exactly (blocked BLAS) by default, for queries and k-NN graphs
#: alike; larger spaces use HNSW with measured recall (exact search cost grows with n).
EXACT_MAX_ITEMS = 50_000
#: Up to this many items RSA compares every pair (n^2 / 2 distances); above it pairs are sampled.
RSA_ALL_PAIRS_MAX = 3000
#: Largest training sample of a TLDR reduction (``tldrD`` specs, :class:`~repspace.transforms.TLDR`):
#: its exact neighbour graph is n² / 2 dot products, and 10 epochs over 10,000 rows take about a
#: minute on a loaded 2-core CPU (GloVe 50-d to 16 dimensions: 50-80 s).
TLDR_MAX_ROWS = 10_000

# -- Kernel memory bounds ---------------------------------------------------------------------

#: Largest block of float32 query x base scores the exact search holds at once, in entries
#: (256 MiB): big enough for BLAS to run at full speed, small enough for a laptop.
EXACT_BLOCK_ENTRIES = 64 * 1024 * 1024
#: Largest float64 array used while re-scoring candidates exactly, in entries (64 MiB); shared by
#: the exact search, the k-NN graph and the distributed tiles so that each stays within one bound.
RESCORE_ENTRIES = 8 * 1024 * 1024
#: Largest float32 array the index funnel builds while rescoring (query chunk x candidates x dim),
#: in entries (16 MiB): it runs once per request, beside the index's own memory.
FUNNEL_RESCORE_ENTRIES = 4 * 1024 * 1024
#: Largest block of float64 (query, base) scores the hubness reductions hold at once, in entries
#: (32 MiB per array; they keep several such arrays alive).
HUBNESS_BLOCK_ENTRIES = 4 * 1024 * 1024
#: Largest block of float64 (token, vocabulary) logits the lens holds at once, in entries (32 MiB):
#: a vocabulary of 30,522 tokens is scored about 137 tokens at a time.
LENS_BLOCK_ENTRIES = 4 * 1024 * 1024

# -- Tie bands: which near-ties are scored again in float64 -----------------------------------

#: Relative band below the k-th float32 score whose candidates are re-scored in float64:
#: float32 rounding of a d-term dot product is far below 1e-4, so no true neighbour is lost.
TIE_BAND_FLOAT32 = 1e-4
#: Relative band below the k-th float64 key (hubness-reduced scores from a BLAS product) whose
#: items are scored again pair by pair; float64 rounding (~1e-16) is far below 1e-6.
TIE_BAND_FLOAT64 = 1e-6

# -- Writing and embedding --------------------------------------------------------------------

#: Encoder used for texts when none is named (small, fast, good on English sentence similarity).
DEFAULT_ENCODER = "minilm"
#: Rows written per store transaction when a new or derived space is filled: large enough to
#: amortise the commit, small enough to bound memory.
WRITE_BATCH = 100_000

# -- HTTP service -----------------------------------------------------------------------------

#: Largest weight of the BM25 list in a hybrid search: beyond it the dense list no longer counts, and the
#: fused scores (kept in float32) would overflow for weights near the float range.
MAX_LEXICAL_WEIGHT = 1e6
#: Largest request body (bytes) the server accepts by default (bounds one request's memory; ``create_app(max_body=...)`` changes it).
MAX_BODY = 16 * 1024 * 1024
#: Seconds a client has to send a whole request line and its headers (slow-client protection).
HEADER_TIMEOUT = 5.0
#: Largest k a search over HTTP may ask for (the CLI has no such bound; a shared service must).
MAX_K = 1000
#: Largest k of the two-space HTTP routes (each lists kept, lost and gained neighbours).
MAX_PAIR_K = 100
#: Largest number of items one HTTP write may carry.
MAX_BATCH = 10_000
#: Largest number of examples in each list of an HTTP set query (``all_of``, ``none_of``).
MAX_SET_EXAMPLES = 1000
#: Longest query text of a two-space HTTP search, in characters.
MAX_PAIR_TEXT = 10_000
#: Longest metadata field name an HTTP map can be coloured by, in characters.
MAX_FIELD_NAME = 200

# -- Late chunking (repspace.engines.encoders.late_chunking) ------------------------------------

#: Tokens two neighbouring windows share when a long document is run through the model in windows: each token
#: takes its state from the window where it has the most context, so every token sees at least this many
#: tokens' worth of context on the side where a window cuts the document (a quarter of MiniLM's 256).
LATE_CHUNK_OVERLAP = 64

# -- One query per call (repspace.core.store._records) ------------------------------------------

#: Bytes of item records (id, text, metadata JSON) a process keeps for search hits, all spaces together
#: (about 300,000 short records): a row found again costs a lookup, not an SQLite read.
RECORD_CACHE_BYTES = 64 * 1024 * 1024

# -- Multi-vector spaces (token vectors, late interaction) --------------------------------------

#: Most token vectors one item of a multi-vector space may hold: ColBERT-style encoders cut documents at a few
#: hundred tokens (MiniLM at 256, ColBERTv2 at 180-300), so 8,192 leaves room for long inputs while bounding
#: what one row costs to store, read and score (8,192 x 384 float32 = 12 MiB).
MAX_TOKENS_PER_ROW = 8192
#: Documents MUVERA's first stage shortlists per query for exact MaxSim rescoring when none is asked for
#: (recall@10 of the exact MaxSim top 10 about 0.99 at 100 on Cranfield, see RESEARCH.md, S248).
MUVERA_CANDIDATES = 100
#: Largest MUVERA shortlist one query may ask for (each shortlisted document is rescored token by token).
MAX_MUVERA_CANDIDATES = 100_000
