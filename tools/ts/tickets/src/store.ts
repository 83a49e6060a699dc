// Tickets and the idempotency keys that opened them, in SQLite (node:sqlite): one table, the
// key unique per tenant app, so a key opens one ticket however often it is sent, across
// restarts. node:sqlite is synchronous and this process single-threaded: the read of a key and
// the insert it guards run with nothing in between.
import { createHash } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { AccordError } from "@accord/contract";

export interface Ticket {
  readonly ticket_id: string;
  readonly customer_id: string;
  readonly order_id: string | null;
  readonly subject: string;
  readonly body: string;
  readonly status: "open";
  readonly opened_at: string;
}

export interface OpenRequest {
  readonly app: string;
  readonly idempotencyKey: string;
  readonly customerId: string;
  readonly orderId: string | null;
  readonly subject: string;
  readonly body: string;
}

interface Row {
  ticket_id: string;
  customer_id: string;
  order_id: string | null;
  subject: string;
  body: string;
  status: string;
  opened_at: string;
  request_hash: string;
}

const ticketOf = (row: Row): Ticket => ({
  ticket_id: row.ticket_id,
  customer_id: row.customer_id,
  order_id: row.order_id,
  subject: row.subject,
  body: row.body,
  status: "open",
  opened_at: row.opened_at,
});

export class TicketStore {
  private readonly db: DatabaseSync;

  constructor(path: string) {
    this.db = new DatabaseSync(path);
    this.db.exec(`
      PRAGMA journal_mode = WAL;
      CREATE TABLE IF NOT EXISTS tickets (
        ticket_id TEXT PRIMARY KEY,
        app TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        customer_id TEXT NOT NULL,
        order_id TEXT,
        subject TEXT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL,
        opened_at TEXT NOT NULL,
        UNIQUE (app, idempotency_key)
      )`);
  }

  /** The ticket the key opened (replayed) or a new one; the key with other arguments is
   * IDEMPOTENCY_CONFLICT and writes nothing. */
  open(request: OpenRequest): { ticket: Ticket; replayed: boolean } {
    const hash = createHash("sha256")
      .update(JSON.stringify([request.customerId, request.orderId, request.subject, request.body]))
      .digest("hex");
    const found = this.db
      .prepare("SELECT * FROM tickets WHERE app = ? AND idempotency_key = ?")
      .get(request.app, request.idempotencyKey) as Row | undefined;
    if (found !== undefined) {
      if (found.request_hash !== hash) {
        throw new AccordError(
          "IDEMPOTENCY_CONFLICT",
          "this idempotency key opened a ticket with other arguments",
          { idempotency_key: request.idempotencyKey },
        );
      }
      return { ticket: ticketOf(found), replayed: true };
    }
    const row: Row = {
      ticket_id: `T-${createHash("sha256").update(`${request.app}\n${request.idempotencyKey}`).digest("hex").slice(0, 12)}`,
      customer_id: request.customerId,
      order_id: request.orderId,
      subject: request.subject,
      body: request.body,
      status: "open",
      opened_at: new Date().toISOString(),
      request_hash: hash,
    };
    this.db.prepare(`INSERT INTO tickets (ticket_id, app, idempotency_key, request_hash,
      customer_id, order_id, subject, body, status, opened_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
      row.ticket_id, request.app, request.idempotencyKey, row.request_hash, row.customer_id,
      row.order_id, row.subject, row.body, row.status, row.opened_at,
    );
    return { ticket: ticketOf(row), replayed: false };
  }

  /** A ticket of this customer in this app; anything else is NOT_FOUND (never whose it is). */
  get(app: string, customerId: string, ticketId: string): Ticket {
    const row = this.db
      .prepare("SELECT * FROM tickets WHERE ticket_id = ? AND app = ? AND customer_id = ?")
      .get(ticketId, app, customerId) as Row | undefined;
    if (row === undefined) throw new AccordError("NOT_FOUND", `no ticket ${ticketId}`);
    return ticketOf(row);
  }

  close(): void {
    this.db.close();
  }
}
