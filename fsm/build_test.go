package fsm

import (
	"errors"
	"testing"
)

// Every type the previous release knows may be written whatever the
// servers' builds; a type introduced later only once every server runs a
// build that knows it, unless it carries the ignore bit.
func TestCheckWritable(t *testing.T) {
	for mt := range typeNames {
		if TypeBuild(mt) != 1 {
			continue
		}
		if err := CheckWritable(mt, 1); err != nil {
			t.Errorf("%s with a server of the previous build: %v", mt, err)
		}
	}
	const newType MessageType = 60
	typeBuilds[newType] = 3
	t.Cleanup(func() { delete(typeBuilds, newType) })
	if err := CheckWritable(newType, 2); !errors.Is(err, ErrServersTooOld) {
		t.Fatalf("a build 3 type with a server of build 2: %v", err)
	}
	if err := CheckWritable(newType, 3); err != nil {
		t.Fatalf("once every server runs build 3: %v", err)
	}
	if err := CheckWritable(newType|IgnoreUnknownTypeFlag, 1); err != nil {
		t.Fatalf("with the ignore bit: %v", err)
	}
}
