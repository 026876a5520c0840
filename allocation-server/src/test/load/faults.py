#!/usr/bin/env python3
"""Load checks of the allocation server's limits, against a running server.

  faults.py slowloris HOST:PORT [CONNECTIONS] [SECONDS]
      CONNECTIONS kept-alive connections that each get one answer, then drip the next request's
      headers a byte every 5 s (reconnecting when closed); meanwhile a normal client (another
      process) asks GET /jobs every 50 ms. Prints the normal client's answers, failures and p99.
  faults.py slowreaders HOST:PORT PATH [CONNECTIONS] [SECONDS] [PID]
      CONNECTIONS clients that ask PATH and read 512 bytes of it every 10 s; the normal client as
      above; with PID, the server's largest RSS.
"""
import asyncio, socket, subprocess, sys, time


def normal_client(host, port, seconds):
    import http.client
    lat, fails = [], 0
    end = time.time() + seconds
    while time.time() < end:
        t = time.perf_counter()
        try:
            c = http.client.HTTPConnection(host, port, timeout=10)
            c.request("GET", "/jobs")
            r = c.getresponse()
            r.read()
            c.close()
            if r.status != 200:
                fails += 1
            else:
                lat.append((time.perf_counter() - t) * 1000)
        except Exception:
            fails += 1
        time.sleep(0.05)
    lat.sort()
    p99 = lat[int(len(lat) * 0.99) - 1] if lat else float("nan")
    print(f"normal client: {len(lat)} answers, {fails} failures, p50 {lat[len(lat)//2]:.1f} ms, p99 {p99:.1f} ms, max {lat[-1]:.1f} ms")


async def read_answer(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.decode("latin-1").split("\r\n"):
        if line.lower().startswith("content-length:"):
            length = int(line.split(":")[1])
    await reader.readexactly(length)


async def loris(host, port, end, stats):
    while time.time() < end:
        try:
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(b"GET /jobs HTTP/1.1\r\nHost: x\r\n\r\n")
            await read_answer(reader)
            stats["answered"] += 1
            for b in b"GET /targets?collector=agent-0 HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000:
                writer.write(bytes([b]))
                await writer.drain()
                await asyncio.sleep(5)
                if reader.at_eof() or time.time() > end:
                    break
            stats["closed"] += 1
            writer.close()
        except Exception:
            stats["errors"] += 1
            await asyncio.sleep(1)


async def slow_reader(host, port, path, end, stats):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(s, (host, port))
    await loop.sock_sendall(s, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    while time.time() < end:
        data = await loop.sock_recv(s, 512)
        if not data:
            stats["closed"] += 1
            break
        stats["bytes"] += len(data)
        await asyncio.sleep(10)
    s.close()


async def rss(pid, end, stats):
    while time.time() < end:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    stats["rss_mb"] = max(stats["rss_mb"], int(line.split()[1]) // 1024)
        await asyncio.sleep(1)


async def main():
    mode, target = sys.argv[1], sys.argv[2]
    host, port = target.rsplit(":", 1)
    port = int(port)
    if mode == "slowloris":
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
        seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 60
        stats = {"answered": 0, "closed": 0, "errors": 0}
        end = time.time() + seconds
        tasks = [asyncio.create_task(loris(host, port, end, stats)) for _ in range(n)]
        await asyncio.sleep(3)  # the connections open and start dripping
        normal = subprocess.Popen([sys.executable, __file__, "normal", target, str(seconds - 5)])
        await asyncio.gather(*tasks)
        normal.wait()
        print(f"slowloris: {n} connections, {stats}")
    elif mode == "slowreaders":
        path = sys.argv[3]
        n = int(sys.argv[4]) if len(sys.argv) > 4 else 120
        seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 60
        stats = {"bytes": 0, "closed": 0, "rss_mb": 0}
        end = time.time() + seconds
        tasks = [asyncio.create_task(slow_reader(host, port, path, end, stats)) for _ in range(n)]
        if len(sys.argv) > 6:
            tasks.append(asyncio.create_task(rss(int(sys.argv[6]), end, stats)))
        await asyncio.sleep(3)
        normal = subprocess.Popen([sys.executable, __file__, "normal", target, str(seconds - 5)])
        await asyncio.gather(*tasks, return_exceptions=True)
        normal.wait()
        print(f"slow readers: {n} connections, {stats}")


if __name__ == "__main__":
    if sys.argv[1] == "normal":
        h, p = sys.argv[2].rsplit(":", 1)
        normal_client(h, int(p), int(sys.argv[3]))
    else:
        asyncio.run(main())
