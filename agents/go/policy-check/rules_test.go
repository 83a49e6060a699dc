package main

import (
	"encoding/json"
	"os"
	"testing"

	c "accord.dev/contract"
)

// TestAnswerCases answers the cases tests/interop/test_go_member.py asks (POLICY_CASES, a JSON
// list of skill inputs with order facts) into POLICY_ANSWERS, which that test compares with
// Python's accord.agents.policy_rules.evaluate. Without POLICY_CASES there is nothing to answer.
func TestAnswerCases(t *testing.T) {
	casesFile := os.Getenv("POLICY_CASES")
	if casesFile == "" {
		t.Skip("POLICY_CASES not set (tests/interop/test_go_member.py sets it)")
	}
	raw, err := os.ReadFile(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	var cases []any
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	answers := []any{}
	for _, input := range cases {
		request, err := ParseInput(input)
		if err != nil {
			t.Fatalf("input %v: %v", input, err)
		}
		decision, needsEvidence := Evaluate(request)
		if needsEvidence {
			answers = append(answers, map[string]any{"question": EvidenceQuestion})
		} else {
			answers = append(answers, decision)
		}
	}
	out, err := json.Marshal(answers)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("POLICY_ANSWERS"), out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckInvalidInputs answers POLICY_INVALID (a JSON list of skill inputs) with the error
// each gets from the skill's input schema (POLICY_CONTRACT, the exported contract) into
// POLICY_INVALID_ANSWERS, which tests/interop/test_go_member.py compares with Python's.
func TestCheckInvalidInputs(t *testing.T) {
	casesFile := os.Getenv("POLICY_INVALID")
	if casesFile == "" {
		t.Skip("POLICY_INVALID not set (tests/interop/test_go_member.py sets it)")
	}
	exported, err := os.ReadFile(os.Getenv("POLICY_CONTRACT"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Contract json.RawMessage `json:"contract"`
	}
	if err := json.Unmarshal(exported, &doc); err != nil {
		t.Fatal(err)
	}
	schema, err := SkillInputSchema(doc.Contract, skillID)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	var cases []any
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	answers := []any{}
	for _, input := range cases {
		found := schema.Check(input)
		if found == nil {
			answers = append(answers, nil)
			continue
		}
		e, _ := c.AsAccordError(found)
		answers = append(answers, map[string]any{"message": e.Message, "details": e.Details})
	}
	out, err := json.Marshal(answers)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("POLICY_INVALID_ANSWERS"), out, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestMoneyIsPythonsFloorDivision(t *testing.T) {
	for cents, want := range map[int64]string{0: "0.00", 5: "0.05", 3500: "35.00", 100001: "1000.01"} {
		if got := money(cents); got != want {
			t.Errorf("money(%d) = %q, want %q", cents, got, want)
		}
	}
}

func TestInputRefusesAnUnknownField(t *testing.T) {
	_, err := ParseInput(map[string]any{"reason": "damaged", "order_id": "O-1001", "customer_id": "C-01", "x": 1.0})
	if err == nil || err.Error() != "INVALID_INPUT: input field 'x': Extra inputs are not permitted" {
		t.Fatalf("got %v", err)
	}
}
