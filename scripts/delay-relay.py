#!/usr/bin/python3
"""
delay-relay.py - a TCP relay on loopback that adds a fixed delay, for the
S3 benchmarks (an endpoint "20 ms away" on one machine).

  scripts/delay-relay.py --to PORT [--port 0] [--delay-ms 20]
                         [--seconds 600] [--max-conns 64]

Listens on 127.0.0.1:--port (0: a free one) and forwards every connection
to 127.0.0.1:--to.  Each chunk from the client reaches the server
--delay-ms after it arrived, in order and without throttling (a request
waits the delay once, however many chunks it has; answers come back at
once), so every request costs one added delay, as on a link that far.
Prints "port N" on stdout once it listens.  Bounded: at most --max-conns
connections at once (more are refused), at most 4 MiB in flight per
connection, and it stops by itself after --seconds (or on SIGTERM/SIGINT),
printing what it relayed on stderr.  Only loopback, both ends.
"""
import argparse
import asyncio
import signal
import sys
import time

CHUNK = 262144
IN_FLIGHT = 16  # chunks queued per connection: 4 MiB


class Relay:
    def __init__(self, args):
        self.args = args
        self.conns = 0
        self.total = 0
        self.bytes = 0

    async def delayed(self, reader, writer):
        """Client to server: each chunk leaves delay_ms after it came."""
        queue = asyncio.Queue(IN_FLIGHT)
        delay = self.args.delay_ms / 1000.0

        async def read():
            while chunk := await reader.read(CHUNK):
                await queue.put((time.monotonic() + delay, chunk))
            await queue.put((0, b""))

        async def write():
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    break
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                writer.write(chunk)
                self.bytes += len(chunk)
                await writer.drain()

        await asyncio.gather(read(), write())
        writer.write_eof()

    async def direct(self, reader, writer):
        """Server to client, as it comes."""
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            self.bytes += len(chunk)
            await writer.drain()
        writer.close()

    async def serve(self, creader, cwriter):
        if self.conns >= self.args.max_conns:
            cwriter.close()
            return
        self.conns += 1
        self.total += 1
        try:
            sreader, swriter = await asyncio.open_connection(
                "127.0.0.1", self.args.to)
            await asyncio.gather(self.delayed(creader, swriter),
                                 self.direct(sreader, cwriter))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self.conns -= 1
            cwriter.close()


async def main(args):
    relay = Relay(args)
    server = await asyncio.start_server(relay.serve, "127.0.0.1", args.port)
    print("port", server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), args.seconds)
    except asyncio.TimeoutError:
        pass
    server.close()
    print("delay-relay: %d connections, %d bytes, %g ms delay" %
          (relay.total, relay.bytes, args.delay_ms), file=sys.stderr)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--to", type=int, required=True,
                   help="the port on 127.0.0.1 to relay to")
    p.add_argument("--port", type=int, default=0,
                   help="the port to listen on, 127.0.0.1 (0: a free one)")
    p.add_argument("--delay-ms", type=float, default=20.0)
    p.add_argument("--seconds", type=float, default=600.0,
                   help="stop after this long (at most 3600)")
    p.add_argument("--max-conns", type=int, default=64)
    a = p.parse_args()
    if not 0 < a.to < 65536 or not 0 <= a.port < 65536:
        p.error("--to 1 to 65535 and --port 0 to 65535, not %d and %d" %
                (a.to, a.port))
    if not 0 <= a.delay_ms <= 10000:
        p.error("--delay-ms: 0 to 10000, not %g" % a.delay_ms)
    if not 0 < a.seconds <= 3600:
        p.error("--seconds: more than 0, at most 3600, not %g" % a.seconds)
    if not 0 < a.max_conns <= 1024:
        p.error("--max-conns: 1 to 1024, not %d" % a.max_conns)
    return a


if __name__ == "__main__":
    asyncio.run(main(parse()))
