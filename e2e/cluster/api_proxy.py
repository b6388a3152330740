#!/usr/bin/env python3
"""A TCP proxy for fault injection between muster's sidecars and the
kube-apiserver of the loopback harness (e2e chaos scenarios, issue 21).

TLS passes through untouched (the apiserver's certificate names 127.0.0.1,
which the proxy's address is too), so the sidecars authenticate as they
always do; a kubeconfig copy pointing at the proxy's port is all they need.

Faults, switchable at run time by writing a line to the control file
(`--control FILE`, polled every 100 ms; the last line wins):
  delay MS      every chunk a client sends reaches the apiserver MS later
                (order kept; chunks are not delayed behind each other, so a
                request costs MS once): a slow apiserver. Replies are not
                delayed.
  reset SECONDS every open connection is closed (both directions, at once)
                every SECONDS: watch streams and keep-alive connections cut
                mid-stream, as a flaky load balancer does.
  pass          no fault.
Counts (connections accepted, connections cut, bytes each way) go to
stdout once a second when they changed, one JSON object a line.

Usage: api_proxy.py --listen PORT --upstream PORT [--control FILE]
Stdlib only; stops on SIGTERM/SIGINT.
"""

import argparse
import asyncio
import json
import os
import signal
import time


class Faults:
    """The current fault, parsed from a control line (pure)."""

    def __init__(self, line="pass"):
        words = line.split()
        self.delay_s = 0.0
        self.reset_s = 0.0
        if words[:1] == ["delay"] and len(words) == 2:
            self.delay_s = float(words[1]) / 1000.0
        elif words[:1] == ["reset"] and len(words) == 2:
            self.reset_s = float(words[1])
        elif words[:1] != ["pass"]:
            raise ValueError(f"unknown fault {line!r} (want: delay MS | reset SECONDS | pass)")


class Proxy:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.faults = Faults()
        self.conns = set()  # (client writer, upstream writer)
        self.counts = {"accepted": 0, "cut": 0, "to_server": 0, "to_client": 0}

    async def pipe(self, reader, writer, key, delayed):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if delayed and self.faults.delay_s > 0:
                    due = time.monotonic() + self.faults.delay_s
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                writer.write(data)
                await writer.drain()
                self.counts[key] += len(data)
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def handle(self, client_reader, client_writer):
        self.counts["accepted"] += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            client_writer.close()
            return
        pair = (client_writer, up_writer)
        self.conns.add(pair)
        try:
            await asyncio.gather(
                self.pipe(client_reader, up_writer, "to_server", delayed=True),
                self.pipe(up_reader, client_writer, "to_client", delayed=False))
        finally:
            self.conns.discard(pair)

    def cut_all(self):
        for client_writer, up_writer in list(self.conns):
            for w in (client_writer, up_writer):
                try:
                    w.transport.abort()  # RST, not a graceful close
                except (OSError, AttributeError):
                    pass
            self.counts["cut"] += 1
        self.conns.clear()


async def control_loop(proxy, control):
    last_line, last_cut, last_counts = None, time.monotonic(), None
    last_print = 0.0
    while True:
        if control and os.path.exists(control):
            with open(control) as f:
                lines = [l.strip() for l in f if l.strip()]
            line = lines[-1] if lines else "pass"
            if line != last_line:
                try:
                    proxy.faults = Faults(line)
                    print(json.dumps({"fault": line, "t": round(time.time(), 3)}), flush=True)
                except ValueError as e:
                    print(json.dumps({"error": str(e)}), flush=True)
                last_line = line
        now = time.monotonic()
        if proxy.faults.reset_s > 0 and now - last_cut >= proxy.faults.reset_s:
            proxy.cut_all()
            last_cut = now
        if now - last_print >= 1.0 and proxy.counts != last_counts:
            print(json.dumps(dict(proxy.counts, t=round(time.time(), 3))), flush=True)
            last_counts, last_print = dict(proxy.counts), now
        await asyncio.sleep(0.1)


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--upstream", type=int, required=True)
    ap.add_argument("--control")
    args = ap.parse_args()
    proxy = Proxy(args.upstream)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", args.listen)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    control = asyncio.create_task(control_loop(proxy, args.control))
    print(json.dumps({"listening": args.listen, "upstream": args.upstream}), flush=True)
    await stop.wait()
    control.cancel()
    server.close()
    proxy.cut_all()


if __name__ == "__main__":
    asyncio.run(main())
