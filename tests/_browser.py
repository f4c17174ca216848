"""Headless Chromium for the report tests: the DOM after load, a screenshot, the page's requests.

Chromium's own ``--dump-dom`` and ``--screenshot`` do the work (no DevTools client needed). The
page's network requests come from Chromium's net log: requests made on behalf of a ``file://``
page carry that page's network isolation key; Chromium's own background requests (time sync,
accounts, dictionaries) do not, and are ignored. DNS is mapped to nothing, so a request that
slips through reaches no host.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["DomNode", "chromium", "load_page", "parse_dom", "screenshot"]

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]


def chromium() -> str | None:
    """The Chromium binary (``$CHROMIUM``, else Debian's ``chromium`` on PATH), or None."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(args: list[str], timeout: float = 90) -> subprocess.CompletedProcess:
    binary = chromium()
    assert binary, "chromium not found"
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _page_requests(net_log: Path) -> list[str]:
    """Non-file URLs requested on behalf of a file:// page, from a Chromium net log."""
    events = json.loads(net_log.read_text())["events"]
    page_sources = {
        e["source"]["id"]
        for e in events
        if "file://" in str((e.get("params") or {}).get("network_isolation_key", ""))
    }
    urls = {(e.get("params") or {}).get("url") for e in events if e["source"]["id"] in page_sources}
    return sorted(u for u in urls if u and not u.startswith("file:"))


def load_page(page: Path) -> tuple[str, list[str]]:
    """The page's DOM after load (serialised by Chromium) and the URLs it requested."""
    with tempfile.TemporaryDirectory(prefix="netlog-") as tmp:
        log = Path(tmp) / "net.json"
        done = _run([f"--log-net-log={log}", "--dump-dom", page.resolve().as_uri()])
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout, _page_requests(log)


def screenshot(page: Path, out: Path, width: int = 1280, height: int = 2400) -> Path:
    """A PNG of the page's top ``height`` pixels."""
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _run(
        [
            f"--screenshot={out.resolve()}",
            f"--window-size={width},{height}",
            page.resolve().as_uri(),
        ]
    )
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    return out


class DomNode:
    """An element of the parsed DOM: tag, attributes, children, text."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[DomNode] = []
        self.text = ""

    def iter(self, tag: str | None = None):
        for child in self.children:
            if tag is None or child.tag == tag:
                yield child
            yield from child.iter(tag)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def find_id(self, ident: str) -> DomNode | None:
        return next((n for n in self.iter() if n.attrs.get("id") == ident), None)

    def all_text(self) -> str:
        return self.text + "".join(c.all_text() for c in self.children)


_VOID = {"meta", "link", "br", "img", "input", "hr", "col", "area", "base", "source", "wbr"}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = DomNode("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = DomNode(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(DomNode(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text += data


def parse_dom(html: str) -> DomNode:
    """A tree of :class:`DomNode` from Chromium's serialised DOM."""
    b = _Builder()
    b.feed(html)
    return b.root
