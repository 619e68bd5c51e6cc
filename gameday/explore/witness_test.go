package explore

import "testing"

// A finding on the stock names no checkout, and says so, rather than
// print an empty list ("lost_units (checkout ids )").
func TestAFindingWithoutWitnessesSaysWhy(t *testing.T) {
	if got := WitnessText(nil); got != "no checkout to name: the stock is counted, not kept per order; the trial's run.json names the shoppers to start with (leads)" {
		t.Errorf("no witnesses: %q", got)
	}
	if got := WitnessText([]string{"s1-4", "s1-9"}); got != "checkout ids s1-4, s1-9" {
		t.Errorf("witnesses: %q", got)
	}
}
