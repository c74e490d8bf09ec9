package mock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
)

func TestStatsOfARunningTaskAreMeasuredZeros(t *testing.T) {
	clk := clock.NewFake(epoch)
	d := New(Options{Clock: clk})
	h, err := d.Start(context.Background(), cfg("t", map[string]any{"run_for": "1m"}))
	if err != nil {
		t.Fatal(err)
	}
	u, err := d.Stats(context.Background(), h)
	if err != nil || u.Memory.RSS != 0 || u.CPU.Total != 0 || !u.Timestamp.Equal(clk.Now()) ||
		len(u.Memory.Measured) == 0 || len(u.CPU.Measured) == 0 {
		t.Fatalf("stats %+v %v", u, err)
	}
	clk.Advance(time.Minute)
	if _, err := d.Stats(context.Background(), h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("stats after exit: %v", err)
	}
}
