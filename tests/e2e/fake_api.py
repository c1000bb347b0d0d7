#!/usr/bin/env python3
"""A fake Anthropic Messages API for taskhook's end-to-end tests (Python 3 stdlib only).

Serves `POST /v1/messages` on 127.0.0.1 (a free port, written to --port-file) with the SSE
stream Claude Code expects, playing a script of assistant turns. Loopback only; it exits by
itself after --max-seconds, and on SIGTERM.

The script (JSON):

    {
      "main":   [TURN, TURN, ...],            # the main agent
      "compacted": [TURN, ...],               # the main agent after a /compact
      "agents": {"SUBAGENT-T1": [TURN, ...]}, # a subagent whose first user message holds the key
      "summary": "text",                      # optional: the /compact summary
      "latency_ms": {"SUBAGENT-T1": 300}      # optional: wait before answering a stream
    }                                         #   ("*": every stream), as a real model does

A TURN is a string (one text block) or a list of blocks: {"text": "..."} or
{"tool": "Bash", "input": {...}}. Which turn answers a request is the number of assistant
messages already in that request's `messages` (stable across retries and `--resume`; it
restarts after a compaction, as the conversation does). So nothing is "consumed": a request
past the end of its script, a request of no known stream, the /compact summary request and any
side request (no tools: titles and the like) get a harmless default reply.

Every request is appended to --log as one JSON line:
    {"n", "path", "stream", "turn", "scripted", "body"}
"""

import argparse
import gzip
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMPACT_MARKER = "Your task is to create a detailed summary"
CONTINUED_MARKER = "This session is being continued from a previous conversation"
DEFAULT_SUMMARY = (
    "<analysis>The conversation so far.</analysis>\n"
    "<summary>1. Primary Request and Intent: the end-to-end test session. "
    "Nothing is pending.</summary>"
)


def text_of(content):
    """The text of a message's content (a string, or text/tool_result blocks), joined."""
    if isinstance(content, str):
        return content
    out = []
    if isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.append(text_of(b.get("content", "")))
    return "\n".join(out)


def classify(body, script):
    """(stream name, turn index) of a request."""
    msgs = body.get("messages") or []
    turn = sum(1 for m in msgs if m.get("role") == "assistant")
    if not body.get("tools"):
        return "side", turn
    users = [m for m in msgs if m.get("role") == "user"]
    if users and COMPACT_MARKER in text_of(users[-1].get("content")):
        return "compact", turn
    first = text_of(users[0].get("content")) if users else ""
    for key in (script.get("agents") or {}):
        if key in first:
            return key, turn
    if CONTINUED_MARKER in first:
        return "compacted", turn
    return "main", turn


class State:
    def __init__(self, script, log_path):
        self.script = script
        self.log_path = log_path
        self.lock = threading.Lock()
        self.n = 0

    def log(self, record):
        with self.lock:
            self.n += 1
            record = {"n": self.n, **record}
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
            return self.n


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def blocks_of(turn):
    if isinstance(turn, str):
        return [{"text": turn}]
    if isinstance(turn, dict):
        return [turn]
    return list(turn)


def stream_for(turn_blocks, n, model):
    """The SSE body of one assistant message."""
    msg_id = f"msg_e2e{n:06d}"
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 100,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
        )
    ]
    has_tool = False
    for i, b in enumerate(turn_blocks):
        if "tool" in b:
            has_tool = True
            tool_id = f"toolu_e2e{n:06d}{i:02d}"
            out.append(
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": b["tool"],
                            "input": {},
                        },
                    },
                )
            )
            out.append(
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(b.get("input", {})),
                        },
                    },
                )
            )
        else:
            out.append(
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            out.append(
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "text_delta", "text": b.get("text", "")},
                    },
                )
            )
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if has_tool else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": 20},
            },
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return "".join(out).encode("utf-8")


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet: the JSONL log is the record
            pass

        def read_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = b""
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    raw += self.rfile.read(size)
                    self.rfile.readline()
            else:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                raw = gzip.decompress(raw)
            return raw

        def reply(self, code, ctype, payload):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", "req_e2e")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

        def do_GET(self):
            state.log({"path": self.path, "method": "GET", "stream": "side", "body": None})
            self.reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"fake api"}}')

        def do_POST(self):
            raw = self.read_body()
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            path = self.path.split("?")[0]
            if path.endswith("/count_tokens"):
                state.log({"path": self.path, "stream": "side", "body": body})
                self.reply(200, "application/json", b'{"input_tokens": 100}')
                return
            if path != "/v1/messages":
                state.log({"path": self.path, "stream": "side", "body": body})
                self.reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"fake api"}}')
                return
            script = state.script
            stream, turn = classify(body, script)
            scripted = False
            if stream in ("main", "compacted"):
                turns = script.get(stream) or []
            elif stream in (script.get("agents") or {}):
                turns = script["agents"][stream]
            else:
                turns = []
            if turn < len(turns):
                blocks = blocks_of(turns[turn])
                scripted = True
            elif stream == "compact":
                blocks = [{"text": script.get("summary") or DEFAULT_SUMMARY}]
            else:
                blocks = [{"text": "OK."}]
            n = state.log(
                {"path": self.path, "stream": stream, "turn": turn, "scripted": scripted, "body": body}
            )
            latency = script.get("latency_ms") or {}
            wait_ms = latency.get(stream, latency.get("*", 0))
            if wait_ms:
                time.sleep(wait_ms / 1000.0)
            model = body.get("model") or "claude-opus-5-5"
            if body.get("stream"):
                self.reply(200, "text/event-stream", stream_for(blocks, n, model))
            else:
                content = []
                for i, b in enumerate(blocks):
                    if "tool" in b:
                        content.append({"type": "tool_use", "id": f"toolu_e2e{n:06d}{i:02d}", "name": b["tool"], "input": b.get("input", {})})
                    else:
                        content.append({"type": "text", "text": b.get("text", "")})
                msg = {
                    "id": f"msg_e2e{n:06d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": "tool_use" if any("tool" in b for b in blocks) else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 100, "output_tokens": 20},
                }
                self.reply(200, "application/json", json.dumps(msg).encode("utf-8"))

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--max-seconds", type=float, default=600.0)
    args = ap.parse_args()
    with open(args.script, encoding="utf-8") as f:
        script = json.load(f)
    state = State(script, args.log)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    timer = threading.Timer(args.max_seconds, stop)
    timer.daemon = True
    timer.start()
    started = time.monotonic()
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    print(f"fake_api: stopped after {time.monotonic() - started:.1f}s, {state.n} request(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
