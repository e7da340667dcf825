#!/usr/bin/env python3
"""Median tools/call latency through sv-mcp: starts the server in STORE_DIR, initializes, then
calls TOOL N times in one session, each timed from the request written to its reply read, and
prints the median and the spread in ms: mcp_latency.py SV_MCP STORE_DIR TOOL N."""
import json
import statistics
import subprocess
import sys
import time


def main():
    exe, store, tool, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    server = subprocess.Popen([exe], cwd=store, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)

    def ask(i, method, params):
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        server.stdin.flush()
        reply = json.loads(server.stdout.readline())
        if "error" in reply or reply["result"].get("isError"):
            sys.exit(f"mcp_latency: {method} failed: {json.dumps(reply)[:300]}")
        return reply

    ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "1"}})
    times = []
    for i in range(1, n + 1):
        t0 = time.perf_counter()
        ask(i, "tools/call", {"name": tool, "arguments": {}})
        times.append((time.perf_counter() - t0) * 1000)
    server.stdin.close()
    server.wait()
    print(f"{statistics.median(times):.1f} {min(times):.1f} {max(times):.1f}")


if __name__ == "__main__":
    main()
