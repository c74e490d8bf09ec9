package clock

import (
	"testing"
	"time"
)

func TestFakeFiresInOrder(t *testing.T) {
	start := time.Unix(1000, 0)
	c := NewFake(start)
	var got []int
	c.AfterFunc(3*time.Second, func() { got = append(got, 3) })
	c.AfterFunc(time.Second, func() {
		got = append(got, 1)
		c.AfterFunc(time.Second, func() { got = append(got, 2) })
	})
	stopped := c.AfterFunc(2*time.Second, func() { got = append(got, 99) })
	if !stopped.Stop() {
		t.Fatal("Stop of an armed timer reported false")
	}
	tm := c.NewTimer(5 * time.Second)
	c.Advance(4 * time.Second)
	if want := []int{1, 2, 3}; len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("fired %v, want %v", got, want)
	}
	if !c.Now().Equal(start.Add(4 * time.Second)) {
		t.Fatalf("now = %v", c.Now())
	}
	select {
	case <-tm.C():
		t.Fatal("timer fired early")
	default:
	}
	c.Advance(time.Second)
	select {
	case at := <-tm.C():
		if !at.Equal(start.Add(5 * time.Second)) {
			t.Fatalf("fired at %v", at)
		}
	default:
		t.Fatal("timer did not fire")
	}
	if c.Pending() != 0 {
		t.Fatalf("pending = %d", c.Pending())
	}
	tm.Reset(time.Second)
	if c.Pending() != 1 {
		t.Fatalf("pending after reset = %d", c.Pending())
	}
}
