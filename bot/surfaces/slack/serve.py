"""`gpu-advisor serve`: the Slack app under waitress (HTTP mode) or over Socket Mode, with health and metrics.

Both modes listen on `--port` / $PORT (default 3000):
- `GET /healthz`, liveness: 200 `{"ok": true, ...}` while the process serves HTTP at all. It reads nothing else (no
  database, no Slack), so a Slack or database outage never restarts a pod; what it catches is a process that no
  longer answers. The server starts only once the knowledge base is loaded and the database opened. Docker's
  HEALTHCHECK and the Kubernetes liveness and startup probes call it.
- `GET /readyz`, readiness: 200 when the bot can take requests, 503 `{"ok": false, ...}` when not: the database
  as the watch last saw it (bot/surfaces/slack/dbwatch.py: up, or down since when and why; the inbox's jobs) and,
  in Socket Mode, the WebSocket (the client's `is_connected()` and a pong within 3 ping intervals). In HTTP mode
  Slack connects to us, so the Slack API's state (reachable, or away since when: bot/surfaces/slack/throttle.py)
  is reported but does not fail readiness: a Slack API outage would take every replica out of the Service at
  once, and events are recorded meanwhile. Both answer from state in memory, within READY_TIMEOUT_S at worst.
- `GET /metrics`: Prometheus text format (bot/surfaces/metrics.py).
- HTTP mode only: `POST /slack/events`, Bolt's WSGI adapter (events, commands, interactivity); with
  SLACK_CLIENT_ID/SECRET also `GET /slack/install` (the "Add to Slack" page, which sets the state cookie) and
  `GET /slack/oauth_redirect` (Slack sends the installer back here: state checked, code exchanged, token stored),
  Bolt's OAuth flow (bot/surfaces/slack/oauth.py). These are browser requests: unsigned, so not behind the guard.
Anything else is 404; a wrong method is 405 with `Allow`.
"""
from __future__ import annotations

import json
import logging
import signal
import threading
import time
from typing import Any, Callable

from slack_bolt import App
from slack_sdk.errors import SlackApiError

from bot.records.errors import AdvisorError, ConfigError
from bot.surfaces.slack.app import build_app
from bot.surfaces.slack.guard import guarded
from bot.surfaces.slack.outbound import reason as _reason
from bot.surfaces.slack.settings import SlackSettings, safe_url, setup_logging

log = logging.getLogger("gpu_advisor.slack")

Health = Callable[[], tuple[bool, dict[str, Any]]]
READY_TIMEOUT_S = 1.0               # /readyz answers 503 rather than wait longer for its facts
STARTED = time.monotonic()


def http_health() -> tuple[bool, dict[str, Any]]:
    """HTTP mode's own readiness facts: Slack connects to us; the Slack API's state is said, not required."""
    from bot.surfaces.slack.outbound import THROTTLE
    return True, {"mode": "http", **THROTTLE.state()}


def alive() -> tuple[bool, dict[str, Any]]:
    """Liveness: answering at all is the proof; nothing is read that could block or depend on Slack."""
    return True, {"uptime_s": round(time.monotonic() - STARTED, 1)}


def bounded(check: Health, timeout: float = READY_TIMEOUT_S) -> tuple[bool, dict[str, Any]]:
    """`check()` in a helper thread, given at most `timeout` seconds: a lock held elsewhere can slow a probe down,
    never hang it (the kubelet's own timeout would count that as a failure without the reason)."""
    out: list[tuple[bool, dict[str, Any]]] = []
    done = threading.Event()

    def run() -> None:
        try:
            out.append(check())
        except Exception as exc:                        # noqa: BLE001 - a probe reports, it does not raise
            out.append((False, {"error": f"{type(exc).__name__}: {exc}"}))
        finally:
            done.set()
    threading.Thread(target=run, name="readiness", daemon=True).start()
    if not done.wait(timeout):
        return False, {"error": f"the readiness check took over {timeout:g} s"}
    return out[0]


def wsgi_app(app: App | None, health: Health = http_health, signing_secret: str | None = None) -> Callable:
    """`POST /slack/events` through the guard (signature first, then shape; bot/surfaces/slack/guard.py) to Bolt's
    WSGI adapter (when `app` is given), `GET /healthz` (liveness), `GET /readyz` (readiness: `health`) and
    `GET /metrics`."""
    handler, bolt, oauth_paths = None, None, ()
    if app is not None:
        from slack_bolt.adapter.wsgi import SlackRequestHandler
        bolt = SlackRequestHandler(app, path="/slack/events")
        handler = guarded(bolt, signing_secret)
        flow = app.oauth_flow
        oauth_paths = (flow.install_path, flow.redirect_uri_path) if flow is not None else ()

    def plain(start_response: Callable, status: str, body: bytes, ctype: str = "text/plain",
              extra: list | None = None) -> list[bytes]:
        start_response(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))] + (extra or []))
        return [body]

    def application(environ: dict, start_response: Callable) -> Any:
        path, method = environ.get("PATH_INFO") or "/", environ.get("REQUEST_METHOD") or "GET"
        if path in ("/healthz", "/readyz", "/metrics") and method not in ("GET", "HEAD"):
            return plain(start_response, "405 Method Not Allowed", b"GET only\n", extra=[("Allow", "GET, HEAD")])
        if path in ("/healthz", "/readyz"):
            ok, detail = alive() if path == "/healthz" else bounded(health)
            body = json.dumps({"ok": ok, "service": "gpu-advisor", **detail}).encode()
            return plain(start_response, "200 OK" if ok else "503 Service Unavailable",
                         body if method == "GET" else b"", "application/json")
        if path == "/metrics":
            from bot.surfaces.metrics import exposition
            body, ctype = exposition()
            return plain(start_response, "200 OK", body if method == "GET" else b"", ctype)
        if path in oauth_paths:
            if method != "GET":
                return plain(start_response, "405 Method Not Allowed", b"GET only\n", extra=[("Allow", "GET")])
            return bolt(environ, start_response)
        if path == "/slack/events" and handler is not None:
            if method != "POST":
                return plain(start_response, "405 Method Not Allowed", b"POST only\n", extra=[("Allow", "POST")])
            return handler(environ, start_response)
        return plain(start_response, "404 Not Found", b"not found\n")

    return application


# Against idle and slow connections (slowloris): waitress buffers each request in its event loop and hands only
# complete ones to the threads, so an idle socket costs a file descriptor, not a thread; up to CONNECTIONS are
# accepted (poll(), not select(), which stops at 1024 descriptors) and one silent for IDLE_S is closed.
CONNECTIONS, IDLE_S, HTTP_THREADS = 1000, 20, 8


def _server(application: Callable, host: str, port: int) -> Any:
    from waitress import create_server
    return create_server(application, host=host, port=port, threads=HTTP_THREADS, ident="gpu-advisor",
                         max_request_body_size=1 << 20, clear_untrusted_proxy_headers=True,
                         connection_limit=CONNECTIONS, channel_timeout=IDLE_S, cleanup_interval=5,
                         asyncore_use_poll=True)


def with_inbox(health: Health, app: App | None) -> Health:
    """`health` plus the durable inbox's state (jobs per state, the queue) and any failure to record a job."""
    inbox_health = getattr(app, "advisor_health", None)
    if inbox_health is None:
        return health

    def combined() -> tuple[bool, dict[str, Any]]:
        ok, detail = health()
        good, facts = inbox_health()
        return ok and good, {**detail, **facts}
    return combined


def _stop(app: App) -> None:
    """After the listener closed: let the workers finish within ADVISOR_STOP_GRACE_S (below the pod's
    terminationGracePeriodSeconds in deploy/, so Kubernetes never kills a stop that is handing jobs back)."""
    stop = getattr(app, "advisor_stop", None)
    if stop is not None:
        from bot.records.config import settings as conf
        stop(float(conf().advisor_stop_grace_s))


def _on_sigterm() -> None:
    def stop(signum: int, frame: Any) -> None:        # SIGTERM (docker stop, systemd, Kubernetes): a clean stop
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)


def serve_http(app: App, host: str, port: int, signing_secret: str | None = None) -> None:
    server = _server(wsgi_app(app, with_inbox(http_health, app), signing_secret), host, port)
    real_port = getattr(server, "effective_port", port)
    routes = "POST /slack/events, GET /healthz, GET /readyz, GET /metrics" + (
        ", GET /slack/install, GET /slack/oauth_redirect" if getattr(app, "oauth_flow", None) is not None else "")
    log.info("HTTP mode: listening on http://%s:%s (%s)", host, real_port, routes)
    _on_sigterm()
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.close()                      # no new request is taken; Slack retries what it cannot deliver
        log.info("HTTP server stopped")
        _stop(app)


def socket_health(client: Any, ping_s: float) -> Health:
    """The Socket Mode client's own `is_connected()`, and a pong from Slack within 3 ping intervals: a socket
    that died without a close frame stays "connected" to the SDK until its stale check (4 intervals) runs."""
    def health() -> tuple[bool, dict[str, Any]]:
        session = getattr(client, "current_session", None)
        connected = bool(client.is_connected())
        last = getattr(session, "last_ping_pong_time", None) if session is not None else None
        age = None if last is None else max(0.0, time.time() - float(last))
        fresh = age is None or age <= 3 * ping_s
        state = "connected" if connected and fresh else "stale" if connected else "disconnected"
        detail: dict[str, Any] = {"mode": "socket", "socket": state}
        if age is not None:
            detail["last_pong_s"] = round(age, 1)
        return connected and fresh, detail
    return health


def serve_socket(app: App, settings: SlackSettings, host: str, port: int) -> None:
    """Socket Mode, plus /healthz, /readyz (the socket's state) and /metrics on `port` in a background thread."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler
    from bot.records.config import settings as conf
    ping = max(0.1, float(conf().advisor_socket_ping_s))
    handler = SocketModeHandler(app, app_token=settings.app_token, ping_interval=ping)
    health = with_inbox(socket_health(handler.client, ping), app)

    try:
        server = _server(wsgi_app(None, health), host, port)
    except OSError as exc:                  # the bot still works; the probes will say so by failing
        server = None
        log.error("GET /healthz, /readyz and /metrics are not served: cannot listen on %s:%s (%s); set PORT or "
                  "--port to a free port", host, port, exc.strerror or exc)
        log.info("Socket Mode: connecting to Slack (%s)", safe_url(settings.api_base_url))
    else:
        threading.Thread(target=server.run, name="health-metrics", daemon=True).start()
        log.info("Socket Mode: connecting to Slack (%s); GET /healthz, /readyz and /metrics on http://%s:%s",
                 safe_url(settings.api_base_url), host, getattr(server, "effective_port", port))
    _on_sigterm()
    try:
        handler.start()
    except SlackApiError as exc:
        raise ConfigError(f"Socket Mode could not connect: Slack answered {_reason(exc)} to apps.connections.open",
                          fix="check SLACK_APP_TOKEN (an app-level token with the connections:write scope) and that "
                              "Socket Mode is enabled in the app's settings") from None
    except OSError as exc:
        raise AdvisorError(f"Socket Mode could not reach Slack at {safe_url(settings.api_base_url)}: {exc}",
                           fix="check the network, or SLACK_API_BASE_URL if you set it") from None
    except (KeyboardInterrupt, SystemExit):
        handler.close()
        log.info("Socket Mode stopped")
        _stop(app)
    finally:
        if server is not None:
            server.close()


def _refuse_unwritable(target: Any) -> None:
    """One write (a probe key added and removed) before serving: a database that can be read but not written (a
    read-only mount, a PostgreSQL standby or default_transaction_read_only) stops `serve` at start with the fix,
    instead of acknowledging requests it cannot record."""
    from bot.store.backend import open_inbox
    with open_inbox(target) as inbox:
        inbox.probe(write=True)


def serve(mode: str = "http", host: str = "0.0.0.0", port: int = 3000) -> None:
    """Check the settings, then serve until stopped. ConfigError names a bad setting."""
    settings = SlackSettings.from_env(mode)
    setup_logging(settings)
    from bot.surfaces.service import Service
    service = Service(metrics=True)         # loads the knowledge base and opens ADVISOR_DB: fail before serving
    _refuse_unwritable(service.audit.path)
    app = build_app(settings, service)
    if mode == "socket":
        serve_socket(app, settings, host, port)
    else:
        serve_http(app, host, port, settings.signing_secret)
