package drivers

import (
	"fmt"
	"syscall"
	"time"
)

// KillWait bounds how long a driver's Stop waits for a task after SIGKILL.
const KillWait = 30 * time.Second

// StopGracefully is the kill sequence every driver's Stop follows: send
// the task its kill signal (the task's kill_signal, else SIGTERM; signal
// names it when not empty), wait up to timeout for done, then SIGKILL and
// wait up to KillWait more. send delivers one signal to the task; a task
// already gone is not an error for it. name labels the errors.
func StopGracefully(name string, h *TaskHandle, done <-chan ExitResult, timeout time.Duration, signal string, send func(syscall.Signal) error) error {
	if signal == "" {
		signal = h.Config.KillSignal
	}
	sig, err := ParseSignal(signal)
	if err != nil {
		return err
	}
	if err := send(sig); err != nil {
		return fmt.Errorf("signalling %s: %w", name, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
	}
	if err := send(syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing %s: %w", name, err)
	}
	timer.Reset(KillWait)
	select {
	case <-done:
		return nil
	case <-timer.C:
		return fmt.Errorf("%s still running %v after SIGKILL", name, KillWait)
	}
}
