"""The WebFetch built-in (deferred): fetch a URL and return its text (HTML reduced to text).

Without network access it fails with a clear message instead of hanging: connect and read
timeouts are bounded (20 s), and the body is capped at 5 MB. Egress rules: see :class:`WebFetchTool`.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any

from ..models import ToolErrorKind, ToolResult
from ._common import clip, fail, spec
from .base import ToolContext

TIMEOUT_S = 20.0
MAX_BYTES = 5_000_000
MAX_REDIRECTS = 10


class _TextOnly(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "svg", "head"})
    _BLOCK = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """Visible text of an HTML page, one paragraph per line."""
    parser = _TextOnly()
    try:
        parser.feed(markup)
    except Exception:  # malformed markup: fall back to stripping tags
        return html.unescape(re.sub(r"<[^>]+>", " ", markup))
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


class WebFetchTool:
    """GET a URL over HTTP(S) and return its content as text.

    Sends data off the machine (the URL itself can carry a secret), so it is not read-only: it
    asks unless allowed (``WebFetch`` or ``WebFetch(domain:host)``). Loopback, link-local and
    private addresses are refused unless a settings rule names the host (:mod:`.netguard`), on
    every hop; a redirect to another host is not followed: the result names the new URL so that
    fetching it goes through the permission check again (as Claude Code does).
    """

    read_only = False
    network = True
    spec = spec(
        "WebFetch",
        "Fetches a URL over HTTP(S), such as a web page or a file, and returns its content as text "
        "(HTML is reduced to its visible text; output cut at 30,000 characters). Needs network access.",
        {
            "url": {"type": "string", "format": "uri", "description": "The http:// or https:// URL to fetch"},
            "prompt": {"type": "string", "description": "What to look for in the page (kept with the result)"},
        },
        ["url"],
        hint="fetch a URL or download a web page",
    )

    async def run(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Fetch ``params["url"]``; network failures and refusals become clear ``is_error`` results."""
        import httpx

        from .netguard import guarded_client

        url = params["url"].strip()
        if not re.match(r"^https?://", url, re.IGNORECASE):
            return fail(
                "WebFetch", f"Only http:// and https:// URLs can be fetched, not {url!r}.", ToolErrorKind.INVALID_PARAMS
            )
        client, guard = guarded_client(lambda host: ctx.private_host_allowed("WebFetch", host), TIMEOUT_S)
        try:
            async with client:
                fetched = await _fetch(client, url)
        except httpx.TimeoutException:
            return fail("WebFetch", f"Timed out after {TIMEOUT_S:g} s fetching {url}.", ToolErrorKind.TIMEOUT)
        except httpx.HTTPError as exc:
            if guard.refusals:
                return fail(
                    "WebFetch", f"Refused to fetch {url}: {guard.refusals[-1]}", ToolErrorKind.PRIVATE_HOST_REFUSED
                )
            return fail(
                "WebFetch",
                f"Could not fetch {url}: {exc or type(exc).__name__}. "
                "Is this machine online, and is the host reachable?",
            )
        if isinstance(fetched, ToolResult):
            return fetched
        status, ctype, text = fetched
        if "html" in ctype.lower():
            text = html_to_text(text)
        if status >= 400:
            return fail("WebFetch", clip(f"HTTP {status} from {url}\n{text[:2000]}"))
        head = f"URL: {url}\n" + (f"Looking for: {params['prompt']}\n" if params.get("prompt") else "")
        return ToolResult.ok("WebFetch", clip(head + "\n" + text))


async def _fetch(client: Any, url: str) -> tuple[int, str, str] | ToolResult:
    """(status, content type, body text) of ``url``, following same-host redirects only."""
    for _ in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", url, headers={"User-Agent": "toolscout-webfetch"}) as resp:
            if resp.is_redirect and resp.headers.get("location"):
                target = resp.url.join(resp.headers["location"])
                if target.scheme not in ("http", "https"):
                    return fail("WebFetch", f"{url} redirects to {target}, which is not an http(s) URL.")
                if (target.host or "").lower() != (resp.url.host or "").lower():
                    return ToolResult.ok(
                        "WebFetch",
                        f"{url} redirects to another host: {target}\nTo fetch it, "
                        f"call WebFetch again with url={target}",
                    )
                url = str(target)
                continue
            body = bytearray()
            async for chunk in resp.aiter_bytes():
                body.extend(chunk)
                if len(body) > MAX_BYTES:
                    break
            text = bytes(body).decode(resp.encoding or "utf-8", errors="replace")
            return resp.status_code, resp.headers.get("content-type", ""), text
    return fail("WebFetch", f"Too many redirects (more than {MAX_REDIRECTS}) fetching {url}.")
