// The after-sales refund policy as a pure function, as Python's accord.agents.policy_rules
// states it (the rule order, the 30-day window, the evidence question, the words):
// tests/interop/test_go_member.py holds the two to the same answers.
package main

import "fmt"

// ReturnWindowDays is the return window after delivery.
const ReturnWindowDays = 30

// MinEvidenceChars: "ok" is not a description; a photo ref or a sentence is.
const MinEvidenceChars = 3

// EvidenceQuestion is what a damage claim without evidence is asked (waiting for input).
const EvidenceQuestion = "You said the item arrived damaged. Please describe the damage or give a photo " +
	"reference (for example a link or an upload id) so the claim can be checked."

// Order is the skill input's `order`: the facts of the order the policy reads.
type Order struct {
	OrderID           string `json:"order_id"`
	TotalCents        int64  `json:"total_cents"`
	RefundedCents     int64  `json:"refunded_cents"`
	RefundableCents   int64  `json:"refundable_cents"`
	FinalSale         bool   `json:"final_sale"`
	DaysSinceDelivery *int64 `json:"days_since_delivery"`
	Status            string `json:"status"`
}

// Request is the skill input (refund.policy), checked (input.go).
type Request struct {
	Order          *Order  `json:"order"`
	OrderID        *string `json:"order_id"`
	CustomerID     *string `json:"customer_id"`
	Reason         string  `json:"reason"`
	RequestedCents *int64  `json:"requested_cents"`
	Evidence       *string `json:"evidence"`
}

// Params are the facts a rule's sentence names (all of them, whichever rule decided).
type Params struct {
	OrderID           string `json:"order_id"`
	Status            string `json:"status"`
	DaysSinceDelivery *int64 `json:"days_since_delivery"`
	WindowDays        int64  `json:"window_days"`
	TotalCents        int64  `json:"total_cents"`
	RefundedCents     int64  `json:"refunded_cents"`
	RefundableCents   int64  `json:"refundable_cents"`
	RequestedCents    *int64 `json:"requested_cents"`
}

// Decision is the skill output (refund.policy).
type Decision struct {
	Eligible       bool   `json:"eligible"`
	Rule           string `json:"rule"`
	MaxRefundCents int64  `json:"max_refund_cents"`
	Explanation    string `json:"explanation"`
	Params         Params `json:"params"`
}

// Evaluate applies the rules in the documented order (the request carries the order facts);
// nil with needsEvidence when a damage claim waits for its evidence.
func Evaluate(request Request) (decision *Decision, needsEvidence bool) {
	decision, needsEvidence = decide(request)
	if decision != nil {
		o := request.Order
		decision.Params = Params{
			OrderID: o.OrderID, Status: o.Status, DaysSinceDelivery: o.DaysSinceDelivery,
			WindowDays: ReturnWindowDays, TotalCents: o.TotalCents, RefundedCents: o.RefundedCents,
			RefundableCents: o.RefundableCents, RequestedCents: request.RequestedCents,
		}
	}
	return decision, needsEvidence
}

func hasEvidence(evidence *string) bool {
	return evidence != nil && len([]rune(trimSpace(*evidence))) >= MinEvidenceChars
}

func decide(request Request) (*Decision, bool) {
	order := request.Order
	refundable := order.RefundableCents
	if order.Status != "delivered" || order.DaysSinceDelivery == nil {
		return deny("not_delivered", fmt.Sprintf("Order %s has not been delivered yet (status: "+
			"%s), so it cannot be refunded as a return. If it is late, "+
			"wait for delivery or ask for the shipment to be traced.", order.OrderID, order.Status)), false
	}
	if refundable == 0 {
		return deny("already_refunded", fmt.Sprintf("Order %s has already been refunded in full "+
			"(%s); nothing is left to refund.", order.OrderID, money(order.RefundedCents))), false
	}
	days := *order.DaysSinceDelivery
	if request.Reason == "damaged" {
		if days > ReturnWindowDays {
			return outsideWindow(order.OrderID, days), false
		}
		if !hasEvidence(request.Evidence) {
			return nil, true
		}
		return allow("damage_with_evidence", request, "The item arrived damaged and the claim is "+
			"supported by evidence, so it can be refunded"), false
	}
	if order.FinalSale {
		return deny("final_sale", fmt.Sprintf("Order %s contains a final-sale item; final-sale items "+
			"cannot be returned or refunded unless they arrived damaged.", order.OrderID)), false
	}
	if days > ReturnWindowDays {
		return outsideWindow(order.OrderID, days), false
	}
	if request.RequestedCents != nil && *request.RequestedCents > refundable {
		return &Decision{
			Eligible: true, Rule: "amount_exceeds_refundable", MaxRefundCents: refundable,
			Explanation: fmt.Sprintf("The request of %s is more than the %s that can still be refunded "+
				"on order %s; at most %s will be refunded.", money(*request.RequestedCents),
				money(refundable), order.OrderID, money(refundable)),
		}, false
	}
	plural := "s"
	if days == 1 {
		plural = ""
	}
	return allow("within_window", request, fmt.Sprintf("Order %s was delivered %d day%s ago, "+
		"within the %d-day return window", order.OrderID, days, plural, ReturnWindowDays)), false
}

func allow(rule string, request Request, why string) *Decision {
	refundable := request.Order.RefundableCents
	tail := fmt.Sprintf("; up to %s can be refunded.", money(refundable))
	if request.RequestedCents != nil && *request.RequestedCents > refundable {
		tail = fmt.Sprintf("; the request exceeds what is left, so at most %s will be refunded.", money(refundable))
	}
	return &Decision{Eligible: true, Rule: rule, MaxRefundCents: refundable, Explanation: why + tail}
}

func deny(rule, explanation string) *Decision {
	return &Decision{Eligible: false, Rule: rule, MaxRefundCents: 0, Explanation: explanation}
}

func outsideWindow(orderID string, days int64) *Decision {
	return deny("outside_window", fmt.Sprintf("Order %s was delivered %d days ago, outside the "+
		"%d-day return window.", orderID, days, ReturnWindowDays))
}

// money is Python's f"{cents // 100}.{cents % 100:02d}" (floor division, as Python's).
func money(cents int64) string {
	q, r := cents/100, cents%100
	if r < 0 {
		q, r = q-1, r+100
	}
	return fmt.Sprintf("%d.%02d", q, r)
}
