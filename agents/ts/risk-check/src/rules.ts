// The risk rules, as agents/accord/agents/risk_rules.py states them (that module is the truth;
// tests/interop/test_ts_member.py compares assess() here with Python's on a table of cases).

export const FREQUENT_REFUNDS_90D = 3;
export const NEW_ACCOUNT_DAYS = 30;
export const HIGH_REFUND_VOLUME_CENTS = 100_000;
export const BASE_SCORE = 0.05;

export type Signal =
  | "large_amount" | "frequent_refunds" | "chargebacks" | "new_account" | "high_refund_volume";

const HARD: ReadonlySet<Signal> = new Set(["large_amount", "frequent_refunds", "chargebacks"]);
const WEIGHTS: Readonly<Record<Signal, number>> = {
  large_amount: 0.5,
  frequent_refunds: 0.45,
  chargebacks: 0.6,
  new_account: 0.15,
  high_refund_volume: 0.15,
};

/** The fields of orders.customer_history the scoring reads. */
export interface CustomerHistory {
  customer_id: string;
  account_age_days: number;
  orders_total: number;
  orders_90d: number;
  refunds_90d: number;
  refunded_cents_90d: number;
  chargebacks: number;
}

export interface RiskAssessment {
  risk: "low" | "high";
  score: number;
  signals: Signal[];
}

const COUNTS = [
  "account_age_days", "orders_total", "orders_90d", "refunds_90d", "refunded_cents_90d",
  "chargebacks",
] as const;

/** The history, or undefined when the tool answered outside its contract. */
export function readHistory(raw: unknown): CustomerHistory | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const value = raw as Record<string, unknown>;
  if (typeof value["customer_id"] !== "string") return undefined;
  for (const key of COUNTS) {
    const n = value[key];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) return undefined;
  }
  return value as unknown as CustomerHistory;
}

export function assess(
  amountCents: number, history: CustomerHistory, thresholdCents: number,
): RiskAssessment {
  const signals: Signal[] = [];
  if (amountCents >= thresholdCents) signals.push("large_amount");
  if (history.refunds_90d >= FREQUENT_REFUNDS_90D) signals.push("frequent_refunds");
  if (history.chargebacks > 0) signals.push("chargebacks");
  if (history.account_age_days < NEW_ACCOUNT_DAYS) signals.push("new_account");
  if (history.refunded_cents_90d > HIGH_REFUND_VOLUME_CENTS) signals.push("high_refund_volume");
  const sum = signals.reduce((total, s) => total + WEIGHTS[s], BASE_SCORE);
  const score = Math.round(Math.min(1, sum) * 1000) / 1000;
  return { risk: signals.some((s) => HARD.has(s)) ? "high" : "low", score, signals };
}
