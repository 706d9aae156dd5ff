#!/usr/bin/env python3
"""A real SMTP server for Herald's tests and benchmarks (Debian's python3-aiosmtpd).

Two listeners on loopback:
  PORT      plain, offers STARTTLS, PIPELINING, and AUTH PLAIN/LOGIN after STARTTLS;
  TLS_PORT  implicit TLS (SMTPS), AUTH PLAIN/LOGIN.
AUTH is offered, not required: a wrong password is answered 535.

Every accepted message is stored in MAILDIR (maildir format: new/). The recipient's local
part picks a behaviour, so tests provoke answers deterministically:
  reject550-*   RCPT answered 550 5.1.1 (permanent)
  fail451-*     RCPT answered 451 4.3.0 every time (transient)
  fail421-*     RCPT answered 421 4.3.2 and the connection closed (transient)
  flaky451-*    451 the first time this address is seen, accepted afterwards
  flaky421-*    421 (and close) the first time, accepted afterwards
  slow-*        DATA answered after 3 s (timeouts)
  discard-*     accepted, not stored (benchmarks)
Connections and messages are counted in MAILDIR/../stats.json on every message.

The mode file (--mode-file, default MAILDIR/../mode) switches every recipient at run time,
for outages: its first word is read on each RCPT (when the file changed):
  normal     (or no file) the recipient prefixes above
  fail451    every RCPT answered as for fail451-* (a provider refusing for a while)
  fail421    every RCPT answered as for fail421-*
  hang       RCPT answered only once the mode is something else (a provider that hangs)

usage: smtp-server.py --port P --tls-port P2 --cert PEM --key KEY --password-file F --maildir DIR [--mode-file F]
"""
import argparse
import asyncio
import json
import mailbox
import os
import signal
import ssl
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Mode:
    """The mode file's first word, read again only when the file changes."""

    def __init__(self, path):
        self.path = path
        self.stamp = None
        self.value = "normal"

    def current(self):
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self.stamp, self.value = None, "normal"
            return self.value
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp != self.stamp:
            with open(self.path) as f:
                words = f.read().split()
            self.stamp, self.value = stamp, (words[0] if words else "normal")
        return self.value


class Handler:
    def __init__(self, maildir, stats_path, mode):
        self.mode = mode
        for sub in ("tmp", "new", "cur"):
            os.makedirs(os.path.join(maildir, sub), exist_ok=True)
        self.box = mailbox.Maildir(maildir, create=True)
        self.stats_path = stats_path
        self.seen = set()
        self.lock = threading.Lock()
        self.stats = {"connections": 0, "messages": 0, "stored": 0}

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        session.host_name = hostname
        # aiosmtpd reads pipelined commands in order; say so (RFC 2920).
        out = list(responses)
        out.insert(len(out) - 1, "250-PIPELINING")
        return out

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        while self.mode.current() == "hang":
            await asyncio.sleep(0.2)
        mode = self.mode.current()
        local = address.split("@", 1)[0].lower()
        first = False
        with self.lock:
            if address not in self.seen:
                self.seen.add(address)
                first = True
        # A mode other than normal stands for every recipient's prefix.
        behaviour = local if mode == "normal" else mode + "-"
        if behaviour.startswith("reject550-"):
            return "550 5.1.1 No such user here"
        if behaviour.startswith("fail451-") or (behaviour.startswith("flaky451-") and first):
            return "451 4.3.0 Try again later"
        if behaviour.startswith("fail421-") or (behaviour.startswith("flaky421-") and first):
            asyncio.get_event_loop().call_later(0.05, server.transport.close)
            return "421 4.3.2 Service shutting down"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        local = envelope.rcpt_tos[0].split("@", 1)[0].lower() if envelope.rcpt_tos else ""
        if local.startswith("slow-"):
            await asyncio.sleep(3)
        with self.lock:
            self.stats["messages"] += 1
            if not local.startswith("discard-"):
                content = envelope.original_content or envelope.content
                if isinstance(content, str):
                    content = content.encode("utf-8")
                header = ("X-Herald-Envelope-To: %s\r\nX-Herald-Envelope-From: %s\r\nX-Herald-Auth: %s\r\nX-Herald-TLS: %s\r\n"
                          % (",".join(envelope.rcpt_tos), envelope.mail_from,
                             "yes" if session.authenticated else "no",
                             "yes" if (session.ssl or server.transport.get_extra_info("ssl_object") is not None) else "no")).encode()
                self.box.add(header + content)
                self.stats["stored"] += 1
            self.write_stats()
        return "250 2.0.0 Message accepted for delivery"

    def write_stats(self):
        tmp = self.stats_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.stats, f)
        os.replace(tmp, self.stats_path)


class CountingSMTP(SMTP):
    def connection_made(self, transport):
        super().connection_made(transport)
        with self.event_handler.lock:
            self.event_handler.stats["connections"] += 1


class CountingController(Controller):
    def factory(self):
        return CountingSMTP(self.handler, **self.SMTP_kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-port", type=int, required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--username", default="herald")
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--maildir", required=True)
    parser.add_argument("--mode-file")
    args = parser.parse_args()

    with open(args.password_file) as f:
        password = f.read().strip().encode()
    username = args.username.encode()

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == username and auth_data.password == password
        return AuthResult(success=ok, handled=False)

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    base = os.path.dirname(os.path.abspath(args.maildir))
    handler = Handler(args.maildir, os.path.join(base, "stats.json"), Mode(args.mode_file or os.path.join(base, "mode")))
    common = dict(authenticator=authenticator, auth_required=False, decode_data=False,
                  data_size_limit=10 * 1024 * 1024, ident="Herald test SMTP")
    plain = CountingController(handler, hostname=args.host, port=args.port, tls_context=context,
                               auth_require_tls=True, **common)
    implicit = CountingController(handler, hostname=args.host, port=args.tls_port, ssl_context=context,
                                  auth_require_tls=False, server_hostname="localhost", **common)
    plain.start()
    implicit.start()
    print("smtp-server: plain/STARTTLS on %s:%d, implicit TLS on %d" % (args.host, args.port, args.tls_port), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.is_set():
        time.sleep(0.2)
    plain.stop()
    implicit.stop()


if __name__ == "__main__":
    main()
