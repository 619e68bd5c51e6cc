#!/usr/bin/python3
"""pyshop: a small flash-sale checkout written elsewhere, for gameday to drill.

Not gameday's shape on purpose: Python's standard library HTTP server, stock
in Redis, orders in PostgreSQL, a payment gateway over HTTP, its own URLs,
bodies and status codes. gameday drives it through examples/pyshop/gameday.yaml
only (docs/systems.md).

  POST /orders {"cart": ID, "customer": ID, "sku": SKU}
    201 {"order": ID, "charge": CHARGE}      bought (again: the same answer)
    202 {"status": "pending"}                careful mode: not known yet, ask again
    409 {"error": "sold_out"}
    402 {"error": "declined"}
    503 {"error": "...", "retry_in": 1}       come back (Retry-After: 1)
  GET /healthz

Every unit costs PRICE (19.99). Orders keep it in dollars (numeric); the
gateway is asked for cents. --to-cents truncate plants a money bug: the
cents are int(19.99 * 100), which is 1998, a cent short of the order.

Modes (--mode):
  safe     a unit is held in Redis (one Lua script per cart) before payment
           and given back if payment fails; an order is written once per cart.
  naive    reads the stock, pays, then decrements: oversells under load, so
           that a drill can prove its oversell check fires.
  careful  safe, and when writing the order fails it asks the database again
           whether the order is there before answering (a lost reply to a
           committed INSERT is not a failed purchase): bought, or, when it
           cannot tell, pending. A pending purchase (or one whose payment
           call failed, or whose hold or sale Redis did not answer) is
           settled within seconds by a resolver thread: the order found is
           sold, else the charge is voided and the unit given back. A retry
           of the same cart completes it first.
  compensating  safe, but when writing the order fails it undoes the
           purchase: voids the charge, gives the unit back, answers 503. A
           bug real checkouts have: an INSERT whose reply was lost was
           committed, so the order stands, its charge voided and its unit
           on sale again (units created; sold twice once stock runs out).
"""

import argparse
import contextlib
import decimal
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import queue

import psycopg2
import redis

# KEYS: stock:SKU, holds:SKU; ARGV: cart. A cart holds at most one unit.
HOLD = """
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 1 end
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n <= 0 then return 0 end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"""

RELEASE = """
if redis.call('SREM', KEYS[2], ARGV[1]) == 1 then redis.call('INCR', KEYS[1]) end
return 1
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (
  cart text PRIMARY KEY,
  customer text NOT NULL,
  sku text NOT NULL,
  charge text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE orders ADD COLUMN IF NOT EXISTS amount numeric(10, 2);
"""

PRICE = decimal.Decimal("19.99")


def cents(amount, how):
    """The gateway's amount_cents for a price in dollars."""
    if how == "truncate":
        return int(float(amount) * 100)  # the bug: 1998.9999999999998 becomes 1998
    return int(amount * 100)


class Unavailable(Exception):
    pass


class Shop:
    def __init__(self, args):
        self.mode = args.mode
        self.to_cents = args.to_cents
        self.pg = args.pg
        self.gateway = args.gateway.rstrip("/")
        # No retries by the client: a command whose reply was lost is not
        # sent again behind the shop's back.
        self.redis = redis.Redis.from_url(args.redis, socket_timeout=0.5, socket_connect_timeout=0.5, retry_on_timeout=False)
        self.hold = self.redis.register_script(HOLD)
        self.release = self.redis.register_script(RELEASE)
        # Up to 16 idle connections are kept; more are made when needed.
        # None is made before the first request (the database may not be
        # reachable yet).
        self.idle = queue.LifoQueue(maxsize=16)
        # careful mode: carts whose outcome is not known yet (cart -> sku,
        # since), settled by the resolver; a purchase and the resolver work
        # on one cart at a time (striped locks, a bounded number).
        self.pending = {}
        self.pending_mu = threading.Lock()
        self.stripes = [threading.Lock() for _ in range(64)]
        if self.mode == "careful":
            threading.Thread(target=self.resolve_forever, daemon=True).start()

    @contextlib.contextmanager
    def tx(self):
        """A pooled connection in autocommit: each statement commits as it
        runs. A connection that failed is closed, not reused."""
        try:
            conn = self.idle.get_nowait()
        except queue.Empty:
            conn = psycopg2.connect(self.pg, connect_timeout=2, options="-c statement_timeout=1000")
            conn.autocommit = True
        broken = True
        try:
            with conn.cursor() as cur:
                yield cur
            broken = False
        finally:
            if broken:
                conn.close()
            else:
                try:
                    self.idle.put_nowait(conn)
                except queue.Full:
                    conn.close()

    def order_of(self, cart):
        with self.tx() as cur:
            cur.execute("SELECT charge FROM orders WHERE cart = %s", (cart,))
            row = cur.fetchone()
            return row[0] if row else None

    def void(self, cart):
        body = json.dumps({"key": cart}).encode()
        req = urllib.request.Request(self.gateway + "/charges/void", data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=2):
                return True
        except (urllib.error.URLError, TimeoutError, OSError):
            return False

    def charge(self, cart, customer, sku):
        body = json.dumps({"key": cart, "amount_cents": cents(PRICE, self.to_cents), "shopper": customer, "sku": sku}).encode()
        req = urllib.request.Request(self.gateway + "/charges", data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=2) as resp:
                return json.load(resp)
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as e:
            raise Unavailable("payment_unavailable") from e

    def stripe(self, cart):
        return self.stripes[hash(cart) % len(self.stripes)]

    def buy(self, cart, customer, sku):
        if self.mode != "careful":
            return self.purchase(cart, customer, sku)
        with self.stripe(cart):
            code, body = self.purchase(cart, customer, sku)
            if code == 201:
                self.settled(cart)
            return code, body

    def unsettled(self, cart, sku):
        with self.pending_mu:
            self.pending.setdefault(cart, (sku, time.monotonic()))

    def settled(self, cart):
        with self.pending_mu:
            self.pending.pop(cart, None)

    # A pending cart is settled once no statement sent for it can still be
    # running (statement_timeout is 1s) and its shopper had a chance to ask
    # again (Retry-After: 1).
    SETTLE_AFTER = 2.0

    def resolve_forever(self):
        while True:
            time.sleep(0.25)
            now = time.monotonic()
            with self.pending_mu:
                due = [(c, sku) for c, (sku, since) in self.pending.items() if now - since >= self.SETTLE_AFTER]
            for cart, sku in due:
                with self.stripe(cart):
                    with self.pending_mu:
                        if cart not in self.pending:
                            continue
                    self.resolve(cart, sku)

    def resolve(self, cart, sku):
        """Sell the order found, else void the charge and give the unit
        back; when neither store answers, try again on the next round."""
        holds = "holds:" + sku
        try:
            if self.order_of(cart):
                if self.sold(holds, cart):
                    self.settled(cart)
                return
        except psycopg2.Error:
            return
        if self.void(cart) and self.give_back("stock:" + sku, holds, cart):
            self.settled(cart)

    def purchase(self, cart, customer, sku):
        try:
            done = self.order_of(cart)
        except psycopg2.Error as e:
            raise Unavailable("db_unavailable") from e
        stock, holds = "stock:" + sku, "holds:" + sku
        if done:
            if self.mode != "naive":
                self.sold(holds, cart)  # the first answer may have been lost before it was
            return 201, {"order": cart, "charge": done}
        try:
            if self.mode == "naive":
                if int(self.redis.get(stock) or 0) <= 0:
                    return 409, {"error": "sold_out"}
            elif not self.hold(keys=[stock, holds], args=[cart]):
                return 409, {"error": "sold_out"}
        except redis.RedisError as e:
            if self.mode == "careful":
                # The hold may have been taken and only its reply lost:
                # the resolver gives it back if no retry uses it.
                self.unsettled(cart, sku)
            raise Unavailable("stock_unavailable") from e
        try:
            ch = self.charge(cart, customer, sku)
        except Unavailable:
            # The charge may have gone through: a retry of the same cart
            # finds it again (the gateway's key is the cart). The unit stays
            # held for that retry; in careful mode the resolver settles the
            # cart if no retry does.
            if self.mode == "careful":
                self.unsettled(cart, sku)
            raise
        if ch.get("status") != "approved":
            self.give_back(stock, holds, cart)
            return 402, {"error": "declined"}
        try:
            with self.tx() as cur:
                cur.execute("INSERT INTO orders (cart, customer, sku, charge, amount) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (cart) DO NOTHING",
                            (cart, customer, sku, ch["id"], PRICE))
        except psycopg2.Error as e:
            if self.mode == "compensating":
                # "The write failed, so nothing happened": undo the rest.
                self.void(cart)
                self.give_back(stock, holds, cart)
                raise Unavailable("db_unavailable") from e
            if self.mode == "careful":
                # The INSERT may have been committed and only its reply
                # lost: ask again before telling the shopper anything. Not
                # found is not proof (the INSERT may still be running on the
                # connection that broke), so the purchase is pending until
                # the resolver or a retry settles it.
                try:
                    if self.order_of(cart):
                        if not self.sold(holds, cart):
                            self.unsettled(cart, sku)
                        return 201, {"order": cart, "charge": ch["id"]}
                except psycopg2.Error:
                    pass
                self.unsettled(cart, sku)
                return 202, {"status": "pending", "retry_in": 1}
            raise Unavailable("db_unavailable") from e
        if self.mode == "naive":
            try:
                self.redis.decr(stock)
            except redis.RedisError:
                pass
        elif not self.sold(holds, cart) and self.mode == "careful":
            self.unsettled(cart, sku)  # the resolver marks it sold
        return 201, {"order": cart, "charge": ch["id"]}

    def sold(self, holds, cart):
        """The cart's hold is sold: no longer counted as held. False when
        Redis did not say so (the books still count it held)."""
        try:
            self.redis.srem(holds, cart)
            return True
        except redis.RedisError:
            return False

    def give_back(self, stock, holds, cart):
        """The cart's unit back on sale; False when Redis did not say so
        (still held: the books show it)."""
        if self.mode == "naive":
            return True
        try:
            self.release(keys=[stock, holds], args=[cart])
            return True
        except redis.RedisError:
            return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    shop = None

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, body, retry=False):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/healthz":
            self.answer(200, {"ok": True})
        else:
            self.answer(404, {"error": "not_found"})

    def do_POST(self):
        if self.path != "/orders":
            self.answer(404, {"error": "not_found"})
            return
        try:
            n = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(min(n, 16384)))
            cart, customer, sku = req["cart"], req["customer"], req["sku"]
        except (ValueError, KeyError, TypeError):
            self.answer(400, {"error": "bad_request"})
            return
        try:
            code, body = self.shop.buy(cart, customer, sku)
        except Unavailable as e:
            self.answer(503, {"error": str(e), "retry_in": 1}, retry=True)
            return
        self.answer(code, body, retry=code == 202)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--listen", default="127.0.0.1:8090")
    p.add_argument("--redis", required=True, help="redis://host:port (the proxy's)")
    p.add_argument("--pg", required=True, help="PostgreSQL connection string (the proxy's)")
    p.add_argument("--gateway", required=True, help="the payment gateway's base URL (the proxy's)")
    p.add_argument("--mode", choices=["safe", "naive", "careful", "compensating"], default="safe")
    p.add_argument("--to-cents", choices=["exact", "truncate"], default="exact",
                   help="how dollars become the gateway's cents: truncate plants a bug (1998 for 19.99)")
    p.add_argument("--init-db", metavar="DSN", help="create the orders table through this connection string, then serve")
    args = p.parse_args()
    if args.init_db:
        with psycopg2.connect(args.init_db) as conn, conn.cursor() as cur:
            cur.execute(SCHEMA)
    Handler.shop = Shop(args)
    host, port = args.listen.rsplit(":", 1)
    srv = ThreadingHTTPServer((host, int(port)), Handler)
    srv.daemon_threads = True
    print("pyshop listening on %s (%s)" % (args.listen, args.mode), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
