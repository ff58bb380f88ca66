"""mkdocs hook: every page's marked tables (``<!-- table:NAME -->`` ... ``<!-- /table -->``) are
rendered afresh from the records in ``benchmarks/results`` as the site is built, by the same
renderer that writes them into the committed pages (``python -m tiengow.benchmarks.render``)."""

from __future__ import annotations

from pathlib import Path

from tiengow.benchmarks.render import render_text


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001  (mkdocs' hook signature)
    """The page's Markdown with its tables rendered from the records."""
    results = Path(config.config_file_path).parent / "benchmarks" / "results"
    return render_text(markdown, results, page.file.src_uri)
