#!/usr/bin/env python3
"""The fault proxy against a loopback echo server: it passes bytes, adds the
delay it is told (once per request, not per chunk), cuts every connection
on reset, and refuses an unknown fault."""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import api_proxy  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Echo:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.echo, args=(conn,), daemon=True).start()

    @staticmethod
    def echo(conn):
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)


class ApiProxyTest(unittest.TestCase):
    def setUp(self):
        self.echo = Echo()
        self.port = free_port()
        self.dir = tempfile.mkdtemp()
        self.control = os.path.join(self.dir, "control")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "api_proxy.py"), "--listen", str(self.port),
             "--upstream", str(self.echo.port), "--control", self.control],
            stdout=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.fail("proxy did not listen")

    def tearDown(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def fault(self, line):
        with open(self.control, "a") as f:
            f.write(line + "\n")
        time.sleep(0.5)  # polled every 100 ms

    def round_trip(self, conn, payload=b"x" * 1000):
        start = time.monotonic()
        conn.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            got += chunk
        self.assertEqual(got, payload)
        return time.monotonic() - start

    def test_passes_bytes_both_ways(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as c:
            self.assertLess(self.round_trip(c, b"hello" * 10000), 2.0)

    def test_delay_is_added_once_per_request(self):
        self.fault("delay 300")
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as c:
            took = self.round_trip(c, b"y" * 500000)  # many chunks, one request
            self.assertGreaterEqual(took, 0.3)
            self.assertLess(took, 2.5, "chunks were delayed behind each other")
        self.fault("pass")
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as c:
            self.assertLess(self.round_trip(c), 0.25)

    def test_reset_cuts_open_connections(self):
        c = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.round_trip(c)
        self.fault("reset 1")
        time.sleep(1.5)
        with self.assertRaises((ConnectionError, OSError)):
            for _ in range(3):
                self.round_trip(c)
                time.sleep(0.2)
        c.close()

    def test_unknown_fault_is_refused(self):
        with self.assertRaises(ValueError):
            api_proxy.Faults("slow 10")
        self.assertEqual(api_proxy.Faults("delay 200").delay_s, 0.2)
        self.assertEqual(api_proxy.Faults("reset 5").reset_s, 5.0)


if __name__ == "__main__":
    unittest.main()
