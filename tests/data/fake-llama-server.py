#!/usr/bin/env python3
"""Stands in for llama.cpp's llama-server in loki's tests: the same flags, /health
(503 while "loading", then 200) and an OpenAI-style streaming /v1/chat/completions.
Appends "start <pid> <args as JSON>" to $FAKE_LLAMA_LOG when it starts; a model path
containing "broken" makes it fail the way a bad GGUF does."""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
model = args[args.index("--model") + 1]
with open(os.environ["FAKE_LLAMA_LOG"], "a") as log:
    log.write("start %d %s\n" % (os.getpid(), json.dumps(args)))
if "broken" in model:
    sys.stderr.write("llama_model_load: error loading model: invalid magic\n")
    sys.exit(1)
polls = {"n": 0}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path == "/health":
            polls["n"] += 1
            ok = polls["n"] > 2
            self.send_response(200 if ok else 503)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"status":"ok"}' if ok else b'{"error":{"message":"Loading model"}}')
        else:
            self.send_response(404)
            self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        turns = sum(1 for m in body.get("messages", []) if m.get("role") == "user")
        for piece in ["Hello from llama", " (turn %d)" % turns]:
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            self.wfile.write(("data: %s\n\n" % json.dumps(chunk)).encode())
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
        self.wfile.write(("data: %s\n\ndata: [DONE]\n\n" % json.dumps(end)).encode())


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
