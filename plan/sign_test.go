package plan

import (
	"strings"
	"testing"
)

// Issue 21: plans can be signed with a key from the environment; a plan
// re-sealed by someone without the key is refused.
func TestSavedPlanSigned(t *testing.T) {
	sp := &SavedPlan{FabctlVersion: "test", Plan: &Plan{Fabric: "t"}}
	b, err := sp.EncodeSigned("k1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKey(b, "p", "k1"); err != nil {
		t.Fatalf("signed plan with its key: %v", err)
	}
	if _, err := DecodeKey(b, "p", "k2"); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Errorf("wrong key: %v", err)
	}
	// Edited and re-sealed without the key: refused when a key is set.
	forged, _ := Decode(b, "p")
	forged.Plan.Fabric = "other"
	fb, err := forged.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKey(fb, "p", "k1"); err == nil {
		t.Error("an unsigned (re-sealed) plan passed with a key set")
	}
	// A signed plan read without a key is refused: it cannot be checked.
	if _, err := DecodeKey(b, "p", ""); err == nil || !strings.Contains(err.Error(), "FABCTL_PLAN_KEY") {
		t.Errorf("signed plan without a key: %v", err)
	}
}
