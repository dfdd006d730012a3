"""MkDocs hook: images that a page links from the repository outside docs/ go into the site.

``docs/benchmarks.md`` shows ``![...](../bench/results/compile_time.png)``, which GitHub
renders from the repository. MkDocs sees only docs/, so this hook adds each such image to
the site under ``assets/repo/<its path in the repository>`` and points the link there: the
page reads the same in both places, and the image stays where ``make bench`` writes it.
"""

from __future__ import annotations

import os
import pathlib
import posixpath
import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

_IMAGE = re.compile(r"(!\[[^\]]*\]\()([^)\s]+\.(?:png|svg|jpe?g|gif))\)")
_PREFIX = "assets/repo"


def _outside_docs(page_uri: str, link: str, config: MkDocsConfig) -> str | None:
    """The repository path a page's image link points to, where it is outside docs/."""
    if "://" in link or link.startswith("/"):
        return None
    docs = pathlib.Path(config.docs_dir).resolve()
    target = (docs / posixpath.dirname(page_uri) / link).resolve()
    repo = docs.parent
    if target.is_relative_to(docs) or not target.is_relative_to(repo) or not target.is_file():
        return None
    return target.relative_to(repo).as_posix()


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for page in list(files.documentation_pages()):
        text = pathlib.Path(page.abs_src_path).read_text(encoding="utf-8")
        for match in _IMAGE.finditer(text):
            path = _outside_docs(page.src_uri, match[2], config)
            uri = f"{_PREFIX}/{path}"
            if path is not None and files.get_file_from_path(uri) is None:
                repo = pathlib.Path(config.docs_dir).resolve().parent
                files.append(File.generated(config, uri, abs_src_path=os.fspath(repo / path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    def relink(match: re.Match[str]) -> str:
        path = _outside_docs(page.file.src_uri, match[2], config)
        if path is None:
            return match[0]
        here = posixpath.dirname(page.file.src_uri) or "."
        return f"{match[1]}{posixpath.relpath(f'{_PREFIX}/{path}', here)})"

    return _IMAGE.sub(relink, markdown)
