package state

import "testing"

func TestSchemaValidates(t *testing.T) {
	if err := Schema().Validate(); err != nil {
		t.Fatalf("schema invalid: %v", err)
	}
	for _, name := range Tables {
		if _, ok := Schema().Tables[name]; !ok {
			t.Errorf("table %q listed but not in schema", name)
		}
	}
	if len(Schema().Tables) != len(Tables) {
		t.Errorf("schema has %d tables, Tables lists %d", len(Schema().Tables), len(Tables))
	}
}
