package structs

import "testing"

func TestZoneOf(t *testing.T) {
	n := &Node{ID: "id1", Name: "n1", Datacenter: "dc2", NodeClass: "big",
		Meta: map[string]string{"zone": "a", "fault_domain": "2"}, Attributes: map[string]string{"platform.aws.placement.availability-zone": "eu-1b"}}
	cases := map[string]string{
		"${node.meta.zone}":   "a",
		"${meta.zone}":        "a",
		"${node.datacenter}":  "dc2",
		"${node.unique.name}": "n1",
		"${node.class}":       "big",
		"${node.pool}":        DefaultNodePool,
		"${attr.platform.aws.placement.availability-zone}": "eu-1b",
		"${meta.zone}/${meta.fault_domain}":                "a/2",
		"rack-${meta.zone}":                                "rack-a",
		"${meta.rack}":                                     "",
		"${meta.zone}/${meta.rack}":                        "",
	}
	for attr, want := range cases {
		if got := ZoneOf(n, attr); got != want {
			t.Errorf("ZoneOf(%q) = %q, want %q", attr, got, want)
		}
	}
	z := &ZoneStrategy{DisruptionBudget: Percent(25), SuccessThreshold: Percent(80)}
	if n, ok := z.BudgetFor(10); !ok || n != 3 {
		t.Errorf("25%% of 10 = %d, want 3 (rounded up)", n)
	}
	if n := z.ThresholdFor(10); n != 8 {
		t.Errorf("80%% of 10 = %d, want 8", n)
	}
	if n := (&ZoneStrategy{}).ThresholdFor(4); n != 4 {
		t.Errorf("no threshold: %d, want the whole zone", n)
	}
}
