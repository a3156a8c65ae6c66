"""Relay stdin/stdout to a TCP address: QEMU's guestfwd runs this for each connection the
guest makes to the host alias (tests/interop, interop/src/guest.rs).

    python3 tests/interop/relay.py 127.0.0.1 PORT
"""

import os
import socket
import sys
import threading


def main() -> None:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def up() -> None:
        while data := os.read(0, 65536):
            s.sendall(data)
        s.shutdown(socket.SHUT_WR)

    threading.Thread(target=up, daemon=True).start()
    while data := s.recv(65536):
        while data:
            data = data[os.write(1, data):]


if __name__ == "__main__":
    main()
