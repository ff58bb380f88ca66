"""The README and the documentation site: the README is a front page whose set-up commands come
first; every Python and shell block of the README, the docs and the model cards runs as pasted
(quick ones here, long ones with -m slow, marked as CONTRIBUTING.md says); every table agrees with
its records; the site builds with --strict, its internal links resolve, and Chromium opens its
pages without console errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tiengow import cli
from tiengow.benchmarks import render

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "agents" / "policies").glob("*.md"))]
BLOCK = re.compile(
    r"(?:<!-- (?P<mark>slow|skip): (?P<reason>[^>]*?) -->\n)?"
    r"```(?P<lang>[a-z]*)[^\n]*\n(?P<code>.*?)```",
    re.S,
)
RUNNABLE = {"python", "bash", "sh"}


def code_blocks(path: Path) -> list[tuple[str, str, str | None, str | None]]:
    """``(language, code, mark, reason)`` of every fenced block of a page, in order."""
    text = path.read_text(encoding="utf-8")
    return [(m["lang"], m["code"], m["mark"], m["reason"]) for m in BLOCK.finditer(text)]


def runnable_blocks() -> list:
    params = []
    for path in PAGES:
        for n, (lang, code, mark, reason) in enumerate(code_blocks(path)):
            if lang not in RUNNABLE:
                continue
            marks = [pytest.mark.slow] if mark == "slow" else []
            if mark == "skip":
                marks = [pytest.mark.skip(reason=reason)]
            params.append(pytest.param(lang, code, id=f"{path.relative_to(ROOT)}:{n}", marks=marks))
    return params


# ----------------------------------------------------------------------------- the README
def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; at most 150"
    blocks = code_blocks(README)
    assert blocks[0][:2] == ("bash", "pip install -e . && tiengow demo\n")
    assert blocks[1][:2] == ("bash", 'pip install -e ".[dev]" && python -m pytest\n')
    assert any(lang == "python" and mark is None for lang, _, mark, _ in blocks), "the quickstart runs by default"


def test_the_readme_links_resolve():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_the_citation_names_this_version():
    import tiengow_env

    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", text, re.M)
    assert re.search(rf"^version: {re.escape(tiengow_env.__version__)}$", text, re.M)


@pytest.mark.parametrize(("lang", "code"), runnable_blocks())
def test_code_block_runs_as_pasted(lang, code, tmp_path):
    """Python in a fresh interpreter, shell with ``bash -e``, both from an empty folder with this
    checkout's ``tiengow`` first on PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [sys.executable, "-c", code] if lang == "python" else ["bash", "-e", "-c", code]
    run = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stdout[-1000:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr


# ----------------------------------------------------------------------------- figures are data
def test_every_table_agrees_with_its_records():
    stale = {
        str(path.relative_to(ROOT)): render.stale_tables(path, ROOT / "benchmarks" / "results")
        for path in render.default_files(ROOT)
    }
    stale = {path: names for path, names in stale.items() if names}
    assert not stale, f"tables differ from their records: {stale}; run python -m tiengow.benchmarks.render"


MATCH = {
    "kind": "match",
    "command": "tiengow eval champion --vs search --deals 500 --seed 1",
    "version": "0.2.0",
    "commit": "abc1234",
    "date": "2026-12-05",
    "rules": "standard",
    "candidate": "champion",
    "opponent": "search",
    "baseline": None,
    "seed": 1,
    "deals": 500,
    "mean": 0.534,
    "ci95": [0.171, 0.893],
    "sprt": None,
    "ms_per_decision": {"champion": 22.24, "search": 18.0},
    "machine": {"cores": 2},
}


def records_folder(tmp_path: Path, matches: list[dict] = (), experiments: dict[str, object] = None) -> Path:
    results = tmp_path / "results"
    (results / "matches").mkdir(parents=True)
    (results / "experiments").mkdir()
    for n, record in enumerate(matches):
        (results / "matches" / f"m{n}.json").write_text(json.dumps(record))
    for name, data in (experiments or {}).items():
        (results / "experiments" / name).write_text(json.dumps(data))
    return results


def test_the_ladder_is_its_records_strongest_first(tmp_path):
    weaker = {
        **MATCH,
        "candidate": "ppo",
        "opponent": "expert",
        "mean": 2.73,
        "ci95": [-0.5, 5.0],
        "command": "tiengow eval ppo --vs expert",
    }
    results = records_folder(tmp_path, [weaker, MATCH])
    page = "a\n<!-- table:ladder -->\nold\n<!-- /table -->\nb\n"
    out = render.render_text(page, results)
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert rows[0] == (
        "| `champion` | `search` | +0.53 | [+0.17, +0.89] | 500 | 22.2 |  | "
        "`tiengow eval champion --vs search --deals 500 --seed 1` |"
    )
    assert rows[1].startswith("| `ppo` | `expert` | +2.73 | [-0.50, +5.00] |")
    assert out.startswith("a\n<!-- table:ladder -->\n") and out.endswith("<!-- /table -->\nb\n")
    only = render.render_text("<!-- table:ladder candidate=ppo -->\n<!-- /table -->", results)
    assert "`champion`" not in only and "`ppo`" in only
    assert (
        render.render_text("<!-- table:ladder -->\n<!-- /table -->", records_folder(tmp_path / "none"))
        == "<!-- table:ladder -->\n*No records yet.*\n<!-- /table -->"
    )


def test_the_ladder_orders_by_the_bots_places_and_the_bots_table_uses_each_bots_rung(tmp_path):
    """A big edge low on the ladder (greedy over random) comes after the top rungs; a bot's row in
    the bots table is its rung (the match against the bot right below it), not a bigger edge over a
    weaker bot, and a bot against itself places nothing."""
    big = {**MATCH, "candidate": "greedy", "opponent": "random", "mean": 18.0, "ci95": [15.0, 21.0]}
    over_ppo = {**MATCH, "opponent": "ppo", "mean": 1.5, "ci95": [1.0, 2.0]}
    itself = {**MATCH, "candidate": "pimc", "opponent": "pimc", "mean": 0.1, "ci95": [-0.2, 0.4]}
    results = records_folder(tmp_path, [big, over_ppo, itself, MATCH])
    rows = [
        line.split(" | ")[:2]
        for line in render.render_text("<!-- table:ladder -->\n<!-- /table -->", results).splitlines()
        if line.startswith("| `")
    ]
    assert rows == [["| `champion`", "`search`"], ["| `champion`", "`ppo`"], ["| `pimc`", "`pimc`"],
                    ["| `greedy`", "`random`"]]  # fmt: skip
    bots = render.render_text("<!-- table:bots -->\n<!-- /table -->", results)
    champion = next(line for line in bots.splitlines() if line.startswith("| `champion`"))
    pimc = next(line for line in bots.splitlines() if line.startswith("| `pimc`"))
    assert "+0.53 [+0.17, +0.89] vs `search`" in champion and "vs" not in pimc.split(" | ")[2]


def test_of_two_matches_of_one_pair_the_larger_leads_and_places_the_bot(tmp_path):
    """A short lucky match (higher mean, higher lower bound) comes after a long one of the same
    pair, and the bots table quotes the long one: the narrower CI, not the luckier."""
    lucky = {**MATCH, "deals": 340, "mean": 0.84, "ci95": [0.32, 1.36], "command": "tiengow eval champion --seed 2"}
    long = {**MATCH, "deals": 2000, "mean": 0.45, "ci95": [0.25, 0.65], "command": "tiengow eval champion --seed 3"}
    results = records_folder(tmp_path, [lucky, long])
    ladder = render.render_text("<!-- table:ladder -->\n<!-- /table -->", results)
    assert [line.split(" | ")[4] for line in ladder.splitlines() if line.startswith("| `")] == ["2000", "340"]
    bots = render.render_text("<!-- table:bots -->\n<!-- /table -->", results)
    assert "+0.45 [+0.25, +0.65] vs `search`" in bots


def test_a_stale_table_is_named(tmp_path):
    results = records_folder(tmp_path, [MATCH])
    page = tmp_path / "page.md"
    page.write_text("<!-- table:ladder -->\n| typed by hand |\n<!-- /table -->\n")
    assert render.stale_tables(page, results) == ["ladder"]
    assert render.main(["--check", "--results", str(results), str(page)]) == 1
    assert render.main(["--results", str(results), str(page)]) == 0
    assert render.stale_tables(page, results) == [] and "+0.53" in page.read_text()


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("<!-- table:nonsense -->\n<!-- /table -->", "unknown table 'nonsense'"),
        ("<!-- table:ladder rows -->\n<!-- /table -->", "table option 'rows' is not KEY=VALUE"),
    ],
)
def test_a_bad_marker_is_one_clear_error(page, message, tmp_path):
    with pytest.raises(ValueError, match=re.escape(message)):
        render.render_text(page, records_folder(tmp_path), "page.md")


def test_experiments_render_whatever_shape_they_have(tmp_path):
    results = records_folder(
        tmp_path,
        experiments={
            "a-one.json": {
                "spec": "pimc:64:beta=1",
                "opponent": "pimc",
                "seeds": [100],
                "deals": 200,
                "result": -0.67,
                "ci95": [-1.36, 0.02],
                "notes": "no gain",
            },
            "b-list.json": [{"name": "x", "mean": 0.1}, {"name": "y", "command": "tiengow eval y --vs z"}],
            "c-group.json": {
                "title": "Screens",
                "notes": "read champion as champion:locate=0",
                "records": [{"name": "r", "columns": {"match": "r", "chips": "+0.50"}, "source": "card line 5"}],
            },
            "e-idea.json": {
                "idea": "endgame",
                "what": "the last tiles solved exactly",
                "verdict": "removed",
                "runs": [
                    {"spec": "pimc:32:endgame=8", "opponent": "pimc", "seed": 100, "ci95": [-0.72, 0.49]},
                    {"spec": "champion:endgame=4", "baseline": "champion", "minus_baseline_per_hand": -0.46},
                ],
            },
        },
    )
    out = render.render_text("<!-- table:experiments -->\n<!-- /table -->", results)
    assert "| pimc:64:beta=1 | pimc | [100] | 200 | -0.67 | [-1.36, +0.02] | no gain |" in out
    assert "| x | +0.10 |  |" in out and "`tiengow eval y --vs z`" in out
    assert "### Screens" in out and "read champion as champion:locate=0" in out and "| r | +0.50 | card line 5 |" in out
    # an idea's record: what it was and its verdict above a table of its runs, the fields in one order
    assert "*what:* the last tiles solved exactly" in out and "*verdict:* removed" in out
    assert "| spec | opponent | baseline | seed | minus_baseline_per_hand | ci95 |" in out
    assert "| champion:endgame=4 |  | champion |  | -0.46 |  |" in out
    only = render.render_text("<!-- table:experiments file=c- -->\n<!-- /table -->", results)
    assert "### Screens" in only and "pimc:64" not in only
    (results / "experiments" / "d-bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="every experiment record must be a JSON object"):
        render.render_text("<!-- table:experiments -->\n<!-- /table -->", results)


def test_the_profile_table_sets_records_side_by_side(tmp_path):
    results = records_folder(tmp_path)
    for stem, ms in (("before", 16.5), ("after", 3.7)):
        record = {"search": {"ms_per_decision": ms}, "champion_parts_ms": {"PIMC": 2 * ms, "total": 2 * ms + 1}}
        (results / f"{stem}.json").write_text(json.dumps({**record, "command": f"profile {stem}"}))
    out = render.render_text("<!-- table:profile records=before,after -->\n<!-- /table -->", results)
    assert "| `search`, ms a decision | 16.5 | 3.7 |" in out
    assert "| `champion`: PIMC, ms | 33.00 | 7.40 |" in out and "| `champion`: total, ms | 34.00 | 8.40 |" in out
    assert "| `champion`, ms a decision |  |  |" in out  # a figure a record lacks is an empty cell
    assert "* `after`: `profile after`" in out
    with pytest.raises(ValueError, match="table:profile needs records=STEM"):
        render.render_text("<!-- table:profile -->\n<!-- /table -->", results)


def test_the_agents_reference_follows_the_catalogue_schema():
    sample = {
        "agents": [
            {
                "name": "pimc",
                "kind": "search",
                "usage": "pimc[:SAMPLES][:KEY=VALUE]...",
                "description": "determinized search",
                "options": [
                    {"key": "samples", "type": "int", "default": 32, "range": "1..10^7", "doc": "worlds a decision"},
                    {
                        "key": "rollout",
                        "type": "str",
                        "default": "greedy",
                        "range": "random|greedy|expert",
                        "doc": "who plays the rollouts",
                    },
                ],
            },
            {
                "name": "random",
                "kind": "heuristic",
                "usage": "random",
                "description": "a random legal action",
                "options": [],
            },
        ]
    }
    out = render.agents_reference(sample)
    assert "### `pimc`" in out and "Spec: `pimc[:SAMPLES][:KEY=VALUE]...`" in out
    assert "| `samples` | int | `32` | 1..10^7 | worlds a decision |" in out
    assert "| `rollout` | str | `greedy` | random\\|greedy\\|expert | who plays the rollouts |" in out
    assert "### `random`" in out and "No options." in out
    with pytest.raises(ValueError, match="expected"):
        render.agents_reference({"bots": []})


def test_the_speed_rows_come_from_the_newest_bench_record(tmp_path):
    results = records_folder(tmp_path)
    old = {"core_hands_per_s": 1.0, "aec_steps_per_s": 1.0, "peers": {}, "machine": {"date": "2020"}}
    new = {
        "core_hands_per_s": 600000.0,
        "aec_steps_per_s": 80000.0,
        "machine": {"processor": "x86_64", "cores": 2, "date": "2026"},
        "peers": {"openspiel_oh_hell_cpp_games_per_s": 30000.0, "pettingzoo_leduc_aec_steps_per_s": 10000.0},
    }
    (results / "a.json").write_text(json.dumps(new))
    (results / "b.json").write_text(json.dumps(old))
    out = render.render_text("<!-- table:speed -->\n<!-- /table -->", results)
    assert "| whole hands a second vs OpenSpiel Oh Hell (C++) | 600,000 | 30,000 | 20.0x |" in out
    assert "| AEC env steps a second vs PettingZoo Leduc Hold'em | 80,000 | 10,000 | 8.0x |" in out
    assert "Hearts" not in out and "on x86_64, 2 cores" in out


def test_the_tiles_are_drawn_from_the_core():
    out = render.render_text("<!-- table:tiles -->\n<!-- /table -->", ROOT)
    rows = [line for line in out.splitlines() if line.startswith("| <svg")]
    assert len(rows) == 21
    assert rows[0].endswith("| `6-6` | Heaven | civil | 11 | 2 | 6 |") and rows[0].count('fill="#c62828"') == 6
    assert rows[3].endswith("| `3-1` | Goose | civil | 8 | 2 | 1 |") and rows[3].count('fill="#c62828"') == 1
    assert rows[-1].endswith("| `2-1` | Little Three | military | 3 | 1 | 1 |")


# ----------------------------------------------------------------------------- tiengow examples
def test_examples_are_listed_and_copied(tmp_path, capsys):
    assert cli.main(["examples"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in cli.EXAMPLES)
    assert cli.main(["examples", str(tmp_path / "mine")]) == 0
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == sorted(cli.EXAMPLES)
    assert cli.main(["replay", "--check", str(tmp_path / "mine" / "check.jsonl")]) == 0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "x").write_text("no"), "is a file; expected a folder"),
        (lambda d: (d / "x").mkdir() or (d / "x" / "hand.json").write_text("mine"), "hand.json exists"),
    ],
)
def test_examples_never_overwrite(make, message, tmp_path, capsys):
    make(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert cli.main(["examples", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


# ----------------------------------------------------------------------------- the site
@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built with ``mkdocs build --strict`` into a temporary folder."""
    pytest.importorskip("mkdocs", reason="the docs tests need the docs extra: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return out


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])


def test_the_site_builds_and_every_internal_link_resolves(site):
    pages = sorted(site.rglob("*.html"))
    assert {"index.html", "rules/index.html", "api/tiengow_env/index.html", "experiments/index.html"} <= {
        str(p.relative_to(site)) for p in pages
    }
    parsed = {}
    for page in pages:
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        parsed[page] = parser
    broken = []
    for page, parser in parsed.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:")):
                continue
            base = site if parts.path.startswith("/") else page.parent  # 404.html links from the root
            target = (base / unquote(parts.path).lstrip("/")).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {link}")
            elif (
                parts.fragment
                and target.suffix == ".html"
                and target in parsed
                and parts.fragment not in parsed[target].ids
            ):
                broken.append(f"{page.relative_to(site)} -> {link} (no such anchor)")
    assert not broken, broken[:20]
    rules = (site / "rules" / "index.html").read_text(encoding="utf-8")
    assert rules.count('<svg width="40"') == 21 and "culin1895" in rules


CHROMIUM = os.environ.get("TIENGOW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def test_the_site_opens_in_chromium_without_console_errors(site, tmp_path):
    """Home, rules and one API page, served over HTTP as a host would; screenshots are kept in
    the test's temporary folder."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser test needs playwright (dev extra)")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    errors: list[str] = []
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                args=[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                ],
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
            for path, name, text in (
                ("", "home", "tiengow"),
                ("rules/", "rules", "Settlement"),
                ("api/tiengow_env/", "api", "tiengow_env.game"),
            ):
                page.goto(url + path)
                page.wait_for_load_state("networkidle")
                assert text in page.inner_text("article")
                page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
            browser.close()
    finally:
        server.shutdown()
    assert not errors, errors
    assert all((tmp_path / f"{name}.png").stat().st_size > 10_000 for name in ("home", "rules", "api"))


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (the base class's name)
        pass
