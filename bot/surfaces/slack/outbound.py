"""Everything the bot sends to Slack: chat.postMessage, chat.update and response_url posts, with bounded retries.

Why: a single HTTP 500 or 503 from chat.postMessage used to drop the reply while the audit log said it was
answered. Both clients now carry slack_sdk's retry handlers (server errors and connection errors; `RETRIES`
attempts each at most), and `deliver` reports whether Slack took every part, which the worker records on the job
(`audit show` prints it). A 429 is not retried here: it raises RateLimited (bot/surfaces/slack/throttle.py). Slack's answer is logged with its reason, never with a token.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, ServerErrorRetryHandler
from slack_sdk.webhook import WebhookClient

from bot.surfaces.slack.format import Message
from bot.surfaces.slack.throttle import RateLimited, Throttle

log = logging.getLogger("gpu_advisor.slack")

RETRIES = 3                     # per failure kind, per call: bounded, so a dead Slack cannot hold a worker forever
TIMEOUT_S = 15
META_TYPE = "gpu_advisor_reply"    # message metadata on every reply: which job and part it is
_BLOCK_ERRORS = {"invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long", "too_many_blocks"}


THROTTLE = Throttle()          # the process's Retry-Afters, per method and channel, for every workspace's client


def retry_handlers(connection: bool = True) -> list:
    """slack_sdk's own handlers: 5xx and (with `connection`) dropped connections, `RETRIES` times each.

    Not 429: its handler sleeps Retry-After in the worker's thread; a 429 is RateLimited instead and the job waits
    in the inbox (throttle.py). Not a dropped connection for the Web API client: a POST whose answer was lost
    ("Remote end closed connection without response") may have been posted, and slack_sdk would send it again
    blindly (measured: a reply posted twice when the network dropped just after Slack took it). The job waits
    instead, and its next attempt looks in the conversation first (`find`). A response_url cannot be looked up,
    so the webhook client keeps the retry."""
    handlers = [ServerErrorRetryHandler(max_retry_count=RETRIES)]
    return ([ConnectionErrorRetryHandler(max_retry_count=RETRIES)] if connection else []) + handlers


def reason(exc: SlackApiError) -> str:
    """Slack's error code plus its response_metadata messages (what was wrong with the blocks)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", 200)
    try:
        text = response.get("error") or str(exc)
        details = (response.get("response_metadata") or {}).get("messages") or []
    except Exception:                                   # noqa: BLE001 - a response that is not JSON
        return f"HTTP {status} ({str(exc)[:200]})" if isinstance(status, int) and status >= 300 else str(exc)
    if isinstance(status, int) and status >= 300:
        text = f"HTTP {status}: {text}"
    return text + (f" ({'; '.join(map(str, details))[:300]})" if details else "")


class Outbound:
    """Posts replies where a conversation lives: the channel/thread, or the response_url of a slash command."""

    def __init__(self, client: WebClient, throttle: Throttle = THROTTLE):
        self.client, self.throttle = client, throttle

    def deliver(self, messages: list[Message], place: Any, response_url: str | None, *, skip: int = 0,
                posted: Callable[[int], None] | None = None, job: str | None = None,
                resumed_since: float | None = None, response_type: str | None = None) -> tuple[bool, str | None]:
        """Post `messages[skip:]`; (True, None) when Slack took all of them, else (False, why). RateLimited when a
        part must wait (Slack's 429, or a Retry-After still running for the channel): the parts before it are
        counted, so the job, put back with its not-before time, posts only the rest.

        `posted(n)` is called after each part Slack accepted, so a resumed job does not post it again. Each
        channel post carries the job id and part number as message metadata; for a resumed job
        (`resumed_since`: when it was received) the first part not counted is looked up in the conversation
        first, since the process may have died after Slack took it but before it was counted.
        """
        for n, (text, blocks) in enumerate(messages, 1):
            if n <= skip:
                continue
            if place.kind == "slash" and response_url:
                error = self.respond(response_url, text, blocks, response_type or "ephemeral")
            elif job and resumed_since is not None and n == skip + 1 and self.find(place, job, n, resumed_since):
                log.info("part %d of job %s was posted before the restart: not posted again", n, job)
                error = None
            else:
                meta = {"event_type": META_TYPE, "event_payload": {"job": job, "part": n}} if job else None
                error = self.post(place.channel, place.reply_thread, text, blocks, meta)
            if error:
                return False, error
            if posted:
                posted(n)
        return True, None

    def find(self, place: Any, job: str, part: int, since: float) -> bool:
        """Is part `part` of `job` already in the conversation? (False when it cannot be told: posted again)."""
        try:
            if place.reply_thread:
                resp = self.client.conversations_replies(channel=place.channel, ts=place.reply_thread,
                                                         oldest=f"{since:.6f}", include_all_metadata=True, limit=200)
            else:
                resp = self.client.conversations_history(channel=place.channel, oldest=f"{since:.6f}",
                                                         include_all_metadata=True, limit=200)
        except Exception as exc:                        # noqa: BLE001 - a missing scope, a network error
            log.warning("could not check %s for part %d of job %s (%s): posting it again", place.channel, part, job,
                        reason(exc) if isinstance(exc, SlackApiError) else type(exc).__name__)
            return False
        for message in resp.get("messages") or []:
            meta = message.get("metadata") or {}
            payload = meta.get("event_payload") or {}
            if meta.get("event_type") == META_TYPE and payload.get("job") == job and payload.get("part") == part:
                return True
        return False

    def post(self, channel: str, thread_ts: str | None, text: str, blocks: list[dict] | None,
             metadata: dict[str, Any] | None = None) -> str | None:
        """chat.postMessage with unfurling off; None when posted, else Slack's reason (blocks dropped once)."""
        kwargs: dict[str, Any] = {"channel": channel, "text": text, "unfurl_links": False, "unfurl_media": False}
        if blocks:
            kwargs["blocks"] = blocks
        if thread_ts:
            kwargs["thread_ts"] = thread_ts
        if metadata:
            kwargs["metadata"] = metadata
        self.throttle.check("chat.postMessage", channel)
        try:
            self.client.chat_postMessage(**kwargs)
            self.throttle.reached()
            return None
        except SlackApiError as exc:
            status = getattr(exc.response, "status_code", None)
            if status == 429:
                raise self._limited("chat.postMessage", channel, exc.response.headers) from None
            if isinstance(status, int) and status >= 500:      # still failing after slack_sdk's retries
                _count("chat.postMessage", f"http_{status}")
                raise self.throttle.away("chat.postMessage", channel, f"HTTP {status}") from None
            self.throttle.reached()
            why = reason(exc)
            _count("chat.postMessage", why)
            log.error("chat.postMessage to %s failed: %s", channel, why)
            if blocks and why.split(" ")[0] in _BLOCK_ERRORS:
                return self.post(channel, thread_ts, text, None, metadata)
            return why
        except Exception as exc:                        # noqa: BLE001 - network errors after the retries
            _count("chat.postMessage", type(exc).__name__)
            raise self.throttle.away("chat.postMessage", channel, f"{type(exc).__name__}: {exc}") from None

    def respond(self, url: str, text: str, blocks: list[dict] | None, response_type: str = "ephemeral", *,
                replace_original: bool = False) -> str | None:
        """One message (ephemeral, or in_channel when shared) to a response_url; None when Slack took it."""
        self.throttle.check("response_url", "")
        hook = WebhookClient(url, timeout=TIMEOUT_S, retry_handlers=retry_handlers())
        try:
            resp = hook.send(text=text, blocks=blocks, response_type=response_type,
                             replace_original=replace_original, unfurl_links=False, unfurl_media=False)
        except Exception as exc:                        # noqa: BLE001 - network errors after the retries
            _count("response_url", type(exc).__name__)
            raise self.throttle.away("response_url", "", f"{type(exc).__name__}: {exc}") from None
        if resp.status_code == 429:
            raise self._limited("response_url", "", resp.headers)
        if resp.status_code >= 500:
            _count("response_url", f"http_{resp.status_code}")
            raise self.throttle.away("response_url", "", f"HTTP {resp.status_code}")
        self.throttle.reached()
        if resp.status_code >= 300:
            _count("response_url", f"http_{resp.status_code}")
            log.error("posting to the response_url failed: HTTP %s %s", resp.status_code, (resp.body or "")[:200])
            return f"HTTP {resp.status_code} {(resp.body or '')[:200]}"
        return None

    def _limited(self, method: str, channel: str, headers: Any) -> RateLimited:
        """Slack answered 429: hold the method and channel for its Retry-After, count it, log one line."""
        header = None
        if headers:
            header = next((v for k, v in dict(headers).items() if str(k).lower() == "retry-after"), None)
            if isinstance(header, list):
                header = header[0] if header else None
        limited = self.throttle.limited(method, channel, header)
        log.info("%s to %s: Slack asks to wait %.0f s (429); the job waits in the inbox, the workers go on",
                 method, channel or "the response_url", limited.retry_after)
        return limited

    def update(self, channel: str, ts: str, text: str, blocks: list[dict]) -> None:
        try:
            self.client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks)
        except SlackApiError as exc:
            _count("chat.update", reason(exc))
            log.error("chat.update of %s in %s failed: %s", ts, channel, reason(exc))
        except Exception as exc:                        # noqa: BLE001 - network errors after the retries
            _count("chat.update", type(exc).__name__)
            log.error("chat.update of %s in %s failed: %s: %s", ts, channel, type(exc).__name__, exc)


def _count(method: str, why: str) -> None:
    """A refused or failed Slack call in gpu_advisor_slack_api_errors_total (bot/surfaces/metrics.py)."""
    from bot.surfaces.metrics import slack_error
    slack_error(method, why)
