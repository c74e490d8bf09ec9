package rawexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/drivers"
)

// Disabled, as outside -dev without plugin "raw_exec" { config { enabled
// = true } }: not detected, and no task starts.
func TestDisabledRefusesTasks(t *testing.T) {
	d := New(Options{Disabled: true})
	fp := d.Fingerprint()
	if !fp.Undetected || fp.Healthy || fp.Attributes["driver.raw_exec"] != "" || fp.HealthDescription != "disabled" {
		t.Errorf("fingerprint %+v, want not detected and disabled", fp)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	_, err := d.Start(context.Background(), newTask(t, "t", "/bin/sh", "-c", "touch "+marker))
	if !errors.Is(err, ErrDisabled) || !errors.Is(err, drivers.ErrStartFailed) {
		t.Fatalf("Start: %v, want ErrDisabled", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the disabled driver ran the command")
	}
	if fp := New(Options{}).Fingerprint(); fp.Undetected || !fp.Healthy || fp.Attributes["driver.raw_exec"] != "1" {
		t.Errorf("enabled fingerprint %+v", fp)
	}
}
